// Engine-emitted traces: one RAG request run on the
// functional engine, written as a trace with FULL_PREFILL, PRECOMPUTED_BLEND
// and PRECOMPUTED_BLEND_FUSED through the shape generator's program builder
// (traces/gen/program_builder.h), so engine and generator traces have the same
// op structure. What the engine contributes: the real token counts of every
// document, of the query and of the answer, and the real per-layer HKVD masks
// CacheBlend selected from the model's activations.
//
// The hardware shape is the model's config.json shape in FP16 (weights, KV and
// activations 16 bits, contract4.md), whatever engine (FP32 or integer) chose
// the masks: the trace says what is computed, the platform how.
#pragma once

#include <string>
#include <vector>

#include "kernels/model/model.h"
#include "kernels/rag/blend.h"
#include "traces/gen/program_builder.h"
#include "traces/trace.pb.h"

namespace ispsim::rag {

// The model's shape as the trace describes it (family, layers, hidden, heads,
// KV heads, head dim, FFN, vocab from the config), FP16 bit widths, `name`.
trace::ModelShape model_shape(const model::Config& config, const std::string& name);

// The full prefill (reference) and the blend of one request.
struct EngineRun {
  BlendOutput full;
  BlendOutput blend;
};

// Runs full_prefill and blend on the same prompt; both decode
// options.answer_tokens tokens. BadInput as blend() does, and when the blend
// selects no HKVD token (the blend programs need H >= 1: raise --ratio).
EngineRun run_request(const RagModel& engine, const KvStore& store, const std::vector<std::string>& doc_ids,
                      const std::vector<int>& query_tokens, const BlendOptions& options);

// The program builder's request for `run`: documents' token counts, query and
// answer token counts, the ratio, and the blend's masks (layers 1..L-1).
tracegen::BlendRequest blend_request(const trace::ModelShape& shape, const EngineRun& run, double ratio);

// Producer record: PRODUCER_FUNCTIONAL_ENGINE, `tool`, then `settings` in order.
trace::Producer engine_producer(const std::string& tool, const std::vector<std::pair<std::string, std::string>>& settings);

// Writes the trace of all three programs to `path` (through AtomicFile, via
// TraceWriter); the request's documents are named by doc_ids.
void write_engine_trace(const std::string& path, const tracegen::BlendRequest& request,
                        const std::vector<std::string>& doc_ids, const trace::Producer& producer);

}  // namespace ispsim::rag
