#include "kernels/int/gemv_int8_avx512.h"

#include "kernels/int/gemv_int8.h"
#include "kernels/int/int_attention.h"
#include "kernels/int/int_exp.h"
#include "kernels/int/requant.h"

#include <vector>

#if defined(ISPSIM_HAVE_X86_SIMD)
// GCC 12's AVX-512 headers warn about their own _mm*_undefined_*() (GCC bug 105593).
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

namespace ispsim::integer {
namespace {

#define ISPSIM_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vnni")))

// Σ over one group's round(partial · am · wm, as + ws) added to two int64
// vectors (rows 0-7 and 8-15 of the block). The shift is checked to lie in
// [1, 62], where round_shift is (x + 2^(s-1)) >> s; other lanes go through the
// scalar round_shift, so the result is the portable kernel's in every case.
ISPSIM_AVX512 inline void scale_and_add(__m512i partial, const Dyadic& act, const int64_t* wmult, const int64_t* wshift,
                                        __m512i& sum_lo, __m512i& sum_hi) {
  const __m512i am = _mm512_set1_epi64(act.mult), as = _mm512_set1_epi64(act.shift);
  const __m512i one = _mm512_set1_epi64(1), lo_limit = _mm512_set1_epi64(1), hi_limit = _mm512_set1_epi64(62);
  for (int half = 0; half < 2; ++half) {
    const __m256i p32 = half == 0 ? _mm512_castsi512_si256(partial) : _mm512_extracti64x4_epi64(partial, 1);
    const __m512i product =
        _mm512_mullo_epi64(_mm512_mullo_epi64(_mm512_cvtepi32_epi64(p32), am), _mm512_loadu_si512(wmult + 8 * half));
    const __m512i shift = _mm512_add_epi64(_mm512_loadu_si512(wshift + 8 * half), as);
    const __mmask8 ok = _mm512_cmpge_epi64_mask(shift, lo_limit) & _mm512_cmple_epi64_mask(shift, hi_limit);
    __m512i rounded;
    if (ok == 0xFF) {
      const __m512i bias = _mm512_sllv_epi64(one, _mm512_sub_epi64(shift, one));
      rounded = _mm512_srav_epi64(_mm512_add_epi64(product, bias), shift);
    } else {
      alignas(64) int64_t p[8], s[8];
      _mm512_store_si512(p, product);
      _mm512_store_si512(s, shift);
      for (int i = 0; i < 8; ++i) p[i] = round_shift(p[i], static_cast<int>(s[i]));
      rounded = _mm512_load_si512(p);
    }
    if (half == 0)
      sum_lo = _mm512_add_epi64(sum_lo, rounded);
    else
      sum_hi = _mm512_add_epi64(sum_hi, rounded);
  }
}

// One block of 16 weight rows against T tokens. Each vpdpbusd multiplies four
// consecutive bytes of a token (broadcast) with the same four columns of 16
// rows (the packed layout), so the 16 lanes are 16 rows: no horizontal sums.
template <int T>
ISPSIM_AVX512 void block_tokens(const PackedS8& pk, int block, const uint8_t* X, const Dyadic* act, int32_t* Y,
                                int rows_out, int row0, int valid_rows) {
  const int groups = pk.groups, kq = pk.cols_padded / 4;
  const int8_t* wblock = pk.data.data() + static_cast<int64_t>(block) * kq * 64;
  __m512i sum_lo[T], sum_hi[T];
  for (int t = 0; t < T; ++t) sum_lo[t] = sum_hi[t] = _mm512_setzero_si512();
  for (int g = 0; g < groups; ++g) {
    const int q0 = g * pk.group / 4, q1 = (g + 1) * pk.group / 4 < kq ? (g + 1) * pk.group / 4 : kq;
    // With few tokens one vpdpbusd chain per token would be latency-bound: U
    // independent chains over alternating column quads, added at the end
    // (integer sums: the result is the same).
    constexpr int U = T == 1 ? 4 : (T == 2 ? 2 : 1);
    __m512i acc[U][T];
    for (int u = 0; u < U; ++u)
      for (int t = 0; t < T; ++t) acc[u][t] = _mm512_setzero_si512();
    int q = q0;
    for (; q + U <= q1; q += U)
      for (int u = 0; u < U; ++u) {
        const __m512i w = _mm512_loadu_si512(wblock + static_cast<int64_t>(q + u) * 64);
        for (int t = 0; t < T; ++t) {
          int32_t four;
          __builtin_memcpy(&four, X + static_cast<int64_t>(t) * pk.cols_padded + 4 * (q + u), 4);
          acc[u][t] = _mm512_dpbusd_epi32(acc[u][t], _mm512_set1_epi32(four), w);
        }
      }
    for (; q < q1; ++q) {
      const __m512i w = _mm512_loadu_si512(wblock + static_cast<int64_t>(q) * 64);
      for (int t = 0; t < T; ++t) {
        int32_t four;
        __builtin_memcpy(&four, X + static_cast<int64_t>(t) * pk.cols_padded + 4 * q, 4);
        acc[0][t] = _mm512_dpbusd_epi32(acc[0][t], _mm512_set1_epi32(four), w);
      }
    }
    for (int u = 1; u < U; ++u)
      for (int t = 0; t < T; ++t) acc[0][t] = _mm512_add_epi32(acc[0][t], acc[u][t]);
    const int64_t at = (static_cast<int64_t>(block) * groups + g) * 16;
    // (x + 128)·w summed, minus 128·Σw: the exact signed partial.
    const __m512i correction = _mm512_loadu_si512(pk.wsum128.data() + at);
    for (int t = 0; t < T; ++t)
      scale_and_add(_mm512_sub_epi32(acc[0][t], correction), act[static_cast<int64_t>(t) * groups + g],
                    pk.wmult.data() + at, pk.wshift.data() + at, sum_lo[t], sum_hi[t]);
  }
  const __mmask16 store = valid_rows >= 16 ? 0xFFFF : static_cast<__mmask16>((1u << valid_rows) - 1);
  for (int t = 0; t < T; ++t) {
    // vpmovsqd saturates int64 to int32 exactly as saturate_int32.
    const __m512i y = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtsepi64_epi32(sum_lo[t])),
                                         _mm512_cvtsepi64_epi32(sum_hi[t]), 1);
    _mm512_mask_storeu_epi32(Y + static_cast<int64_t>(t) * rows_out + row0, store, y);
  }
}

using BlockFn = void (*)(const PackedS8&, int, const uint8_t*, const Dyadic*, int32_t*, int, int, int);
constexpr int kTokenTile = 6;
const BlockFn kBlocks[kTokenTile] = {block_tokens<1>, block_tokens<2>, block_tokens<3>,
                                     block_tokens<4>, block_tokens<5>, block_tokens<6>};

}  // namespace

ISPSIM_AVX512 void scale_add_rows_avx512(const int32_t* partial, int ld_partial, int tokens, const Dyadic* act,
                                         int act_stride, const int64_t* wmult, const int64_t* wshift, int64_t* sums,
                                         int ld_sums) {
  for (int t = 0; t < tokens; ++t) {
    int64_t* s = sums + static_cast<int64_t>(t) * ld_sums;
    __m512i lo = _mm512_loadu_si512(s), hi = _mm512_loadu_si512(s + 8);
    scale_and_add(_mm512_loadu_si512(partial + static_cast<int64_t>(t) * ld_partial),
                  act[static_cast<int64_t>(t) * act_stride], wmult, wshift, lo, hi);
    _mm512_storeu_si512(s, lo);
    _mm512_storeu_si512(s + 8, hi);
  }
}

void gemm_s8_packed_avx512(const PackedS8& pk, const uint8_t* X, int tokens, const Dyadic* act, int r0, int r1,
                           int32_t* Y) {
  // Blocks of 16 rows in the outer loop: one block's weights (16 x cols bytes)
  // stay in L1/L2 while every token tile passes over them.
  for (int row0 = r0; row0 < r1; row0 += 16) {
    const int block = row0 / 16, valid = r1 - row0 < 16 ? r1 - row0 : 16;
    for (int t = 0; t < tokens; t += kTokenTile) {
      const int nt = tokens - t < kTokenTile ? tokens - t : kTokenTile;
      kBlocks[nt - 1](pk, block, X + static_cast<int64_t>(t) * pk.cols_padded, act + static_cast<int64_t>(t) * pk.groups,
                      Y + static_cast<int64_t>(t) * pk.rows, pk.rows, row0, valid);
    }
  }
}

}  // namespace ispsim::integer
#endif  // ISPSIM_HAVE_X86_SIMD

#if defined(ISPSIM_HAVE_X86_SIMD)
namespace ispsim::integer {

// vpmuldq multiplies the low signed 32 bits of each 64-bit lane: exact products.
ISPSIM_AVX512 int64_t dot_s32_avx512(const int32_t* a, const int32_t* b, int n) {
  __m512i acc = _mm512_setzero_si512();
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m512i x = _mm512_cvtepi32_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i)));
    const __m512i y = _mm512_cvtepi32_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + i)));
    acc = _mm512_add_epi64(acc, _mm512_mul_epi32(x, y));
  }
  alignas(64) int64_t lanes[8];
  _mm512_store_si512(lanes, acc);
  int64_t sum = 0;
  for (int l = 0; l < 8; ++l) sum += lanes[l];
  for (; i < n; ++i) sum += int64_t{a[i]} * b[i];
  return sum;
}

ISPSIM_AVX512 void axpy_s32_avx512(int64_t p, const int32_t* v, int n, int64_t* acc) {
  const __m512i pv = _mm512_set1_epi64(p);
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m512i x = _mm512_cvtepi32_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(v + i)));
    _mm512_storeu_si512(acc + i, _mm512_add_epi64(_mm512_loadu_si512(acc + i), _mm512_mul_epi32(pv, x)));
  }
  for (; i < n; ++i) acc[i] += p * v[i];
}

namespace {
ISPSIM_AVX512 inline __mmask16 mask16(int n) {
  return n >= 16 ? __mmask16{0xFFFF} : (n <= 0 ? __mmask16{0} : static_cast<__mmask16>((1u << n) - 1));
}
ISPSIM_AVX512 inline __mmask8 mask8(int n) {
  return n >= 8 ? __mmask8{0xFF} : (n <= 0 ? __mmask8{0} : static_cast<__mmask8>((1u << n) - 1));
}

// R queries × up to 32 elements from c0: four int64 vectors per query held in
// registers across all keys; each value row is widened once for the R queries.
// Full: all 32 elements exist, so plain loads (with masked loads in the loop,
// GCC 12 keeps a stack copy of the accumulators up to date every iteration).
template <int R, bool Full>
ISPSIM_AVX512 void value_tile(const int32_t* p, int ldp, const int32_t* v, int ldv, int nk, int n, int c0, int64_t* acc,
                              int ldacc) {
  __mmask8 m[4];
  for (int c = 0; c < 4; ++c) m[c] = mask8(n - c0 - 8 * c);
  __m512i a[R][4];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < 4; ++c) a[r][c] = _mm512_setzero_si512();
  for (int t = 0; t < nk; ++t) {
    const int32_t* vt = v + static_cast<int64_t>(t) * ldv + c0;
    __m512i vv[4];
    for (int c = 0; c < 4; ++c)
      vv[c] = _mm512_cvtepi32_epi64(Full ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(vt + 8 * c))
                                         : _mm256_maskz_loadu_epi32(m[c], vt + 8 * c));
    for (int r = 0; r < R; ++r) {
      const __m512i pr = _mm512_set1_epi32(p[static_cast<int64_t>(r) * ldp + t]);
      for (int c = 0; c < 4; ++c) a[r][c] = _mm512_add_epi64(a[r][c], _mm512_mul_epi32(pr, vv[c]));
    }
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < 4; ++c) _mm512_mask_storeu_epi64(acc + static_cast<int64_t>(r) * ldacc + c0 + 8 * c, m[c], a[r][c]);
}

constexpr int kQueryTile = 4;
}  // namespace

namespace {
// round(|x|·127 / d) for the int32 lanes of x, d = the group's max|x| > 0,
// L = bit_length(d): an estimate through r = floor((2^(L+31) − 1) / d) on
// a = |x|·127 + floor(d/2) shifted right by s = max(0, L − 8) (so a >> s and r
// multiply within 64 bits) undershoots floor(a / d) by less than 1 (2^-7 from
// the shift, 2^-23 from r); one correction with the exact remainder makes it
// floor(a / d), i.e. the scalar quantizer's div_round.
struct GroupDivisor {
  __m512i d, r, s, total, half;
};
ISPSIM_AVX512 inline __m512i quotient_lanes(__m512i abs_x, const GroupDivisor& g) {
  const __m512i a = _mm512_add_epi64(_mm512_mul_epu32(abs_x, _mm512_set1_epi64(127)), g.half);
  const __m512i q0 = _mm512_srlv_epi64(_mm512_mul_epu32(_mm512_srlv_epi64(a, g.s), g.r), g.total);
  const __m512i rem = _mm512_sub_epi64(a, _mm512_mul_epu32(q0, g.d));
  return _mm512_mask_add_epi64(q0, _mm512_cmpge_epu64_mask(rem, g.d), q0, _mm512_set1_epi64(1));
}
}  // namespace

ISPSIM_AVX512 void quantize_groups_int8_avx512(const int32_t* x, int n, int group, int8_t* q, Dyadic* scales) {
  for (int start = 0, g = 0; start < n; start += group, ++g) {
    const int len = start + group < n ? group : n - start;
    // |x| as unsigned 32-bit (|INT32_MIN| = 2^31 fits).
    __m512i m = _mm512_setzero_si512();
    for (int i = 0; i < len; i += 16) m = _mm512_max_epu32(m, _mm512_abs_epi32(_mm512_maskz_loadu_epi32(mask16(len - i), x + start + i)));
    const uint64_t max_abs = _mm512_reduce_max_epu32(m);
    if (max_abs == 0) {
      for (int i = 0; i < len; ++i) q[start + i] = 0;
      scales[g] = Dyadic{};
      continue;
    }
    const int L = bit_length(max_abs), shift = L > 8 ? L - 8 : 0;
    GroupDivisor div;
    div.d = _mm512_set1_epi64(static_cast<int64_t>(max_abs));
    div.r = _mm512_set1_epi64(static_cast<int64_t>(((uint64_t{1} << (L + 31)) - 1) / max_abs));
    div.s = _mm512_set1_epi64(shift);
    div.total = _mm512_set1_epi64(L + 31 - shift);
    div.half = _mm512_set1_epi64(static_cast<int64_t>(max_abs / 2));
    const __m512i low_halves = _mm512_set1_epi64(0xFFFFFFFF);
    for (int i = 0; i < len; i += 16) {
      const __mmask16 valid = mask16(len - i);
      const __m512i xv = _mm512_maskz_loadu_epi32(valid, x + start + i), ax = _mm512_abs_epi32(xv);
      const __m512i even = quotient_lanes(_mm512_and_si512(ax, low_halves), div);
      const __m512i odd = quotient_lanes(_mm512_srli_epi64(ax, 32), div);
      const __m512i mag = _mm512_or_si512(even, _mm512_slli_epi64(odd, 32));  // each quotient <= 127
      const __m512i signed_q = _mm512_mask_sub_epi32(mag, _mm512_cmplt_epi32_mask(xv, _mm512_setzero_si512()),
                                                     _mm512_setzero_si512(), mag);
      _mm_mask_storeu_epi8(q + start + i, valid, _mm512_cvtsepi32_epi8(signed_q));
    }
    scales[g] = int8_scale_for_max(static_cast<int64_t>(max_abs));
  }
}

// i-exp on 8 int64 lanes of d = x − max <= 0, step for step as i_exp():
// the shift to the working scale, the quotient z by ln 2 (multiply and
// shift), the polynomial and the final shift by z. Lanes at or past the
// underflow bound 31·q_ln2 are clamped to it: z = 31 there, and the
// polynomial (< 2^30) shifted by 31 is the scalar path's 0.
ISPSIM_AVX512 inline __m512i i_exp_lanes(__m512i d, const IExpParams& p) {
  const __m512i magnitude = _mm512_sub_epi64(_mm512_setzero_si512(), d);  // −d in [0, 2^32)
  __m512i a;
  if (p.input_shift >= 63)
    a = _mm512_setzero_si512();
  else if (p.input_shift > 0)
    a = _mm512_srli_epi64(_mm512_add_epi64(magnitude, _mm512_set1_epi64(int64_t{1} << (p.input_shift - 1))),
                          static_cast<unsigned>(p.input_shift));
  else
    a = _mm512_slli_epi64(magnitude, static_cast<unsigned>(-p.input_shift));
  const __m512i ac = _mm512_min_epi64(a, _mm512_set1_epi64(p.underflow));  // < 2^20: the products below fit
  const __m512i z = _mm512_srli_epi64(_mm512_mul_epu32(ac, _mm512_set1_epi64(static_cast<int64_t>(p.by_ln2.magic))),
                                      static_cast<unsigned>(p.by_ln2.shift));
  const __m512i t = _mm512_add_epi64(_mm512_sub_epi64(_mm512_mul_epu32(z, _mm512_set1_epi64(p.q_ln2)), ac),
                                     _mm512_set1_epi64(p.q_b));  // p + q_b > 0
  const __m512i poly = _mm512_add_epi64(_mm512_mul_epu32(t, t), _mm512_set1_epi64(p.q_c));
  return _mm512_srlv_epi64(poly, z);
}

namespace {
ISPSIM_AVX512 inline void normalize_probs(int32_t* out, int n, int64_t sum, int out_frac_bits) {
  // As int_softmax: one reciprocal 2^62 / sum, then round_shift(e · inverse, 62 − out_frac_bits).
  const int64_t inverse = (int64_t{1} << 62) / sum;
  const int shift = 62 - out_frac_bits;
  const __m512i inv = _mm512_set1_epi64(inverse), half = _mm512_set1_epi64(shift > 0 ? int64_t{1} << (shift - 1) : 0);
  for (int i = 0; i < n; i += 8) {
    const __mmask8 valid = mask8(n - i);
    const __m512i product = _mm512_mullo_epi64(_mm512_cvtepi32_epi64(_mm256_maskz_loadu_epi32(valid, out + i)), inv);
    const __m512i rounded = shift > 0 ? _mm512_srai_epi64(_mm512_add_epi64(product, half), static_cast<unsigned>(shift))
                                      : _mm512_slli_epi64(product, static_cast<unsigned>(-shift));
    _mm256_mask_storeu_epi32(out + i, valid, _mm512_cvtepi64_epi32(rounded));
  }
}
}  // namespace

ISPSIM_AVX512 void int_softmax_avx512(const int32_t* x, int n, const IExpParams& params, int32_t* out,
                                      int out_frac_bits) {
  __m512i m = _mm512_set1_epi32(INT32_MIN);
  for (int i = 0; i < n; i += 16) m = _mm512_max_epi32(m, _mm512_mask_loadu_epi32(m, mask16(n - i), x + i));
  const __m512i max = _mm512_set1_epi64(_mm512_reduce_max_epi32(m));
  __m512i sum = _mm512_setzero_si512();
  for (int i = 0; i < n; i += 8) {
    const __mmask8 valid = mask8(n - i);
    const __m512i xv = _mm512_cvtepi32_epi64(_mm256_maskz_loadu_epi32(valid, x + i));
    const __m512i e = _mm512_maskz_mov_epi64(valid, i_exp_lanes(_mm512_sub_epi64(xv, max), params));
    _mm256_mask_storeu_epi32(out + i, valid, _mm512_cvtepi64_epi32(e));
    sum = _mm512_add_epi64(sum, e);
  }
  normalize_probs(out, n, _mm512_reduce_add_epi64(sum), out_frac_bits);
}

// SwiGLU on 8 int64 lanes, step for step as int_swiglu: i-exp of −|gate|,
// sigmoid(−|gate|) = ⌊e · 2^30 / (one + e)⌋ (the divisor differs per
// element and AVX-512 has no integer division, so the 8 quotients are taken
// in scalar registers), the sign mirror, SiLU and the product with up, all
// within int64 (|gate|, |silu| < 2^31, sigmoid <= 2^30).
ISPSIM_AVX512 void int_swiglu_avx512(const int32_t* gate, const int32_t* up, int n, const IExpParams& params, int shift,
                                     int32_t* out) {
  const __m512i one = _mm512_set1_epi64(params.one), q30 = _mm512_set1_epi64(int64_t{1} << 30);
  const __m512i half30 = _mm512_set1_epi64(int64_t{1} << 29), half = _mm512_set1_epi64(int64_t{1} << (shift - 1));
  alignas(64) uint64_t num[8], den[8];
  for (int i = 0; i < n; i += 8) {
    const __mmask8 valid = mask8(n - i);
    const __m512i g = _mm512_cvtepi32_epi64(_mm256_maskz_loadu_epi32(valid, gate + i));
    const __m512i u = _mm512_cvtepi32_epi64(_mm256_maskz_loadu_epi32(valid, up + i));
    const __m512i e = i_exp_lanes(_mm512_sub_epi64(_mm512_setzero_si512(), _mm512_abs_epi64(g)), params);
    _mm512_store_si512(num, _mm512_slli_epi64(e, 30));
    _mm512_store_si512(den, _mm512_add_epi64(one, e));
    for (int l = 0; l < 8; ++l) num[l] /= den[l];
    const __m512i nh = _mm512_load_si512(num);
    const __m512i sig = _mm512_mask_sub_epi64(nh, _mm512_cmpge_epi64_mask(g, _mm512_setzero_si512()), q30, nh);
    const __m512i silu = _mm512_srai_epi64(_mm512_add_epi64(_mm512_mul_epi32(g, sig), half30), 30);
    const __m512i y = _mm512_srai_epi64(_mm512_add_epi64(_mm512_mul_epi32(silu, u), half), static_cast<unsigned>(shift));
    _mm256_mask_storeu_epi32(out + i, valid, _mm512_cvtsepi64_epi32(y));
  }
}

ISPSIM_AVX512 void weighted_sum_s32_avx512(const int32_t* p, int ldp, int nq, const int32_t* v, int ldv, int nk, int n,
                                           int64_t* acc, int ldacc) {
  using Tile = void (*)(const int32_t*, int, const int32_t*, int, int, int, int, int64_t*, int);
  static constexpr Tile kTiles[2][kQueryTile] = {
      {value_tile<1, false>, value_tile<2, false>, value_tile<3, false>, value_tile<4, false>},
      {value_tile<1, true>, value_tile<2, true>, value_tile<3, true>, value_tile<4, true>}};
  for (int j = 0; j < nq; j += kQueryTile) {
    const int rows = nq - j < kQueryTile ? nq - j : kQueryTile;
    for (int c0 = 0; c0 < n; c0 += 32)
      kTiles[c0 + 32 <= n][rows - 1](p + static_cast<int64_t>(j) * ldp, ldp, v, ldv, nk, n, c0, acc + static_cast<int64_t>(j) * ldacc,
                       ldacc);
  }
}

namespace {
constexpr int kScoreQueries = 6;  // 12 accumulators + 2 key vectors + 1 broadcast of 32 registers

// R queries × one tile of kKeyTile = 16 keys (two vectors of 8 int64 lanes):
// one broadcast query element times the tile's row of that element, per
// element; then each query's running maxima (kept as 8-lane vectors in mx)
// over the keys it sees, t < len[r].
template <int R>
ISPSIM_AVX512 void score_key_tile(const int32_t* q, int ldq, const int32_t* tile, int head_dim, int t0, const int* len,
                                  int64_t* s, int lds, __m512i* mx) {
  __m512i a[R][2];
  for (int r = 0; r < R; ++r) a[r][0] = a[r][1] = _mm512_setzero_si512();
  for (int i = 0; i < head_dim; ++i) {
    const __m512i k0 = _mm512_cvtepi32_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(tile + i * kKeyTile)));
    const __m512i k1 = _mm512_cvtepi32_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(tile + i * kKeyTile + 8)));
    for (int r = 0; r < R; ++r) {
      const __m512i qb = _mm512_set1_epi64(q[static_cast<int64_t>(r) * ldq + i]);
      a[r][0] = _mm512_add_epi64(a[r][0], _mm512_mul_epi32(qb, k0));
      a[r][1] = _mm512_add_epi64(a[r][1], _mm512_mul_epi32(qb, k1));
    }
  }
  for (int r = 0; r < R; ++r)
    for (int h = 0; h < 2; ++h) {
      _mm512_storeu_si512(s + static_cast<int64_t>(r) * lds + t0 + 8 * h, a[r][h]);
      const __mmask8 seen = mask8(len[r] - t0 - 8 * h);
      mx[2 * r] = _mm512_mask_max_epi64(mx[2 * r], seen, mx[2 * r], _mm512_abs_epi64(a[r][h]));
      mx[2 * r + 1] = _mm512_mask_max_epi64(mx[2 * r + 1], seen, mx[2 * r + 1], a[r][h]);
    }
}
}  // namespace

ISPSIM_AVX512 void score_tiles_s32_avx512(const int32_t* q, int ldq, int nq, const int32_t* key_tiles, int head_dim,
                                          int tiles, const int* len, int64_t* s, int lds, ScoreMax* max) {
  using Tile = void (*)(const int32_t*, int, const int32_t*, int, int, const int*, int64_t*, int, __m512i*);
  static constexpr Tile kTiles[kScoreQueries] = {score_key_tile<1>, score_key_tile<2>, score_key_tile<3>,
                                                 score_key_tile<4>, score_key_tile<5>, score_key_tile<6>};
  for (int j = 0; j < nq; j += kScoreQueries) {
    const int rows = nq - j < kScoreQueries ? nq - j : kScoreQueries;
    __m512i mx[2 * kScoreQueries];
    for (int r = 0; r < rows; ++r) mx[2 * r] = _mm512_setzero_si512(), mx[2 * r + 1] = _mm512_set1_epi64(INT64_MIN);
    for (int b = 0; b < tiles; ++b)
      kTiles[rows - 1](q + static_cast<int64_t>(j) * ldq, ldq, key_tiles + static_cast<int64_t>(b) * head_dim * kKeyTile,
                       head_dim, b * kKeyTile, len + j, s + static_cast<int64_t>(j) * lds, lds, mx);
    for (int r = 0; r < rows; ++r) {
      max[j + r].abs = _mm512_reduce_max_epi64(mx[2 * r]);
      max[j + r].value = _mm512_reduce_max_epi64(mx[2 * r + 1]);
    }
  }
}

// requantize_token then int_softmax on 8 int64 lanes at a time: the shift
// and the requantized max follow from the row's maxima (round_shift and the
// clamp are monotonic), so the row is read once for i-exp and the sum.
ISPSIM_AVX512 void scores_to_probs_avx512(const int64_t* s, int n, int64_t max_abs, int64_t max_value, int bits,
                                          int frac_bits, int32_t* probs) {
  const int64_t limit = (int64_t{1} << (bits - 1)) - 1;
  const int shift = max_abs == 0 ? 0 : requant_shift(max_abs, bits);
  const int64_t top = clamp64(round_shift(max_value, shift), -limit, limit);
  const IExpParams params = i_exp_params(frac_bits - shift);
  const __m512i lo = _mm512_set1_epi64(-limit), hi = _mm512_set1_epi64(limit), top_v = _mm512_set1_epi64(top);
  const __m512i half = _mm512_set1_epi64(shift > 0 ? int64_t{1} << (shift - 1) : 0);
  __m512i sum = _mm512_setzero_si512();
  for (int i = 0; i < n; i += 8) {
    const __mmask8 valid = mask8(n - i);
    const __m512i x = _mm512_maskz_loadu_epi64(valid, s + i);
    const __m512i scaled = shift > 0 ? _mm512_srai_epi64(_mm512_add_epi64(x, half), static_cast<unsigned>(shift))
                                     : _mm512_slli_epi64(x, static_cast<unsigned>(-shift));
    const __m512i r = _mm512_min_epi64(_mm512_max_epi64(scaled, lo), hi);
    const __m512i e = _mm512_maskz_mov_epi64(valid, i_exp_lanes(_mm512_sub_epi64(r, top_v), params));
    _mm256_mask_storeu_epi32(probs + i, valid, _mm512_cvtepi64_epi32(e));
    sum = _mm512_add_epi64(sum, e);
  }
  normalize_probs(probs, n, _mm512_reduce_add_epi64(sum), 30);
}

}  // namespace ispsim::integer
#endif  // ISPSIM_HAVE_X86_SIMD
