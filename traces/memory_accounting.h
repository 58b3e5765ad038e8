// The memory accounting of one LLM request on the host: what has to sit in the
// DRAM budget for a model to serve a request of N tokens. One pure function set
// (no SystemC), used by `ispsim trace gen --budget-table` and by the host DRAM
// model of every platform (models/host/host_memory: the staging capacity left
// for KV is what this accounting leaves over).
//
//   resident bytes(N) = weights + workspace + kv_copies x N x KV bytes per token
//   weights           = parameters(shape) x weight_bits / 8        (see model_parameters)
//   KV bytes per token = layers x 2 (K and V) x kv_heads x head_dim x kv_bits / 8
//   max tokens        = floor((budget - weights - workspace) / (kv_copies x KV bytes per token))
//
// The physical accounting (the default, what the platforms use) holds one copy
// of the KV cache. `kv_copies = 2` is offered because it is what reproduces
// MemLLM's Table II reading "OPT-350M tops out at 40k tokens in 8 GB" (Sec. III-A):
// with no workspace, 2 copies give 40,070 tokens for OPT-350M in 8 GiB, 1 copy
// gives 80,140 (69,218 with the platforms' 1 GiB workspace). A second copy is
// physically plausible in a framework that grows the cache by concatenation (the
// old and the new tensor are alive together) or that keeps the loaded
// precomputed KV next to the blended one; the paper does not say which, so it is
// an option, not the default.
#pragma once

#include <cstdint>
#include <string>

#include "traces/trace.pb.h"

namespace ispsim::accounting {

struct MemoryAccounting {
  // Copies of the KV cache held at once (1 = physical; 2 = MemLLM Table II's 40k reading).
  uint32_t kv_copies = 1;
  // DRAM that is neither weights nor KV: CUDA context, library workspaces,
  // activations. The platforms take it from host.workspace_bytes.
  uint64_t workspace_bytes = 0;
  // The LM head shares the embedding matrix (no extra vocab x hidden weights).
  bool tied_lm_head = true;
};

// Model parameters from the shape:
//   token embedding          vocab x hidden
//   OPT learned positions    2050 x hidden (max_position_embeddings 2048 + offset 2)
//   per layer  Q/K/V         hidden x (heads + 2 kv_heads) head_dim  (+ bias for Qwen2, OPT)
//              output proj   heads head_dim x hidden                 (+ bias for OPT)
//              FFN           Llama/Qwen2: 3 x hidden x ffn (gate, up, down);
//                            OPT: 2 x hidden x ffn (+ ffn + hidden biases)
//              norms         Llama/Qwen2: 2 x hidden (RMSNorm); OPT: 4 x hidden (LayerNorm)
//   final norm               hidden (OPT: 2 x hidden)
//   LM head                  vocab x hidden unless tied (OPT always ties)
uint64_t model_parameters(const trace::ModelShape& shape, bool tied_lm_head);
// model_parameters x weight_bits / 8, rounded up.
uint64_t model_weight_bytes(const trace::ModelShape& shape, bool tied_lm_head);
// layers x 2 x kv_heads x head_dim x kv_bits / 8, rounded up (bytes of one token's K and V).
uint64_t kv_bytes_per_token(const trace::ModelShape& shape);

// Weights + workspace: what is resident before any KV.
uint64_t fixed_bytes(const trace::ModelShape& shape, const MemoryAccounting& accounting);
// Bytes left for KV (all copies) in `budget_bytes`; 0 if the weights and workspace do not fit.
uint64_t kv_budget_bytes(uint64_t budget_bytes, const trace::ModelShape& shape, const MemoryAccounting& accounting);
// Most tokens whose KV (all copies) fits next to the weights and workspace.
uint64_t max_tokens(uint64_t budget_bytes, const trace::ModelShape& shape, const MemoryAccounting& accounting);
// Weights + workspace + kv_copies x tokens x KV bytes per token.
uint64_t request_bytes(uint64_t tokens, const trace::ModelShape& shape, const MemoryAccounting& accounting);

}  // namespace ispsim::accounting
