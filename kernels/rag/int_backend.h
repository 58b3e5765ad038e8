// The integer engine's forward pass cut into the steps CacheBlend needs (see
// fp32_backend.h), computed with kernels/int's operators exactly as
// integer::IntegerEngine computes them: every operator works row by row, so a
// row gets bit-identical numbers whichever other rows are computed with it.
// No floating point (the source is compiled a second time under
// -mgeneral-regs-only).
#pragma once

#include <cstdint>
#include <cstddef>
#include <vector>

#include "kernels/int/fixed_point.h"
#include "kernels/int/int_engine.h"
#include "kernels/rag/int_fused_attention.h"

namespace ispsim::rag {

class IntBackend {
 public:
  using Value = int32_t;      // residual at residual_frac, q/k/v at q/k/v_frac, logits at logits_frac
  using Deviation = int64_t;  // at deviation_frac_bits(layer), saturated at INT64_MAX

  IntBackend(const integer::IntegerModel& model, int tile_tokens);

  int hidden() const { return m_.hidden; }
  int q_dim() const { return m_.heads * m_.head_dim; }
  int kv_dim() const { return m_.kv_heads * m_.head_dim; }
  int vocab() const { return m_.vocab; }
  int layers() const { return static_cast<int>(m_.layers.size()); }

  void embed(const int* tokens, int n, Value* x);
  void qkv(int layer, const Value* x, int n, const int* pos, Value* q, Value* k_pre, Value* v);
  void rotate_keys(const Value* k_pre, int pos, Value* k) const;
  void attention(int layer, const Value* q, const int* pos, int rows, const Value* k, const Value* v, int cache_tokens,
                 Value* out) const;
  void finish_layer(int layer, const Value* att, int n, Value* x);
  void logits(const Value* x, std::vector<Value>& out);
  // ||Δk||² + ||Δv||² with both brought to 2^-max(k_frac, v_frac) units.
  Deviation deviation(int layer, const Value* k_a, const Value* k_b, const Value* v_a, const Value* v_b) const;
  int deviation_frac_bits(int layer) const;

 private:
  void norm_rows(const integer::IntNorm& norm, int n, const int32_t* in, int32_t* out);
  void quantize_rows(const int32_t* in, int n, int cols);
  void linear(const integer::IntLinear& w, int n, int32_t* out);

  const integer::IntegerModel& m_;
  AttentionShape shape_;
  std::vector<int32_t> xn_, gate_, up_;
  std::vector<int8_t> xq_;
  std::vector<integer::Dyadic> xs_;
};

}  // namespace ispsim::rag
