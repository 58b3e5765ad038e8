#include "kernels/int/gemv_int8_avx512.h"

#include "kernels/int/gemv_int8.h"

#if defined(ISPSIM_HAVE_X86_SIMD)
// GCC 12's AVX-512 headers warn about their own _mm*_undefined_*() (GCC bug 105593).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
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

}  // namespace ispsim::integer
#endif  // ISPSIM_HAVE_X86_SIMD
