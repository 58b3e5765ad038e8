#include "kernels/rag/int_backend.h"

#include <string>

#include "common/error.h"
#include "kernels/int/gemv_int8.h"
#include "kernels/int/int_activation.h"
#include "kernels/int/int_norm.h"
#include "kernels/int/int_rope.h"
#include "kernels/int/requant.h"
#include "kernels/model/parallel.h"

namespace ispsim::rag {

using integer::saturate_int32;

IntBackend::IntBackend(const integer::IntegerModel& model, int tile_tokens) : m_(model) {
  shape_.heads = m_.heads;
  shape_.kv_heads = m_.kv_heads;
  shape_.head_dim = m_.head_dim;
  shape_.tile_tokens = tile_tokens;
}

void IntBackend::norm_rows(const integer::IntNorm& norm, int n, const int32_t* in, int32_t* out) {
  const int h = m_.hidden, bits = m_.int16_requant ? 16 : 8;
  integer::NormWeights w;
  w.gamma = norm.gamma.data();
  w.gamma_frac_bits = norm.gamma_frac_bits;
  w.eps_q40 = norm.eps_q40;
  w.beta = norm.beta.empty() ? nullptr : norm.beta.data();
  // Rows are independent: threads split them, each with its own scratch row.
  model::parallel_for(n, 1, [&](int r0, int r1) {
    std::vector<int32_t> tmp(static_cast<size_t>(h));
    for (int r = r0; r < r1; ++r) {
      const int shift = integer::requantize_token(in + static_cast<size_t>(r) * h, h, bits, tmp.data());
      int32_t* y = out + static_cast<size_t>(r) * h;
      if (norm.layer_norm)
        integer::int_layernorm(tmp.data(), h, m_.residual_frac - shift, w, y, norm.out_frac_bits);
      else
        integer::int_rmsnorm(tmp.data(), h, m_.residual_frac - shift, w, y, norm.out_frac_bits);
    }
  });
}

void IntBackend::quantize_rows(const int32_t* in, int n, int cols) {
  const int groups = (cols + m_.group - 1) / m_.group;
  xq_.resize(static_cast<size_t>(n) * cols);
  xs_.resize(static_cast<size_t>(n) * groups);
  model::parallel_for(n, 1, [&](int r0, int r1) {
    for (int r = r0; r < r1; ++r)
      integer::quantize_groups_int8(in + static_cast<size_t>(r) * cols, cols, m_.group,
                                    &xq_[static_cast<size_t>(r) * cols], &xs_[static_cast<size_t>(r) * groups]);
  });
}

void IntBackend::linear(const integer::IntLinear& w, int n, int32_t* out) {
  integer::int_linear(w, xq_.data(), xs_.data(), n, out);
}

void IntBackend::embed(const int* tokens, int n, Value* x) {
  const integer::IntLinear& e = m_.embedding;
  const int h = m_.hidden;
  for (int r = 0; r < n; ++r) {
    if (tokens[r] < 0 || tokens[r] >= m_.vocab)
      throw BadInput("engine", "token id " + std::to_string(tokens[r]) + " is outside the vocabulary of " +
                                   std::to_string(m_.vocab));
    const size_t row = static_cast<size_t>(tokens[r]);
    for (int k = 0; k < h; ++k)
      x[static_cast<size_t>(r) * h + k] = saturate_int32(integer::apply(e.scale[row * e.groups() + k / e.group], e.q[row * h + k]));
  }
}

void IntBackend::qkv(int layer, const Value* x, int n, const int* pos, Value* q, Value* k_pre, Value* v) {
  const integer::IntLayer& L = m_.layers[layer];
  const int h = m_.hidden, hd = m_.head_dim, qd = q_dim();
  xn_.resize(static_cast<size_t>(n) * h);
  norm_rows(L.attn_norm, n, x, xn_.data());
  quantize_rows(xn_.data(), n, h);
  linear(L.wq, n, q);
  linear(L.wk, n, k_pre);
  linear(L.wv, n, v);
  for (int r = 0; r < n; ++r)
    for (int hh = 0; hh < m_.heads; ++hh)
      integer::int_rope(q + static_cast<size_t>(r) * qd + hh * hd, hd, m_.rope.cos_row(pos[r]), m_.rope.sin_row(pos[r]));
}

void IntBackend::rotate_keys(const Value* k_pre, int pos, Value* k) const {
  const int hd = m_.head_dim;
  for (int i = 0; i < kv_dim(); ++i) k[i] = k_pre[i];
  for (int hh = 0; hh < m_.kv_heads; ++hh) integer::int_rope(k + hh * hd, hd, m_.rope.cos_row(pos), m_.rope.sin_row(pos));
}

void IntBackend::attention(int layer, const Value* q, const int* pos, int rows, const Value* k, const Value* v,
                           int cache_tokens, Value* out) const {
  IntAttentionFormat f;
  f.score_frac_bits = m_.layers[layer].q_frac + m_.layers[layer].k_frac;
  f.requant_bits = m_.int16_requant ? 16 : 8;
  int_fused_attention(shape_, f, q, pos, rows, k, v, cache_tokens, out);
}

void IntBackend::finish_layer(int layer, const Value* att, int n, Value* x) {
  const integer::IntLayer& L = m_.layers[layer];
  const int h = m_.hidden, f = m_.ffn;
  const size_t cells = static_cast<size_t>(n) * h;
  xn_.resize(cells);
  quantize_rows(att, n, q_dim());
  linear(L.wo, n, xn_.data());  // o_proj writes straight into the residual format
  for (size_t i = 0; i < cells; ++i) x[i] = saturate_int32(int64_t{x[i]} + xn_[i]);
  norm_rows(L.ffn_norm, n, x, xn_.data());
  quantize_rows(xn_.data(), n, h);
  gate_.resize(static_cast<size_t>(n) * f);
  up_.resize(static_cast<size_t>(n) * f);
  linear(L.w_gate, n, gate_.data());
  linear(L.w_up, n, up_.data());
  integer::int_swiglu(gate_.data(), L.gate_frac, up_.data(), L.up_frac, n * f, gate_.data(), L.hidden_frac);
  quantize_rows(gate_.data(), n, f);
  linear(L.w_down, n, xn_.data());
  for (size_t i = 0; i < cells; ++i) x[i] = saturate_int32(int64_t{x[i]} + xn_[i]);
}

void IntBackend::logits(const Value* x, std::vector<Value>& out) {
  xn_.resize(static_cast<size_t>(m_.hidden));
  norm_rows(m_.final_norm, 1, x, xn_.data());
  quantize_rows(xn_.data(), 1, m_.hidden);
  out.resize(static_cast<size_t>(m_.vocab));
  linear(m_.lm_head, 1, out.data());
}

int IntBackend::deviation_frac_bits(int layer) const {
  const integer::IntLayer& L = m_.layers[layer];
  return 2 * (L.k_frac > L.v_frac ? L.k_frac : L.v_frac);
}

IntBackend::Deviation IntBackend::deviation(int layer, const Value* k_a, const Value* k_b, const Value* v_a,
                                            const Value* v_b) const {
  const integer::IntLayer& L = m_.layers[layer];
  const int frac = L.k_frac > L.v_frac ? L.k_frac : L.v_frac;
  __int128 sk = 0, sv = 0;
  for (int i = 0; i < kv_dim(); ++i) {
    const __int128 dk = int64_t{k_a[i]} - k_b[i], dv = int64_t{v_a[i]} - v_b[i];
    sk += dk * dk;
    sv += dv * dv;
  }
  // Squares carry 2·k_frac (2·v_frac) fractional bits; bring both to 2·frac.
  const __int128 sum = (sk << (2 * (frac - L.k_frac))) + (sv << (2 * (frac - L.v_frac)));
  return sum > INT64_MAX ? INT64_MAX : static_cast<int64_t>(sum);
}

}  // namespace ispsim::rag
