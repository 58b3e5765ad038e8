#include "kernels/rag/trace/teacher_forcing.h"

#include <stdexcept>

namespace ispsim::rag {

TeacherForced teacher_forced_blend(const RagModel& engine, const KvStore& store, const std::vector<std::string>& doc_ids,
                               const std::vector<int>& query_tokens, const std::vector<int>& forced,
                               const BlendOptions& options) {
  if (forced.empty()) throw std::invalid_argument("teacher_forced_blend: no answer tokens");
  BlendOptions one = options;
  one.answer_tokens = 1;
  TeacherForced out;
  out.rows.reserve(forced.size());
  std::vector<int> query = query_tokens;
  for (size_t s = 0; s < forced.size(); ++s) {
    if (s > 0) query.push_back(forced[s - 1]);
    BlendOutput run = blend(engine, store, doc_ids, query, one);
    if (s == 0) out.hkvd_count = run.hkvd_count();
    out.rows.push_back(std::move(run.logits.at(0)));
  }
  return out;
}

}  // namespace ispsim::rag
