// Teacher-forced blended logits for the quality report (quality.h).
//
// Row s of the report compares next-token distributions after the prompt plus
// the FULL prefill's first s answer tokens. The blend API decodes its own
// greedy answer, so row s of the blend is obtained by blending the prompt
// whose query is extended by those s tokens and taking its first logits row.
// This is the same computation as decoding them: CacheBlend always recomputes
// query tokens in full (at every layer, over the merged KV with the causal
// mask), exactly as a decode step computes a new token, and the HKVD selection
// depends only on the context tokens (layer 1 of a context token sees no later
// token). tests/kernels/rag/trace checks it: without forcing, these rows equal
// the blend's own decode rows (FP32 within 1e-5, integer path bit-exact).
#pragma once

#include <string>
#include <vector>

#include "kernels/rag/blend.h"
#include "kernels/rag/trace/quality.h"

namespace ispsim::rag {

struct TeacherForced {
  LogitRows rows;       // forced.size() rows: row s = blend logits after the prompt + forced[0..s)
  int hkvd_count = 0;   // context tokens recomputed (the same in every run: selection ignores the query)
};

// forced.size() >= 1 runs of blend(); options.answer_tokens is ignored (each run decodes one row).
TeacherForced teacher_forced_blend(const RagModel& engine, const KvStore& store, const std::vector<std::string>& doc_ids,
                               const std::vector<int>& query_tokens, const std::vector<int>& forced,
                               const BlendOptions& options);

}  // namespace ispsim::rag
