#include "kernels/rag/int_fused_attention.h"

#include <cstddef>
#include <vector>

#include "kernels/int/fixed_point.h"
#include "kernels/int/gemv_int8.h"
#include "kernels/int/int_exp.h"
#include "kernels/int/requant.h"
#include "kernels/model/parallel.h"

namespace ispsim::rag {
namespace {

int visible(int pos, int cache_tokens) { return pos + 1 < cache_tokens ? pos + 1 : cache_tokens; }

// Integer Softmax of one score row exactly as IntegerEngine::attend does it:
// one requantization scale for the row, then i-exp Softmax to Q30.
void row_probabilities(const IntAttentionFormat& f, const int64_t* scores, int n, int32_t* tmp, int32_t* probs) {
  const int shift = integer::requantize_token(scores, n, f.requant_bits, tmp);
  integer::int_softmax(tmp, n, f.score_frac_bits - shift, probs, 30);
}

// Q_fused rows sharing each pass over the tiles; bounds the kept score rows to
// kRowBlock · heads · cache_tokens (12 B each), e.g. 14 MB at 9 heads and 8192 tokens.
constexpr int kRowBlock = 16;

void fused_block(const AttentionShape& s, const IntAttentionFormat& f, const int32_t* q, const int* pos, int rows,
                 const int32_t* k, const int32_t* v, int cache_tokens, int32_t* out) {
  const int hd = s.head_dim, qd = s.q_dim(), kvd = s.kv_dim(), group = s.heads / s.kv_heads;
  const size_t states = static_cast<size_t>(rows) * s.heads;
  const size_t width = static_cast<size_t>(cache_tokens);
  std::vector<int64_t> scores(states * width);   // one score row per (row, head)
  std::vector<int32_t> probs(states * width);
  std::vector<int32_t> tmp(width);
  std::vector<int64_t> acc(states * hd, 0);
  int last = -1;
  for (int r = 0; r < rows; ++r) last = pos[r] > last ? pos[r] : last;
  last = last < cache_tokens - 1 ? last : cache_tokens - 1;
  // Pass over the K tiles: integer scores q.k (1/sqrt(d) is folded into q).
  for (int first = 0; first <= last; first += s.tile_tokens)
    for (int r = 0; r < rows; ++r) {
      const int end = first + s.tile_tokens < visible(pos[r], cache_tokens) ? first + s.tile_tokens
                                                                               : visible(pos[r], cache_tokens);
      for (int h = 0; h < s.heads; ++h) {
        const int32_t* qh = q + static_cast<size_t>(r) * qd + static_cast<size_t>(h) * hd;
        const size_t kv_off = static_cast<size_t>(h / group) * hd;
        int64_t* row = &scores[(static_cast<size_t>(r) * s.heads + h) * width];
        for (int t = first; t < end; ++t) {
          row[t] = integer::dot_s32(qh, k + static_cast<size_t>(t) * kvd + kv_off, hd);
        }
      }
    }
  // The row statistics (requantization scale, maximum, sum) and Q30 probabilities.
  for (int r = 0; r < rows; ++r)
    for (int h = 0; h < s.heads; ++h) {
      const size_t state = static_cast<size_t>(r) * s.heads + h;
      row_probabilities(f, &scores[state * width], visible(pos[r], cache_tokens), tmp.data(), &probs[state * width]);
    }
  // Pass over the V tiles: sum_t p_t v_t, accumulated in increasing t as the reference does.
  for (int first = 0; first <= last; first += s.tile_tokens)
    for (int r = 0; r < rows; ++r) {
      const int end = first + s.tile_tokens < visible(pos[r], cache_tokens) ? first + s.tile_tokens
                                                                               : visible(pos[r], cache_tokens);
      for (int h = 0; h < s.heads; ++h) {
        const size_t state = static_cast<size_t>(r) * s.heads + h;
        const size_t kv_off = static_cast<size_t>(h / group) * hd;
        int64_t* a = &acc[state * hd];
        for (int t = first; t < end; ++t) {
          integer::axpy_s32(probs[state * width + t], v + static_cast<size_t>(t) * kvd + kv_off, hd, a);
        }
      }
    }
  for (int r = 0; r < rows; ++r)
    for (int h = 0; h < s.heads; ++h) {
      const size_t state = static_cast<size_t>(r) * s.heads + h;
      int32_t* o = out + static_cast<size_t>(r) * qd + static_cast<size_t>(h) * hd;
      for (int i = 0; i < hd; ++i) o[i] = integer::saturate_int32(integer::round_shift(acc[state * hd + i], 30));
    }
}

}  // namespace

void int_fused_attention(const AttentionShape& s, const IntAttentionFormat& f, const int32_t* q, const int* pos,
                         int rows, const int32_t* k, const int32_t* v, int cache_tokens, int32_t* out) {
  // Row blocks are independent (each has its own buffers): threads split them.
  const int blocks = (rows + kRowBlock - 1) / kRowBlock;
  model::parallel_for(blocks, 1, [&](int b0, int b1) {
    for (int r0 = b0 * kRowBlock; r0 < b1 * kRowBlock && r0 < rows; r0 += kRowBlock) {
      const int n = rows - r0 < kRowBlock ? rows - r0 : kRowBlock;
      const size_t offset = static_cast<size_t>(r0) * s.q_dim();
      fused_block(s, f, q + offset, pos + r0, n, k, v, cache_tokens, out + offset);
    }
  });
}

void int_reference_attention(const AttentionShape& s, const IntAttentionFormat& f, const int32_t* q, const int* pos,
                             int rows, const int32_t* k, const int32_t* v, int cache_tokens, int32_t* out) {
  const int hd = s.head_dim, qd = s.q_dim(), kvd = s.kv_dim(), group = s.heads / s.kv_heads;
  std::vector<int64_t> scores(static_cast<size_t>(cache_tokens));
  std::vector<int32_t> tmp(static_cast<size_t>(cache_tokens)), probs(static_cast<size_t>(cache_tokens));
  std::vector<int64_t> acc(static_cast<size_t>(hd));
  for (int r = 0; r < rows; ++r) {
    const int n = visible(pos[r], cache_tokens);
    for (int h = 0; h < s.heads; ++h) {
      const int32_t* qh = q + static_cast<size_t>(r) * qd + static_cast<size_t>(h) * hd;
      const size_t kv_off = static_cast<size_t>(h / group) * hd;
      for (int t = 0; t < n; ++t) {
        const int32_t* kt = k + static_cast<size_t>(t) * kvd + kv_off;
        int64_t dot = 0;
        for (int i = 0; i < hd; ++i) dot += int64_t{qh[i]} * kt[i];
        scores[t] = dot;
      }
      row_probabilities(f, scores.data(), n, tmp.data(), probs.data());
      for (int i = 0; i < hd; ++i) acc[i] = 0;
      for (int t = 0; t < n; ++t) {
        const int32_t* vt = v + static_cast<size_t>(t) * kvd + kv_off;
        const int64_t p = probs[t];
        for (int i = 0; i < hd; ++i) acc[i] += p * vt[i];
      }
      int32_t* o = out + static_cast<size_t>(r) * qd + static_cast<size_t>(h) * hd;
      for (int i = 0; i < hd; ++i) o[i] = integer::saturate_int32(integer::round_shift(acc[i], 30));
    }
  }
}

}  // namespace ispsim::rag
