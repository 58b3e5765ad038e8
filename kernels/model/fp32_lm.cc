#include "kernels/model/fp32_lm.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "common/error.h"
#include "kernels/model/attention_simd.h"
#include "kernels/model/linear_simd.h"
#include "kernels/model/ops.h"
#include "kernels/model/parallel.h"

namespace ispsim::model {

namespace {
const float* data_or_null(const std::vector<float>& v) { return v.empty() ? nullptr : v.data(); }
}  // namespace

Fp32Lm::Fp32Lm(const Model& model, int capacity) : model_(model) {
  const Config& c = model.config;
  capacity_ = capacity > 0 ? capacity : c.max_positions;
  // Learned position tables end at max_positions; rotary ones extrapolate (as transformers does).
  if (c.positions == PositionKind::kLearned && capacity_ > c.max_positions)
    throw BadInput("engine", "context of " + std::to_string(capacity_) + " tokens exceeds the " +
                                 std::to_string(c.max_positions) + " learned positions of the model");
  if (c.positions == PositionKind::kRope) inv_freq_ = rope_inv_freq(c);
  k_cache_.resize(c.num_layers);
  v_cache_.resize(c.num_layers);
}

void Fp32Lm::norm_rows(const std::vector<float>& weight, const std::vector<float>& bias, int n, const float* in,
                       float* out) {
  const Config& c = model_.config;
  for (int r = 0; r < n; ++r) {
    const float* x = in + static_cast<size_t>(r) * c.hidden_size;
    float* y = out + static_cast<size_t>(r) * c.hidden_size;
    if (c.norm == NormKind::kRms)
      rms_norm(x, weight.data(), c.hidden_size, c.norm_eps, y);
    else
      layer_norm(x, weight.data(), bias.data(), c.hidden_size, c.norm_eps, y);
  }
}

void Fp32Lm::embed(const int* tokens, int n) {
  const Config& c = model_.config;
  const Weights& w = model_.weights;
  for (int r = 0; r < n; ++r) {
    if (tokens[r] < 0 || tokens[r] >= c.vocab_size)
      throw BadInput("engine", "token id " + std::to_string(tokens[r]) + " is outside the vocabulary of " +
                                   std::to_string(c.vocab_size));
    float* x = &x_[static_cast<size_t>(r) * c.hidden_size];
    std::copy_n(&w.token_embedding[static_cast<size_t>(tokens[r]) * c.hidden_size], c.hidden_size, x);
    if (c.positions == PositionKind::kLearned) {
      const float* p = &w.position_embedding[static_cast<size_t>(position_ + r + kOptPositionOffset) * c.hidden_size];
      for (int i = 0; i < c.hidden_size; ++i) x[i] += p[i];
    }
  }
}

// Causal attention of one query row (at absolute position pos) and head h
// over the cache [0, pos]; head h reads KV head h / (num_heads / num_kv_heads)
// (GQA). `scores` holds pos + 1 floats.
void Fp32Lm::attend(int layer, int row, int pos, int h, float* scores) {
  const Config& c = model_.config;
  const int hd = c.head_dim, group = c.num_heads / c.num_kv_heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const std::vector<float>& k_cache = k_cache_[layer];
  const std::vector<float>& v_cache = v_cache_[layer];
  const float* q = &q_[static_cast<size_t>(row) * c.q_dim() + h * hd];
  const size_t kv_off = static_cast<size_t>(h / group) * hd;
  for (int t = 0; t <= pos; ++t) scores[t] = dot(q, &k_cache[kv_off + static_cast<size_t>(t) * c.kv_dim()], hd) * scale;
  softmax(scores, pos + 1);
  float* out = &att_out_[static_cast<size_t>(row) * c.q_dim() + h * hd];
  std::fill(out, out + hd, 0.0f);
  for (int t = 0; t <= pos; ++t) {
    const float* v = &v_cache[kv_off + static_cast<size_t>(t) * c.kv_dim()];
    const float a = scores[t];
    for (int i = 0; i < hd; ++i) out[i] += a * v[i];
  }
}

// The attention of all n new rows above the scalar level, flash-attention
// style. Work items are (KV head, block of query rows); the block's queries
// (its rows × the heads sharing the KV head) meet the cached keys in blocks of
// kKeyBlock: a tile of scores, the online Softmax per query (running max and
// sum, earlier outputs rescaled when the max grows), and the values weighted
// into the outputs, each value loaded once for all queries. Key blocks start
// at absolute positions and a query's operations depend only on its own keys,
// so a batch gives the same bits as one token at a time.
void Fp32Lm::attend_blocks(int layer, int n, Isa isa) {
  const Config& c = model_.config;
  const int hd = c.head_dim, group = c.num_heads / c.num_kv_heads, qd = c.q_dim();
  const int rows_per_block = std::max(1, 16 / group);
  const int blocks = (n + rows_per_block - 1) / rows_per_block;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  parallel_for(blocks * c.num_kv_heads, 1, [&](int begin, int end) {
    thread_local FlashScratch s;
    for (int item = begin; item < end; ++item) {
      const int g = item % c.num_kv_heads, r0 = item / c.num_kv_heads * rows_per_block;
      const int r1 = std::min(n, r0 + rows_per_block), nq = (r1 - r0) * group;
      s.queries.resize(static_cast<size_t>(nq) * hd);
      s.len.resize(nq);
      for (int j = 0; j < nq; ++j) {
        const int r = r0 + j / group, head = g * group + j % group;
        std::copy_n(&q_[static_cast<size_t>(r) * qd + head * hd], hd, &s.queries[static_cast<size_t>(j) * hd]);
        s.len[j] = position_ + r + 1;
      }
      flash_attend(layer, g, nq, scale, isa, s);
      for (int j = 0; j < nq; ++j) {
        const int r = r0 + j / group, head = g * group + j % group;
        std::copy_n(&s.out[static_cast<size_t>(j) * hd], hd, &att_out_[static_cast<size_t>(r) * qd + head * hd]);
      }
    }
  });
}

// s.out[j] = attention of query j over keys [0, s.len[j]) of KV head g (len nondecreasing).
void Fp32Lm::flash_attend(int layer, int g, int nq, float scale, Isa isa, FlashScratch& s) {
  const Config& c = model_.config;
  const int hd = c.head_dim, kvd = c.kv_dim(), keys = s.len[nq - 1];
  s.scores.resize(static_cast<size_t>(nq) * kKeyBlock);
  s.out.assign(static_cast<size_t>(nq) * hd, 0.0f);
  s.max.assign(nq, -INFINITY);
  s.sum.assign(nq, 0.0f);
  s.count.resize(nq);
  for (int t0 = 0; t0 < keys; t0 += kKeyBlock) {
    const int t1 = std::min(keys, t0 + kKeyBlock);
    const size_t at = static_cast<size_t>(t0) * kvd + static_cast<size_t>(g) * hd;
    dot_rows_isa(isa, s.queries.data(), hd, nq, hd, &k_cache_[layer][at], kvd, 0, t1 - t0, s.scores.data(), kKeyBlock);
    for (int j = 0; j < nq; ++j) {
      s.count[j] = std::clamp(s.len[j] - t0, 0, t1 - t0);
      if (s.count[j] == 0) continue;
      const float a = online_softmax_block_isa(isa, &s.scores[static_cast<size_t>(j) * kKeyBlock], s.count[j], scale,
                                               &s.max[j], &s.sum[j]);
      if (a != 1.0f)
        for (int i = 0; i < hd; ++i) s.out[static_cast<size_t>(j) * hd + i] *= a;
    }
    accumulate_values_isa(isa, s.scores.data(), kKeyBlock, nq, s.count.data(), &v_cache_[layer][at], kvd, hd,
                          s.out.data(), hd);
  }
  for (int j = 0; j < nq; ++j) {
    const float inv = 1.0f / s.sum[j];
    for (int i = 0; i < hd; ++i) s.out[static_cast<size_t>(j) * hd + i] *= inv;
  }
}

void Fp32Lm::attention_block(int layer, int n) {
  const Config& c = model_.config;
  const LayerWeights& L = model_.weights.layers[layer];
  const int h = c.hidden_size, qd = c.q_dim(), kvd = c.kv_dim(), half = c.head_dim / 2;
  const float* in = x_.data();
  if (c.norm_before) {
    norm_rows(L.attn_norm, L.attn_norm_bias, n, x_.data(), xb_.data());
    in = xb_.data();
  }
  linear(in, n, h, L.wq.data(), data_or_null(L.bq), qd, q_.data());
  linear(in, n, h, L.wk.data(), data_or_null(L.bk), kvd, k_.data());
  linear(in, n, h, L.wv.data(), data_or_null(L.bv), kvd, v_.data());
  for (int r = 0; r < n; ++r) {
    if (c.positions == PositionKind::kRope) {
      const float* cs = &cos_[static_cast<size_t>(r) * half];
      const float* sn = &sin_[static_cast<size_t>(r) * half];
      for (int hh = 0; hh < c.num_heads; ++hh) apply_rope(&q_[static_cast<size_t>(r) * qd + hh * c.head_dim], c.head_dim, cs, sn);
      for (int hh = 0; hh < c.num_kv_heads; ++hh) apply_rope(&k_[static_cast<size_t>(r) * kvd + hh * c.head_dim], c.head_dim, cs, sn);
    }
    const size_t slot = static_cast<size_t>(position_ + r) * kvd;
    std::copy_n(&k_[static_cast<size_t>(r) * kvd], kvd, &k_cache_[layer][slot]);
    std::copy_n(&v_[static_cast<size_t>(r) * kvd], kvd, &v_cache_[layer][slot]);
  }
  const Isa isa = active_isa();
  if (isa == Isa::kScalar) {
    // (row, head) pairs are independent: threads split them, each with its own scores.
    parallel_for(n * c.num_heads, 1, [&](int begin, int end) {
      std::vector<float> scores(static_cast<size_t>(position_ + n));
      for (int i = begin; i < end; ++i) attend(layer, i / c.num_heads, position_ + i / c.num_heads, i % c.num_heads, scores.data());
    });
  } else {
    attend_blocks(layer, n, isa);
  }
  linear(att_out_.data(), n, qd, L.wo.data(), data_or_null(L.bo), h, xb_.data());
  for (size_t i = 0; i < static_cast<size_t>(n) * h; ++i) x_[i] += xb_[i];
  if (!c.norm_before) norm_rows(L.attn_norm, L.attn_norm_bias, n, x_.data(), x_.data());
}

void Fp32Lm::ffn_block(int layer, int n) {
  const Config& c = model_.config;
  const LayerWeights& L = model_.weights.layers[layer];
  const int h = c.hidden_size, f = c.ffn_size;
  const size_t cells = static_cast<size_t>(n) * f;
  const float* in = x_.data();
  if (c.norm_before) {
    norm_rows(L.ffn_norm, L.ffn_norm_bias, n, x_.data(), xb_.data());
    in = xb_.data();
  }
  linear(in, n, h, L.w_up.data(), data_or_null(L.b_up), f, hb_.data());
  if (c.ffn == FfnKind::kSwiGlu) {
    linear(in, n, h, L.w_gate.data(), nullptr, f, hb2_.data());
    for (size_t i = 0; i < cells; ++i) hb_[i] *= silu(hb2_[i]);
  } else {
    for (size_t i = 0; i < cells; ++i) hb_[i] = std::max(hb_[i], 0.0f);
  }
  linear(hb_.data(), n, f, L.w_down.data(), data_or_null(L.b_down), h, xb_.data());
  for (size_t i = 0; i < static_cast<size_t>(n) * h; ++i) x_[i] += xb_[i];
  if (!c.norm_before) norm_rows(L.ffn_norm, L.ffn_norm_bias, n, x_.data(), x_.data());
}

void Fp32Lm::forward(const int* tokens, int n, bool all_logits, std::vector<float>& logits) {
  const Config& c = model_.config;
  if (n <= 0) throw BadInput("engine", "forward() needs at least one token");
  if (position_ + n > capacity_)
    throw BadInput("engine", "context of " + std::to_string(position_ + n) + " tokens exceeds the KV cache of " +
                                 std::to_string(capacity_) + " tokens");
  const size_t rows = static_cast<size_t>(n);
  x_.resize(rows * c.hidden_size);
  xb_.resize(rows * std::max(c.hidden_size, c.q_dim()));
  q_.resize(rows * c.q_dim());
  k_.resize(rows * c.kv_dim());
  v_.resize(rows * c.kv_dim());
  att_out_.resize(rows * c.q_dim());
  hb_.resize(rows * c.ffn_size);
  hb2_.resize(rows * c.ffn_size);
  if (position_ + n > cache_positions_) {
    cache_positions_ = std::min(capacity_, std::max(position_ + n, 2 * cache_positions_));
    for (int l = 0; l < c.num_layers; ++l) {
      k_cache_[l].resize(static_cast<size_t>(cache_positions_) * c.kv_dim());
      v_cache_[l].resize(static_cast<size_t>(cache_positions_) * c.kv_dim());
    }
  }
  if (c.positions == PositionKind::kRope) {
    const int half = c.head_dim / 2;
    cos_.resize(rows * half);
    sin_.resize(rows * half);
    for (int r = 0; r < n; ++r) rope_angles(inv_freq_, position_ + r, &cos_[r * half], &sin_[r * half]);
  }

  embed(tokens, n);
  for (int l = 0; l < c.num_layers; ++l) {
    attention_block(l, n);
    ffn_block(l, n);
  }
  position_ += n;

  const int first = all_logits ? 0 : n - 1;
  const int out_rows = n - first;
  float* x = &x_[static_cast<size_t>(first) * c.hidden_size];
  if (c.final_norm) norm_rows(model_.weights.final_norm, model_.weights.final_norm_bias, out_rows, x, x);
  logits.resize(static_cast<size_t>(out_rows) * c.vocab_size);
  linear(x, out_rows, c.hidden_size, model_.weights.output_matrix().data(), nullptr, c.vocab_size, logits.data());
}

}  // namespace ispsim::model
