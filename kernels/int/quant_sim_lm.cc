#include "kernels/int/quant_sim_lm.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "common/error.h"
#include "kernels/int/quantize.h"
#include "kernels/model/ops.h"

namespace ispsim::integer {
namespace {
using model::Config;

const float* data_or_null(const std::vector<float>& v) { return v.empty() ? nullptr : v.data(); }

void track_max(float& m, const float* x, size_t n) {
  for (size_t i = 0; i < n; ++i) m = std::max(m, std::fabs(x[i]));
}
}  // namespace

QuantSimLm::QuantSimLm(const model::Model& model, SimSettings settings, int capacity, CalibrationStats* record)
    : model_(model), settings_(std::move(settings)), record_(record) {
  const Config& c = model.config;
  const bool llama_like = c.norm == model::NormKind::kRms && c.ffn == model::FfnKind::kSwiGlu &&
                          c.positions == model::PositionKind::kRope;
  const bool opt_like = c.norm == model::NormKind::kLayer && c.ffn == model::FfnKind::kRelu &&
                        c.positions == model::PositionKind::kLearned;
  if (!(llama_like || opt_like) || !c.norm_before || !c.final_norm)
    throw BadInput(model.dir, std::string("the quantized engines support pre-norm Llama, Qwen2 and OPT models; this ") +
                                  model::family_name(c.family) + " model is not one");
  capacity_ = capacity > 0 ? capacity : c.max_positions;
  if (c.positions == model::PositionKind::kLearned && capacity_ > c.max_positions)
    throw BadInput("engine", "context of " + std::to_string(capacity_) + " tokens exceeds the " +
                                 std::to_string(c.max_positions) + " learned positions of the model");
  if (c.positions == model::PositionKind::kRope) inv_freq_ = model::rope_inv_freq(c);
  const size_t cache = static_cast<size_t>(c.num_layers) * capacity_ * c.kv_dim();
  k_cache_.assign(cache, 0.0f);
  v_cache_.assign(cache, 0.0f);
  if (record_ && record_->layers.empty()) {
    record_->layers.resize(c.num_layers);
    for (LayerStats& s : record_->layers) {
      s.channel_max[kAttnIn].assign(c.hidden_size, 0.0f);
      s.channel_max[kOutIn].assign(c.q_dim(), 0.0f);
      s.channel_max[kFfnIn].assign(c.hidden_size, 0.0f);
      s.channel_max[kDownIn].assign(c.ffn_size, 0.0f);
    }
  }
}

// Records statistics of a linear input and returns it fake-quantized (a copy).
const float* QuantSimLm::quantized_input(const float* in, int n, int cols, int layer, int slot) {
  if (record_) {
    const bool head = layer < 0;
    for (int r = 0; r < n; ++r)
      for (int j = 0; j < cols; ++j) {
        const float a = std::fabs(in[static_cast<size_t>(r) * cols + j]);
        if (head) {
          record_->head_in_max = std::max(record_->head_in_max, a);
        } else {
          LayerStats& s = record_->layers[layer];
          s.channel_max[slot][j] = std::max(s.channel_max[slot][j], a);
          s.input_max[slot] = std::max(s.input_max[slot], a);
        }
      }
  }
  if (!settings_.quantize_activations) return in;
  xq_.assign(in, in + static_cast<size_t>(n) * cols);
  const float static_scale =
      settings_.group > 0 ? 0.0f : (layer < 0 ? settings_.head_static_scale : settings_.static_scales[layer][slot]);
  for (int r = 0; r < n; ++r) fake_quantize_row(&xq_[static_cast<size_t>(r) * cols], cols, settings_.group, static_scale);
  return xq_.data();
}

void QuantSimLm::norm_rows(const std::vector<float>& weight, const std::vector<float>& bias, int n, const float* in,
                           float* out) {
  const Config& c = model_.config;
  for (int r = 0; r < n; ++r) {
    const float* x = in + static_cast<size_t>(r) * c.hidden_size;
    float* y = out + static_cast<size_t>(r) * c.hidden_size;
    if (c.norm == model::NormKind::kRms)
      model::rms_norm(x, weight.data(), c.hidden_size, c.norm_eps, y);
    else
      model::layer_norm(x, weight.data(), bias.data(), c.hidden_size, c.norm_eps, y);
  }
}

void QuantSimLm::attention(int layer, int n) {
  const Config& c = model_.config;
  const model::LayerWeights& L = model_.weights.layers[layer];
  const int h = c.hidden_size, qd = c.q_dim(), kvd = c.kv_dim(), hd = c.head_dim, half = hd / 2;
  norm_rows(L.attn_norm, L.attn_norm_bias, n, x_.data(), xb_.data());
  const float* in = quantized_input(xb_.data(), n, h, layer, kAttnIn);
  model::linear(in, n, h, L.wq.data(), data_or_null(L.bq), qd, q_.data());
  model::linear(in, n, h, L.wk.data(), data_or_null(L.bk), kvd, k_.data());
  model::linear(in, n, h, L.wv.data(), data_or_null(L.bv), kvd, v_.data());
  const float inv_sqrt = 1.0f / std::sqrt(static_cast<float>(hd));
  const size_t base = static_cast<size_t>(layer) * capacity_ * kvd;
  for (int r = 0; r < n; ++r) {
    float* q = &q_[static_cast<size_t>(r) * qd];
    float* k = &k_[static_cast<size_t>(r) * kvd];
    if (c.positions == model::PositionKind::kRope) {
      for (int hh = 0; hh < c.num_heads; ++hh) model::apply_rope(q + hh * hd, hd, &cos_[r * half], &sin_[r * half]);
      for (int hh = 0; hh < c.num_kv_heads; ++hh) model::apply_rope(k + hh * hd, hd, &cos_[r * half], &sin_[r * half]);
    }
    for (int i = 0; i < qd; ++i) q[i] *= inv_sqrt;  // the integer path folds 1/sqrt(d) into W_q
    std::copy_n(k, kvd, &k_cache_[base + static_cast<size_t>(position_ + r) * kvd]);
    std::copy_n(&v_[static_cast<size_t>(r) * kvd], kvd, &v_cache_[base + static_cast<size_t>(position_ + r) * kvd]);
  }
  if (record_) {
    LayerStats& s = record_->layers[layer];
    track_max(s.q_max, q_.data(), static_cast<size_t>(n) * qd);
    track_max(s.k_max, k_.data(), static_cast<size_t>(n) * kvd);
    track_max(s.v_max, v_.data(), static_cast<size_t>(n) * kvd);
  }
  const int group = c.num_heads / c.num_kv_heads;
  for (int r = 0; r < n; ++r) {
    const int pos = position_ + r;
    for (int hh = 0; hh < c.num_heads; ++hh) {
      const float* q = &q_[static_cast<size_t>(r) * qd + hh * hd];
      const size_t off = base + static_cast<size_t>(hh / group) * hd;
      for (int t = 0; t <= pos; ++t) scores_[t] = model::dot(q, &k_cache_[off + static_cast<size_t>(t) * kvd], hd);
      model::softmax(scores_.data(), pos + 1);
      float* out = &att_[static_cast<size_t>(r) * qd + hh * hd];
      std::fill(out, out + hd, 0.0f);
      for (int t = 0; t <= pos; ++t) {
        const float* v = &v_cache_[off + static_cast<size_t>(t) * kvd];
        for (int i = 0; i < hd; ++i) out[i] += scores_[t] * v[i];
      }
    }
  }
  in = quantized_input(att_.data(), n, qd, layer, kOutIn);
  model::linear(in, n, qd, L.wo.data(), data_or_null(L.bo), h, xb_.data());
  for (size_t i = 0; i < static_cast<size_t>(n) * h; ++i) x_[i] += xb_[i];
  if (record_) track_max(record_->residual_max, x_.data(), static_cast<size_t>(n) * h);
}

void QuantSimLm::ffn(int layer, int n) {
  const Config& c = model_.config;
  const model::LayerWeights& L = model_.weights.layers[layer];
  const int h = c.hidden_size, f = c.ffn_size;
  const size_t cells = static_cast<size_t>(n) * f;
  norm_rows(L.ffn_norm, L.ffn_norm_bias, n, x_.data(), xb_.data());
  const float* in = quantized_input(xb_.data(), n, h, layer, kFfnIn);
  const bool swiglu = c.ffn == model::FfnKind::kSwiGlu;
  if (swiglu) model::linear(in, n, h, L.w_gate.data(), nullptr, f, hb2_.data());
  model::linear(in, n, h, L.w_up.data(), data_or_null(L.b_up), f, hb_.data());
  if (record_) {
    if (swiglu) track_max(record_->layers[layer].gate_max, hb2_.data(), cells);
    track_max(record_->layers[layer].up_max, hb_.data(), cells);
  }
  if (swiglu)
    for (size_t i = 0; i < cells; ++i) hb_[i] *= model::silu(hb2_[i]);
  else
    for (size_t i = 0; i < cells; ++i) hb_[i] = std::max(hb_[i], 0.0f);
  in = quantized_input(hb_.data(), n, f, layer, kDownIn);
  model::linear(in, n, f, L.w_down.data(), data_or_null(L.b_down), h, xb_.data());
  for (size_t i = 0; i < static_cast<size_t>(n) * h; ++i) x_[i] += xb_[i];
  if (record_) track_max(record_->residual_max, x_.data(), static_cast<size_t>(n) * h);
}

void QuantSimLm::forward(const int* tokens, int n, bool all_logits, std::vector<float>& logits) {
  const Config& c = model_.config;
  if (n <= 0) throw BadInput("engine", "forward() needs at least one token");
  if (position_ + n > capacity_)
    throw BadInput("engine", "context of " + std::to_string(position_ + n) + " tokens exceeds the KV cache of " +
                                 std::to_string(capacity_) + " tokens");
  const size_t rows = static_cast<size_t>(n);
  const int half = c.head_dim / 2;
  x_.resize(rows * c.hidden_size);
  xb_.resize(rows * std::max(c.hidden_size, c.q_dim()));
  q_.resize(rows * c.q_dim());
  k_.resize(rows * c.kv_dim());
  v_.resize(rows * c.kv_dim());
  att_.resize(rows * c.q_dim());
  hb_.resize(rows * c.ffn_size);
  hb2_.resize(rows * c.ffn_size);
  scores_.resize(capacity_);
  cos_.resize(rows * half);
  sin_.resize(rows * half);
  if (c.positions == model::PositionKind::kRope)
    for (int r = 0; r < n; ++r) model::rope_angles(inv_freq_, position_ + r, &cos_[r * half], &sin_[r * half]);
  for (int r = 0; r < n; ++r) {
    if (tokens[r] < 0 || tokens[r] >= c.vocab_size)
      throw BadInput("engine", "token id " + std::to_string(tokens[r]) + " is outside the vocabulary of " +
                                   std::to_string(c.vocab_size));
    float* x = &x_[static_cast<size_t>(r) * c.hidden_size];
    std::copy_n(&model_.weights.token_embedding[static_cast<size_t>(tokens[r]) * c.hidden_size], c.hidden_size, x);
    if (c.positions == model::PositionKind::kLearned) {
      const float* p = &model_.weights.position_embedding[static_cast<size_t>(position_ + r + model::kOptPositionOffset) *
                                                          c.hidden_size];
      for (int i = 0; i < c.hidden_size; ++i) x[i] += p[i];
    }
  }
  if (record_) {
    track_max(record_->residual_max, x_.data(), rows * c.hidden_size);
    record_->tokens += n;
  }
  for (int l = 0; l < c.num_layers; ++l) {
    attention(l, n);
    ffn(l, n);
  }
  position_ += n;
  const int first = all_logits ? 0 : n - 1, out_rows = n - first;
  float* x = &x_[static_cast<size_t>(first) * c.hidden_size];
  norm_rows(model_.weights.final_norm, model_.weights.final_norm_bias, out_rows, x, x);
  const float* in = quantized_input(x, out_rows, c.hidden_size, -1, 0);
  logits.resize(static_cast<size_t>(out_rows) * c.vocab_size);
  model::linear(in, out_rows, c.hidden_size, model_.weights.output_matrix().data(), nullptr, c.vocab_size, logits.data());
  if (record_) track_max(record_->logits_max, logits.data(), logits.size());
}

}  // namespace ispsim::integer
