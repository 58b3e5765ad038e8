#include "kernels/int/int_engine.h"

#include <algorithm>
#include <string>

#include "common/error.h"
#include "kernels/int/gemv_int8.h"
#include "kernels/int/int_activation.h"
#include "kernels/int/int_exp.h"
#include "kernels/int/int_norm.h"
#include "kernels/int/int_rope.h"
#include "kernels/int/requant.h"
#include "kernels/model/parallel.h"

namespace ispsim::integer {

int64_t IntegerModel::weight_bytes_per_token() const {
  int64_t bytes = (rotary ? hidden : 2 * hidden) + static_cast<int64_t>(lm_head.q.size());
  for (const IntLayer& l : layers)
    for (const IntLinear* w : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) bytes += w->q.size();  // w_gate empty for OPT
  return bytes;
}

void pack_weights(IntegerModel& model) {
  auto pack = [](IntLinear& w) { w.packed = pack_s8(w.q.data(), w.rows, w.cols, w.group, w.scale.data()); };
  pack(model.lm_head);
  for (IntLayer& l : model.layers)
    for (IntLinear* w : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down})
      if (!w->q.empty()) pack(*w);
}

void int_linear(const IntLinear& w, const int8_t* xq, const Dyadic* xs, int n, int32_t* out) {
  gemm_s8_grouped(w.q.data(), xq, n, w.rows, w.cols, w.group, xs, w.scale.data(), out, &w.packed);
  if (!w.bias.empty())
    for (int r = 0; r < n; ++r)
      for (int o = 0; o < w.rows; ++o) {
        int32_t& y = out[static_cast<size_t>(r) * w.rows + o];
        y = saturate_int32(int64_t{y} + w.bias[o]);
      }
}

IntegerEngine::IntegerEngine(const IntegerModel& model, int capacity) : m_(model) {
  capacity_ = capacity > 0 ? capacity : model.max_positions;
  const int positions = model.rotary ? model.rope.positions : model.max_positions;
  if (capacity_ > positions)
    throw BadInput("engine", "context of " + std::to_string(capacity_) + " tokens exceeds the " +
                                 std::to_string(positions) + " positions of the model");
  const size_t cache = model.layers.size() * static_cast<size_t>(capacity_) * model.kv_heads * model.head_dim;
  const size_t tiled = model.layers.size() * static_cast<size_t>((capacity_ + kKeyTile - 1) / kKeyTile) * kKeyTile *
                       model.kv_heads * model.head_dim;
  k_cache_.assign(tiled, 0);
  v_cache_.assign(cache, 0);
}

size_t IntegerEngine::key_offset(int layer, int kv_head) const {
  const size_t per_head = static_cast<size_t>((capacity_ + kKeyTile - 1) / kKeyTile) * kKeyTile * m_.head_dim;
  return (static_cast<size_t>(layer) * m_.kv_heads + kv_head) * per_head;
}

// Token-wise requantization (INT16, or INT8 in the ablation) then integer RMSNorm or LayerNorm.
void IntegerEngine::norm_rows(const IntNorm& norm, int n, const int32_t* in, int32_t* out) {
  const int h = m_.hidden, bits = m_.int16_requant ? 16 : 8;
  NormWeights w;
  w.gamma = norm.gamma.data();
  w.gamma_frac_bits = norm.gamma_frac_bits;
  w.eps_q40 = norm.eps_q40;
  w.beta = norm.beta.empty() ? nullptr : norm.beta.data();
  // Rows are independent: threads split them (prefill), each with its own scratch row.
  model::parallel_for(n, 1, [&](int r0, int r1) {
    std::vector<int32_t> tmp(static_cast<size_t>(h));
    for (int r = r0; r < r1; ++r) {
      const int shift = requantize_token(in + static_cast<size_t>(r) * h, h, bits, tmp.data());
      int32_t* y = out + static_cast<size_t>(r) * h;
      const int frac = m_.residual_frac - shift;
      if (m_.register_bits == 32)
        (norm.layer_norm ? int_layernorm_reg32 : int_rmsnorm_reg32)(tmp.data(), h, frac, w, y, norm.out_frac_bits);
      else
        (norm.layer_norm ? int_layernorm : int_rmsnorm)(tmp.data(), h, frac, w, y, norm.out_frac_bits);
    }
  });
}

// INT8 with one dynamic scale per (token, group) into xq_/xs_.
void IntegerEngine::quantize_rows(const int32_t* in, int n, int cols) {
  const int groups = (cols + m_.group - 1) / m_.group;
  xq_.resize(static_cast<size_t>(n) * cols);
  xs_.resize(static_cast<size_t>(n) * groups);
  model::parallel_for(n, 1, [&](int r0, int r1) {
    for (int r = r0; r < r1; ++r)
      quantize_groups_int8(in + static_cast<size_t>(r) * cols, cols, m_.group, &xq_[static_cast<size_t>(r) * cols],
                           &xs_[static_cast<size_t>(r) * groups]);
  });
}

void IntegerEngine::linear(const IntLinear& w, int n, int32_t* out) { int_linear(w, xq_.data(), xs_.data(), n, out); }

// Causal attention of query rows [r0, r1) for the heads that share KV head g,
// over the cache [0, position_ + r1), in tiles of the block's queries × 16
// keys (int_attention.h). A query at position pos uses keys [0, pos]; the
// scores past it are computed but ignored, and their probabilities are 0.
void IntegerEngine::attend_block(int layer, int g, int r0, int r1, AttendScratch& s) {
  const IntLayer& L = m_.layers[layer];
  const int hd = m_.head_dim, kvd = m_.kv_heads * hd, qd = m_.heads * hd, per_kv = m_.heads / m_.kv_heads;
  const int bits = m_.int16_requant ? 16 : 8, nq = (r1 - r0) * per_kv, keys = position_ + r1;
  const int tiles = (keys + kKeyTile - 1) / kKeyTile, lds = tiles * kKeyTile;
  s.queries.resize(static_cast<size_t>(nq) * hd);
  s.scores.resize(static_cast<size_t>(nq) * lds);
  s.probs.resize(static_cast<size_t>(nq) * keys);
  s.acc.resize(static_cast<size_t>(nq) * hd);
  s.len.resize(nq);
  s.max.resize(nq);
  for (int j = 0; j < nq; ++j) {
    const int32_t* q = &q_[static_cast<size_t>(r0 + j / per_kv) * qd + (g * per_kv + j % per_kv) * hd];
    for (int i = 0; i < hd; ++i) s.queries[static_cast<size_t>(j) * hd + i] = q[i];
    s.len[j] = position_ + r0 + j / per_kv + 1;
  }
  score_tiles_s32(s.queries.data(), hd, nq, &k_cache_[key_offset(layer, g)], hd, tiles, s.len.data(), s.scores.data(),
                  lds, s.max.data());
  for (int j = 0; j < nq; ++j) {
    // One scale for the whole row of scores (paper 1 §3.1.3), then integer Softmax.
    int32_t* probs = &s.probs[static_cast<size_t>(j) * keys];
    scores_to_probs(&s.scores[static_cast<size_t>(j) * lds], s.len[j], s.max[j], bits, L.q_frac + L.k_frac,
                    m_.register_bits, probs);
    for (int t = s.len[j]; t < keys; ++t) probs[t] = 0;
  }
  // Σ_t p_t · v_t: at most 2^30 · max|v| < 2^61 since the p_t sum to ~1.
  const size_t off = static_cast<size_t>(layer) * capacity_ * kvd + static_cast<size_t>(g) * hd;
  weighted_sum_s32(s.probs.data(), keys, nq, &v_cache_[off], kvd, keys, hd, s.acc.data(), hd);
  for (int j = 0; j < nq; ++j) {
    int32_t* out = &att_[static_cast<size_t>(r0 + j / per_kv) * qd + (g * per_kv + j % per_kv) * hd];
    for (int i = 0; i < hd; ++i) out[i] = saturate_int32(round_shift(s.acc[static_cast<size_t>(j) * hd + i], 30));
  }
}

void IntegerEngine::attention(int layer, int n) {
  const IntLayer& L = m_.layers[layer];
  const int h = m_.hidden, hd = m_.head_dim, qd = m_.heads * hd, kvd = m_.kv_heads * hd;
  norm_rows(L.attn_norm, n, x_.data(), xn_.data());
  quantize_rows(xn_.data(), n, h);
  linear(L.wq, n, q_.data());
  linear(L.wk, n, k_.data());
  linear(L.wv, n, v_.data());
  const size_t base = static_cast<size_t>(layer) * capacity_ * kvd;
  for (int r = 0; r < n; ++r) {
    const int pos = position_ + r;
    if (m_.rotary) {
      for (int hh = 0; hh < m_.heads; ++hh)
        int_rope(&q_[static_cast<size_t>(r) * qd + hh * hd], hd, m_.rope.cos_row(pos), m_.rope.sin_row(pos));
      for (int hh = 0; hh < m_.kv_heads; ++hh)
        int_rope(&k_[static_cast<size_t>(r) * kvd + hh * hd], hd, m_.rope.cos_row(pos), m_.rope.sin_row(pos));
    }
    for (int hh = 0; hh < m_.kv_heads; ++hh) {
      int32_t* keys = &k_cache_[key_offset(layer, hh)];
      for (int i = 0; i < hd; ++i) keys[key_tile_index(pos, i, hd)] = k_[static_cast<size_t>(r) * kvd + hh * hd + i];
    }
    for (int i = 0; i < kvd; ++i) v_cache_[base + static_cast<size_t>(pos) * kvd + i] = v_[static_cast<size_t>(r) * kvd + i];
  }
  // (KV head, block of rows) items are independent: threads split them, each with its own scratch.
  // A block holds about 12 queries (its rows × the heads sharing the KV head).
  const int rows_per_block = std::max(1, 12 / (m_.heads / m_.kv_heads)), blocks = (n + rows_per_block - 1) / rows_per_block;
  model::parallel_for(blocks * m_.kv_heads, 1, [&](int begin, int end) {
    thread_local AttendScratch s;
    for (int i = begin; i < end; ++i) {
      const int r0 = i / m_.kv_heads * rows_per_block;
      attend_block(layer, i % m_.kv_heads, r0, std::min(n, r0 + rows_per_block), s);
    }
  });
  quantize_rows(att_.data(), n, qd);
  linear(L.wo, n, xn_.data());  // o_proj writes straight into the residual format
  for (size_t i = 0; i < static_cast<size_t>(n) * h; ++i) x_[i] = saturate_int32(int64_t{x_[i]} + xn_[i]);
}

void IntegerEngine::ffn(int layer, int n) {
  const IntLayer& L = m_.layers[layer];
  const int h = m_.hidden, f = m_.ffn;
  norm_rows(L.ffn_norm, n, x_.data(), xn_.data());
  quantize_rows(xn_.data(), n, h);
  if (m_.swiglu) {
    linear(L.w_gate, n, gate_.data());
    linear(L.w_up, n, up_.data());
    model::parallel_for(n, 1, [&](int r0, int r1) {  // element-wise: rows split across threads
      const size_t at = static_cast<size_t>(r0) * f;
      int_swiglu(&gate_[at], L.gate_frac, &up_[at], L.up_frac, (r1 - r0) * f, &gate_[at], L.hidden_frac);
    });
  } else {
    linear(L.w_up, n, gate_.data());  // fc1 (+ bias), then ReLU at the same scale
    int_relu(gate_.data(), n * f, gate_.data());
  }
  quantize_rows(gate_.data(), n, f);
  linear(L.w_down, n, xn_.data());
  for (size_t i = 0; i < static_cast<size_t>(n) * h; ++i) x_[i] = saturate_int32(int64_t{x_[i]} + xn_[i]);
}

void IntegerEngine::forward(const int* tokens, int n, bool all_logits, std::vector<int32_t>& logits) {
  if (n <= 0) throw BadInput("engine", "forward() needs at least one token");
  if (position_ + n > capacity_)
    throw BadInput("engine", "context of " + std::to_string(position_ + n) + " tokens exceeds the KV cache of " +
                                 std::to_string(capacity_) + " tokens");
  const size_t rows = static_cast<size_t>(n);
  const int h = m_.hidden, qd = m_.heads * m_.head_dim, kvd = m_.kv_heads * m_.head_dim;
  x_.resize(rows * h);
  xn_.resize(rows * (h > qd ? h : qd));
  q_.resize(rows * qd);
  k_.resize(rows * kvd);
  v_.resize(rows * kvd);
  att_.resize(rows * qd);
  gate_.resize(rows * m_.ffn);
  up_.resize(rows * m_.ffn);
  // Embedding: the INT8 row times its group scales, straight into the residual format.
  const IntLinear& e = m_.embedding;
  for (int r = 0; r < n; ++r) {
    if (tokens[r] < 0 || tokens[r] >= m_.vocab)
      throw BadInput("engine", "token id " + std::to_string(tokens[r]) + " is outside the vocabulary of " +
                                   std::to_string(m_.vocab));
    const size_t row = static_cast<size_t>(tokens[r]);
    for (int k = 0; k < h; ++k)
      x_[static_cast<size_t>(r) * h + k] =
          saturate_int32(apply(e.scale[row * e.groups() + k / e.group], e.q[row * h + k]));
    if (!m_.rotary) {  // OPT: learned position row p + 2 (HF OPTLearnedPositionalEmbedding offset), same format
      const IntLinear& p = m_.positions;
      const size_t prow = static_cast<size_t>(position_ + r + 2);
      for (int k = 0; k < h; ++k) {
        int32_t& x = x_[static_cast<size_t>(r) * h + k];
        x = saturate_int32(int64_t{x} + apply(p.scale[prow * p.groups() + k / p.group], p.q[prow * h + k]));
      }
    }
  }
  for (size_t l = 0; l < m_.layers.size(); ++l) {
    attention(static_cast<int>(l), n);
    ffn(static_cast<int>(l), n);
  }
  position_ += n;
  const int first = all_logits ? 0 : n - 1, out_rows = n - first;
  norm_rows(m_.final_norm, out_rows, &x_[static_cast<size_t>(first) * h], xn_.data());
  quantize_rows(xn_.data(), out_rows, h);
  logits.resize(static_cast<size_t>(out_rows) * m_.vocab);
  linear(m_.lm_head, out_rows, logits.data());
}

}  // namespace ispsim::integer
