#include "kernels/rag/fused_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/model/ops.h"

namespace ispsim::rag {

void fused_attention(const AttentionShape& s, const float* q, const int* pos, int rows, const float* k, const float* v,
                     int cache_tokens, float* out) {
  const int hd = s.head_dim, qd = s.q_dim(), kvd = s.kv_dim(), group = s.heads / s.kv_heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const size_t states = static_cast<size_t>(rows) * s.heads;
  // Online-softmax state per (row, head): running maximum, running sum, unnormalised output.
  std::vector<float> running_max(states, -std::numeric_limits<float>::infinity());
  std::vector<float> running_sum(states, 0.0f);
  std::vector<float> acc(states * hd, 0.0f);
  std::vector<float> scores(static_cast<size_t>(s.tile_tokens));
  int last = -1;  // the furthest position any row sees
  for (int r = 0; r < rows; ++r) last = std::max(last, pos[r]);
  last = std::min(last, cache_tokens - 1);
  // Each tile of T cache tokens is visited once, by every row that sees any of it.
  for (int first = 0; first <= last; first += s.tile_tokens) {
    for (int r = 0; r < rows; ++r) {
      const int end = std::min({first + s.tile_tokens, pos[r] + 1, cache_tokens});  // jagged causal mask
      if (end <= first) continue;
      for (int h = 0; h < s.heads; ++h) {
        const size_t state = static_cast<size_t>(r) * s.heads + h;
        const float* qh = q + static_cast<size_t>(r) * qd + static_cast<size_t>(h) * hd;
        const size_t kv_off = static_cast<size_t>(h / group) * hd;
        float tile_max = -std::numeric_limits<float>::infinity();
        for (int t = first; t < end; ++t) {
          const float score = model::dot(qh, k + static_cast<size_t>(t) * kvd + kv_off, hd) * scale;
          scores[t - first] = score;
          tile_max = std::max(tile_max, score);
        }
        const float new_max = std::max(running_max[state], tile_max);
        // exp(-inf) = 0 on the first tile, when nothing has been accumulated yet.
        const float correction = std::exp(running_max[state] - new_max);
        float* a = &acc[state * hd];
        float sum = running_sum[state] * correction;
        for (int i = 0; i < hd; ++i) a[i] *= correction;
        for (int t = first; t < end; ++t) {
          const float p = std::exp(scores[t - first] - new_max);
          sum += p;
          const float* vt = v + static_cast<size_t>(t) * kvd + kv_off;
          for (int i = 0; i < hd; ++i) a[i] += p * vt[i];
        }
        running_sum[state] = sum;
        running_max[state] = new_max;
      }
    }
  }
  for (int r = 0; r < rows; ++r)
    for (int h = 0; h < s.heads; ++h) {
      const size_t state = static_cast<size_t>(r) * s.heads + h;
      const float inv = 1.0f / running_sum[state];
      float* o = out + static_cast<size_t>(r) * qd + static_cast<size_t>(h) * hd;
      for (int i = 0; i < hd; ++i) o[i] = acc[state * hd + i] * inv;
    }
}

void reference_attention(const AttentionShape& s, const float* q, const int* pos, int rows, const float* k,
                         const float* v, int cache_tokens, float* out) {
  const int hd = s.head_dim, qd = s.q_dim(), kvd = s.kv_dim(), group = s.heads / s.kv_heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  std::vector<float> scores(static_cast<size_t>(cache_tokens));
  for (int r = 0; r < rows; ++r) {
    const int n = std::min(pos[r] + 1, cache_tokens);
    for (int h = 0; h < s.heads; ++h) {
      const float* qh = q + static_cast<size_t>(r) * qd + static_cast<size_t>(h) * hd;
      const size_t kv_off = static_cast<size_t>(h / group) * hd;
      for (int t = 0; t < n; ++t) scores[t] = model::dot(qh, k + static_cast<size_t>(t) * kvd + kv_off, hd) * scale;
      model::softmax(scores.data(), n);
      float* o = out + static_cast<size_t>(r) * qd + static_cast<size_t>(h) * hd;
      std::fill(o, o + hd, 0.0f);
      for (int t = 0; t < n; ++t) {
        const float* vt = v + static_cast<size_t>(t) * kvd + kv_off;
        for (int i = 0; i < hd; ++i) o[i] += scores[t] * vt[i];
      }
    }
  }
}

}  // namespace ispsim::rag
