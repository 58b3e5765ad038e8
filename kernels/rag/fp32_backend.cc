#include "kernels/rag/fp32_backend.h"

#include <algorithm>
#include <string>

#include "common/error.h"
#include "kernels/model/ops.h"

namespace ispsim::rag {
namespace {
const float* data_or_null(const std::vector<float>& v) { return v.empty() ? nullptr : v.data(); }
}  // namespace

Fp32Backend::Fp32Backend(const model::Model& model, int tile_tokens) : m_(model), c_(model.config) {
  shape_.heads = c_.num_heads;
  shape_.kv_heads = c_.num_kv_heads;
  shape_.head_dim = c_.head_dim;
  shape_.tile_tokens = tile_tokens;
  inv_freq_ = model::rope_inv_freq(c_);
  cos_.resize(c_.head_dim / 2);
  sin_.resize(c_.head_dim / 2);
}

void Fp32Backend::norm_rows(const std::vector<float>& weight, int n, const float* in, float* out) const {
  for (int r = 0; r < n; ++r)
    model::rms_norm(in + static_cast<size_t>(r) * c_.hidden_size, weight.data(), c_.hidden_size, c_.norm_eps,
                    out + static_cast<size_t>(r) * c_.hidden_size);
}

void Fp32Backend::embed(const int* tokens, int n, Value* x) {
  for (int r = 0; r < n; ++r) {
    if (tokens[r] < 0 || tokens[r] >= c_.vocab_size)
      throw BadInput("engine", "token id " + std::to_string(tokens[r]) + " is outside the vocabulary of " +
                                   std::to_string(c_.vocab_size));
    std::copy_n(&m_.weights.token_embedding[static_cast<size_t>(tokens[r]) * c_.hidden_size], c_.hidden_size,
                x + static_cast<size_t>(r) * c_.hidden_size);
  }
}

void Fp32Backend::qkv(int layer, const Value* x, int n, const int* pos, Value* q, Value* k_pre, Value* v) {
  const model::LayerWeights& L = m_.weights.layers[layer];
  const int h = c_.hidden_size, qd = c_.q_dim(), kvd = c_.kv_dim();
  xb_.resize(static_cast<size_t>(n) * h);
  norm_rows(L.attn_norm, n, x, xb_.data());
  model::linear(xb_.data(), n, h, L.wq.data(), data_or_null(L.bq), qd, q);
  model::linear(xb_.data(), n, h, L.wk.data(), data_or_null(L.bk), kvd, k_pre);
  model::linear(xb_.data(), n, h, L.wv.data(), data_or_null(L.bv), kvd, v);
  for (int r = 0; r < n; ++r) {
    model::rope_angles(inv_freq_, pos[r], cos_.data(), sin_.data());
    for (int hh = 0; hh < c_.num_heads; ++hh)
      model::apply_rope(q + static_cast<size_t>(r) * qd + hh * c_.head_dim, c_.head_dim, cos_.data(), sin_.data());
  }
}

void Fp32Backend::rotate_keys(const Value* k_pre, int pos, Value* k) const {
  std::vector<float> cs(c_.head_dim / 2), sn(c_.head_dim / 2);
  model::rope_angles(inv_freq_, pos, cs.data(), sn.data());
  std::copy_n(k_pre, c_.kv_dim(), k);
  for (int hh = 0; hh < c_.num_kv_heads; ++hh) model::apply_rope(k + hh * c_.head_dim, c_.head_dim, cs.data(), sn.data());
}

void Fp32Backend::attention(int, const Value* q, const int* pos, int rows, const Value* k, const Value* v,
                            int cache_tokens, Value* out) const {
  fused_attention(shape_, q, pos, rows, k, v, cache_tokens, out);
}

void Fp32Backend::finish_layer(int layer, const Value* att, int n, Value* x) {
  const model::LayerWeights& L = m_.weights.layers[layer];
  const int h = c_.hidden_size, f = c_.ffn_size;
  const size_t cells = static_cast<size_t>(n) * h;
  xb_.resize(cells);
  model::linear(att, n, c_.q_dim(), L.wo.data(), data_or_null(L.bo), h, xb_.data());
  for (size_t i = 0; i < cells; ++i) x[i] += xb_[i];
  norm_rows(L.ffn_norm, n, x, xb_.data());
  hb_.resize(static_cast<size_t>(n) * f);
  hb2_.resize(static_cast<size_t>(n) * f);
  model::linear(xb_.data(), n, h, L.w_up.data(), data_or_null(L.b_up), f, hb_.data());
  model::linear(xb_.data(), n, h, L.w_gate.data(), nullptr, f, hb2_.data());
  for (size_t i = 0; i < hb_.size(); ++i) hb_[i] *= model::silu(hb2_[i]);
  model::linear(hb_.data(), n, f, L.w_down.data(), data_or_null(L.b_down), h, xb_.data());
  for (size_t i = 0; i < cells; ++i) x[i] += xb_[i];
}

void Fp32Backend::logits(const Value* x, std::vector<Value>& out) {
  xb_.assign(x, x + c_.hidden_size);
  if (c_.final_norm) norm_rows(m_.weights.final_norm, 1, xb_.data(), xb_.data());
  out.resize(c_.vocab_size);
  model::linear(xb_.data(), 1, c_.hidden_size, m_.weights.output_matrix().data(), nullptr, c_.vocab_size, out.data());
}

Fp32Backend::Deviation Fp32Backend::deviation(int, const Value* k_a, const Value* k_b, const Value* v_a,
                                              const Value* v_b) const {
  double sum = 0.0;
  for (int i = 0; i < c_.kv_dim(); ++i) {
    const double dk = static_cast<double>(k_a[i]) - k_b[i], dv = static_cast<double>(v_a[i]) - v_b[i];
    sum += dk * dk + dv * dv;
  }
  return sum;
}

}  // namespace ispsim::rag
