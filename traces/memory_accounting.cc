#include "traces/memory_accounting.h"

namespace ispsim::accounting {

uint64_t model_parameters(const trace::ModelShape& s, bool tied_lm_head) {
  const bool opt = s.family() == trace::ARCHITECTURE_OPT;
  const bool qkv_bias = opt || s.family() == trace::ARCHITECTURE_QWEN2;
  const uint64_t hidden = s.hidden(), ffn = s.ffn_dim(), vocab = s.vocab();
  const uint64_t q_width = uint64_t(s.heads()) * s.head_dim();
  const uint64_t qkv_width = uint64_t(s.heads() + 2ull * s.kv_heads()) * s.head_dim();

  uint64_t per_layer = hidden * qkv_width + (qkv_bias ? qkv_width : 0);  // Q/K/V
  per_layer += q_width * hidden + (opt ? hidden : 0);                     // output projection
  per_layer += opt ? 2 * hidden * ffn + ffn + hidden : 3 * hidden * ffn;  // FFN
  per_layer += opt ? 4 * hidden : 2 * hidden;                             // norms

  uint64_t total = vocab * hidden;     // token embedding
  if (opt) total += 2050 * hidden;     // learned positions (2048 + offset 2)
  total += per_layer * s.layers();
  total += opt ? 2 * hidden : hidden;  // final norm
  if (!(tied_lm_head || opt)) total += vocab * hidden;
  return total;
}

uint64_t model_weight_bytes(const trace::ModelShape& shape, bool tied_lm_head) {
  return (model_parameters(shape, tied_lm_head) * shape.weight_bits() + 7) / 8;
}

uint64_t kv_bytes_per_token(const trace::ModelShape& s) {
  return (uint64_t(s.layers()) * 2 * s.kv_heads() * s.head_dim() * s.kv_bits() + 7) / 8;
}

uint64_t fixed_bytes(const trace::ModelShape& shape, const MemoryAccounting& accounting) {
  return model_weight_bytes(shape, accounting.tied_lm_head) + accounting.workspace_bytes;
}

uint64_t kv_budget_bytes(uint64_t budget_bytes, const trace::ModelShape& shape, const MemoryAccounting& accounting) {
  const uint64_t fixed = fixed_bytes(shape, accounting);
  return fixed < budget_bytes ? budget_bytes - fixed : 0;
}

uint64_t max_tokens(uint64_t budget_bytes, const trace::ModelShape& shape, const MemoryAccounting& accounting) {
  return kv_budget_bytes(budget_bytes, shape, accounting) / (accounting.kv_copies * kv_bytes_per_token(shape));
}

uint64_t request_bytes(uint64_t tokens, const trace::ModelShape& shape, const MemoryAccounting& accounting) {
  return fixed_bytes(shape, accounting) + accounting.kv_copies * tokens * kv_bytes_per_token(shape);
}

}  // namespace ispsim::accounting
