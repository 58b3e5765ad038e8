#include "kernels/dict/accounting.h"

namespace ispsim::dict {

void ByteTally::add(const StepReads& r, int kv_heads, int head_dim, const EntryBits& b) {
  const uint64_t per_token = static_cast<uint64_t>(kv_heads) * head_dim * 2;  // K and V elements
  dense_bits += (r.window_tokens + r.compressed_tokens) * per_token * b.dense_bits;
  window_bits += r.window_tokens * per_token * b.window_bits;
  code_bits += (r.key_entries + r.value_entries) * static_cast<uint64_t>(b.index_bits + b.coef_bits);
  ++steps;
}

void ByteTally::add(const ByteTally& o) {
  dense_bits += o.dense_bits;
  window_bits += o.window_bits;
  code_bits += o.code_bits;
  steps += o.steps;
}

double ByteTally::ratio() const {
  const uint64_t loaded = window_bits + code_bits;
  return loaded ? static_cast<double>(dense_bits) / static_cast<double>(loaded) : 0.0;
}

std::string accounting_formula(const EntryBits& b) {
  return "ratio = sum over decode steps and layers of dense / loaded, dictionary excluded\n"
         "  dense  = T * H_kv * d * 2 * " + std::to_string(b.dense_bits) + " bit / 8   (T tokens in the cache)\n"
         "  loaded = W_t * H_kv * d * 2 * " + std::to_string(b.window_bits) +
         " bit / 8   (dense window, W_t tokens)\n"
         "         + (E_K + E_V) * (" + std::to_string(b.index_bits) + " + " + std::to_string(b.coef_bits) +
         ") bit / 8   (index, coefficient pairs read: K_high per token, or K_low / K_high with hierarchy)\n";
}

}  // namespace ispsim::dict
