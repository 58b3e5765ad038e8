#include "traces/workload/workload_file.h"

#include <cmath>
#include <filesystem>

#include "common/error.h"
#include "common/input_file.h"
#include "schema/textproto_file.h"
#include "traces/gen/dataset_profiles.h"
#include "traces/gen/model_presets.h"
#include "traces/gen/shape_generator.h"

namespace ispsim::workload {
namespace {

std::string str(double v) {
  std::string s = std::to_string(v);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

void check_positive_rate(double rate, const std::string& field, const std::string& where) {
  if (!std::isfinite(rate) || rate <= 0)
    throw BadInput(where, field + " = " + str(rate) + ": must be a positive number of events per second");
}

void check_range(uint64_t value, uint64_t min, uint64_t max, const std::string& field, const std::string& where) {
  if (value < min || value > max)
    throw BadInput(where, field + " = " + std::to_string(value) + ": must be within " + std::to_string(min) + ".." +
                              std::to_string(max));
}

void check_arrivals(const Workload& w, const std::string& where) {
  switch (w.arrivals_case()) {
    case Workload::kPoisson:
      check_positive_rate(w.poisson().rate_per_s(), "poisson.rate_per_s", where);
      break;
    case Workload::kClosedLoop:
      check_range(w.closed_loop().users(), 1, kMaxRequests, "closed_loop.users", where);
      if (!std::isfinite(w.closed_loop().think_time_s()) || w.closed_loop().think_time_s() < 0)
        throw BadInput(where, "closed_loop.think_time_s = " + str(w.closed_loop().think_time_s()) +
                                  ": must be a non-negative number of seconds");
      break;
    case Workload::kArrivalList:
      if (w.arrival_list().file().empty()) throw BadInput(where, "arrival_list.file is missing");
      break;
    default:
      throw BadInput(where, "no arrival process: give one of poisson, closed_loop or arrival_list");
  }
  if (w.arrivals_case() != Workload::kArrivalList && w.requests() == 0)
    throw BadInput(where, "requests is missing: the number of requests in the stream, >= 1");
  if (w.requests() != 0) check_range(w.requests(), 1, kMaxRequests, "requests", where);
}

void check_ingestion(const Workload& w, const std::string& where) {
  if (!w.has_ingestion()) return;
  if (w.arrivals_case() == Workload::kClosedLoop)
    throw BadInput(where, "ingestion needs an open-loop arrival process (poisson or arrival_list): which documents "
                          "a request can retrieve depends on its arrival time");
  check_positive_rate(w.ingestion().rate_per_s(), "ingestion.rate_per_s", where);
  check_range(w.ingestion().capacity_documents(), w.documents(), kMaxStoreDocuments, "ingestion.capacity_documents",
              where);
}

void check_lengths(const Workload& w, const std::string& where) {
  if (w.has_document_tokens())
    check_range(w.document_tokens(), 1, tracegen::kMaxGeneratedContextTokens, "document_tokens", where);
  if (w.has_query_tokens()) check_range(w.query_tokens(), 1, tracegen::kMaxGeneratedQueryTokens, "query_tokens", where);
  if (w.has_answer_tokens())
    check_range(w.answer_tokens(), 0, tracegen::kMaxGeneratedAnswerTokens, "answer_tokens", where);
  const double ratio = w.recompute_ratio();
  if (!(ratio >= 0 && ratio <= 1)) throw BadInput(where, "recompute_ratio = " + str(ratio) + ": must be within 0..1");
  const double s = w.zipf_s();
  if (!std::isfinite(s) || s < 0) throw BadInput(where, "zipf_s = " + str(s) + ": must be a finite number >= 0");
}

}  // namespace

Workload resolve_workload(Workload w, const std::string& where) {
  if (w.model().empty()) throw BadInput(where, "model is missing (a preset: " + tracegen::model_preset_names() + ")");
  tracegen::find_model_preset(w.model(), where + ": model");
  if (w.dataset().empty())
    throw BadInput(where, "dataset is missing (a profile: " + tracegen::dataset_profile_keys() + ")");
  tracegen::find_dataset_profile(w.dataset(), where + ": dataset");
  if (w.documents() == 0) throw BadInput(where, "documents = 0: the corpus is empty (need >= 1 document)");
  check_range(w.documents(), 1, kMaxStoreDocuments, "documents", where);
  if (!w.has_seed()) w.set_seed(kDefaultSeed);
  if (!w.has_top_k()) w.set_top_k(tracegen::kDefaultTopK);
  if (!w.has_zipf_s()) w.set_zipf_s(kDefaultZipfS);
  if (!w.has_recompute_ratio()) w.set_recompute_ratio(tracegen::kDefaultRecomputeRatio);
  if (w.top_k() == 0 || w.top_k() > w.documents())
    throw BadInput(where, "top_k = " + std::to_string(w.top_k()) + ": must be within 1..documents (" +
                              std::to_string(w.documents()) + ")");
  check_range(w.top_k(), 1, tracegen::kMaxGeneratedDocs, "top_k", where);
  check_lengths(w, where);
  check_arrivals(w, where);
  check_ingestion(w, where);
  return w;
}

Workload load_workload(const std::string& path) {
  Workload w;
  schema::parse_textproto(read_input_file(path), path, w);
  return resolve_workload(std::move(w), path);
}

std::string arrival_list_path(const Workload& workload, const std::string& workload_path) {
  const std::filesystem::path file(workload.arrival_list().file());
  if (file.is_absolute()) return file.string();
  return (std::filesystem::path(workload_path).parent_path() / file).string();
}

}  // namespace ispsim::workload
