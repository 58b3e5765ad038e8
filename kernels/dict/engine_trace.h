// Engine-emitted decode traces with dictionary ops: a prompt
// is prefilled densely and A tokens are decoded greedily with the compressed
// cache (decoder.h); what each step did — tokens encoded by the batch pursuit,
// compressed and window tokens attended, the share refined to K_high — becomes
// the FULL_PREFILL program of the shape generator's program builder
// (traces/gen/program_builder.h), with dict_encode and dict_attention ops in
// place of the dense decode attention.
#pragma once

#include <string>
#include <vector>

#include "kernels/dict/kv_cache.h"
#include "kernels/model/model.h"
#include "traces/gen/program_builder.h"

namespace ispsim::dict {

struct DictionaryRun {
  std::vector<int> answer;            // A greedy tokens; step s fed answer[s]
  tracegen::DictionaryDecode decode;  // what every step did, per layer
};

// Prefill of `prompt`, then A = answer_tokens decode steps (step s feeds the
// s-th greedy token, as the program builder's decode step s does).
DictionaryRun run_dictionary_decode(const model::Model& model, const std::vector<Dictionary>& dicts,
                                    const CacheSettings& settings, int atoms, const std::vector<int>& prompt,
                                    int answer_tokens);

// The request's dictionary settings for the trace header: the cache settings,
// M atoms, INT8 dictionaries, 16-bit indices, FP16 coefficients. Without
// hierarchy k_low = k_high and refine_fraction = 1 (every token at K_high).
trace::DictionarySettings trace_settings(const CacheSettings& settings, int atoms);

// Writes the FULL_PREFILL program of a request (documents of doc_tokens tokens,
// then query_tokens query tokens: the prompt of `run`) decoded as `run` did, to
// `path` (atomically, through TraceWriter). The model shape is
// rag::model_shape()'s FP16 shape: the trace says what is computed.
void write_dictionary_trace(const std::string& path, const trace::ModelShape& shape,
                            const std::vector<uint64_t>& doc_tokens, uint64_t query_tokens, const DictionaryRun& run,
                            const trace::Producer& producer);

}  // namespace ispsim::dict
