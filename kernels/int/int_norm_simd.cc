#include "kernels/int/int_norm_simd.h"

#include "kernels/int/fixed_point.h"
#include "kernels/int/requant.h"

#if defined(ISPSIM_HAVE_AVX2) || defined(ISPSIM_HAVE_X86_SIMD)
// GCC 12's AVX-512 headers warn about their own _mm*_undefined_*() (GCC bug 105593).
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#endif

#if defined(ISPSIM_HAVE_AVX2)
namespace ispsim::integer {
namespace {
#define ISPSIM_AVX2 __attribute__((target("avx2")))

// One element of norm_scale_avx2, for the ragged end of a row (v · mult may pass int64).
inline int32_t scale_one(int32_t v, int64_t mult, int shift1, int32_t gamma, int shift2, int32_t beta) {
  const int64_t normalized = clamp64(round_shift128(static_cast<__int128>(v) * mult, shift1), INT32_MIN, INT32_MAX);
  return saturate_int32(round_shift(normalized * gamma, shift2) + beta);
}

// AVX2 has no arithmetic right shift of int64: complement negative lanes, shift, complement back.
ISPSIM_AVX2 inline __m256i srai64(__m256i x, __m128i count) {
  const __m256i sign = _mm256_cmpgt_epi64(_mm256_setzero_si256(), x);
  return _mm256_xor_si256(_mm256_srl_epi64(_mm256_xor_si256(x, sign), count), sign);
}

// The low 64 bits of a · b from three 32 × 32 → 64 products.
ISPSIM_AVX2 inline __m256i mullo64(__m256i a, __m256i b) {
  const __m256i cross = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(a, 32), b),
                                         _mm256_mul_epu32(a, _mm256_srli_epi64(b, 32)));
  return _mm256_add_epi64(_mm256_mul_epu32(a, b), _mm256_slli_epi64(cross, 32));
}

ISPSIM_AVX2 inline __m256i clamp_int32(__m256i x) {
  const __m256i lo = _mm256_set1_epi64x(INT32_MIN), hi = _mm256_set1_epi64x(INT32_MAX);
  x = _mm256_blendv_epi8(x, lo, _mm256_cmpgt_epi64(lo, x));
  return _mm256_blendv_epi8(x, hi, _mm256_cmpgt_epi64(x, hi));
}

ISPSIM_AVX2 inline __m256i load4(const int32_t* p) {
  return _mm256_cvtepi32_epi64(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// round_shift(v · mult, shift) for v in int32, 0 <= mult < 2^63, in int64 lanes (the split: int_norm_simd.h).
struct RoundedProductAvx2 {
  __m256i mult, mult_hi, mult_lo, half;
  __m128i count;
  bool split;
  ISPSIM_AVX2 RoundedProductAvx2(int64_t m, int shift)
      : mult(_mm256_set1_epi64x(m)), mult_hi(_mm256_set1_epi64x(m >> 32)), mult_lo(_mm256_set1_epi64x(m & 0xFFFFFFFF)),
        half(_mm256_set1_epi64x(int64_t{1} << (shift >= 33 ? shift - 33 : shift - 1))),
        count(_mm_cvtsi32_si128(shift >= 33 ? shift - 32 : shift)), split(shift >= 33) {}
  ISPSIM_AVX2 __m256i operator()(__m256i v) const {
    if (!split) return srai64(_mm256_add_epi64(mullo64(v, mult), half), count);
    const __m256i high = _mm256_add_epi64(_mm256_mul_epi32(v, mult_hi), half);
    return srai64(_mm256_add_epi64(high, srai64(mullo64(v, mult_lo), _mm_cvtsi32_si128(32))), count);
  }
};

// Four squares (< 2^62) split into their high and low 32 bits, each half summed in int64 lanes.
ISPSIM_AVX2 inline void add_squares(__m128i x4, __m256i& hi, __m256i& lo) {
  const __m256i x = _mm256_cvtepi32_epi64(x4), square = _mm256_mul_epi32(x, x);
  hi = _mm256_add_epi64(hi, _mm256_srli_epi64(square, 32));
  lo = _mm256_add_epi64(lo, _mm256_and_si256(square, _mm256_set1_epi64x(0xFFFFFFFF)));
}

template <typename T, int N>
T lanes_sum(const T (&lane)[N]) {
  T s = 0;
  for (T x : lane) s += x;
  return s;
}
}  // namespace

ISPSIM_AVX2 void norm_scale_avx2(const int32_t* v, int n, int64_t mult, int shift1, const int32_t* gamma, int shift2,
                                 const int32_t* beta, int32_t* out) {
  const RoundedProductAvx2 scale(mult, shift1);
  const __m256i half2 = _mm256_set1_epi64x(int64_t{1} << (shift2 - 1));
  const __m128i count2 = _mm_cvtsi32_si128(shift2);
  const __m256i even_lanes = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m256i normalized = clamp_int32(scale(load4(v + i)));
    __m256i y = srai64(_mm256_add_epi64(_mm256_mul_epi32(normalized, load4(gamma + i)), half2), count2);
    if (beta) y = _mm256_add_epi64(y, load4(beta + i));
    const __m256i packed = _mm256_permutevar8x32_epi32(clamp_int32(y), even_lanes);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm256_castsi256_si128(packed));
  }
  for (; i < n; ++i) out[i] = scale_one(v[i], mult, shift1, gamma[i], shift2, beta ? beta[i] : 0);
}

ISPSIM_AVX2 SquareSums square_sums_avx2(const int32_t* v, int n) {
  __m256i hi = _mm256_setzero_si256(), lo = _mm256_setzero_si256(), max_abs = _mm256_setzero_si256();
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(v + i));
    max_abs = _mm256_max_epu32(max_abs, _mm256_abs_epi32(x));
    add_squares(_mm256_castsi256_si128(x), hi, lo);
    add_squares(_mm256_extracti128_si256(x, 1), hi, lo);
  }
  uint64_t hi_lanes[4], lo_lanes[4];
  uint32_t max_lanes[8];
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(hi_lanes), hi);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(lo_lanes), lo);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(max_lanes), max_abs);
  SquareSums r;
  r.sumsq = (static_cast<unsigned __int128>(lanes_sum(hi_lanes)) << 32) + lanes_sum(lo_lanes);
  for (uint32_t x : max_lanes) r.max_abs = x > r.max_abs ? x : r.max_abs;
  for (; i < n; ++i) {
    r.sumsq += static_cast<unsigned __int128>(int64_t{v[i]} * v[i]);
    r.max_abs = static_cast<uint64_t>(abs64(v[i])) > r.max_abs ? static_cast<uint64_t>(abs64(v[i])) : r.max_abs;
  }
  return r;
}

ISPSIM_AVX2 uint32_t max_square_u32_avx2(const int32_t* v, int n) {
  __m256i m = _mm256_setzero_si256();
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(v + i));
    m = _mm256_max_epu32(m, _mm256_mullo_epi32(x, x));
  }
  uint32_t lanes[8], r = 0;
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(lanes), m);
  for (uint32_t x : lanes) r = x > r ? x : r;
  for (; i < n; ++i) {
    const uint32_t sq = static_cast<uint32_t>(int64_t{v[i]} * v[i]);
    r = sq > r ? sq : r;
  }
  return r;
}

ISPSIM_AVX2 uint32_t guarded_square_sum_avx2(const int32_t* v, int n, int guard) {
  const __m128i count = _mm_cvtsi32_si128(guard);
  __m256i s = _mm256_setzero_si256();
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(v + i));
    s = _mm256_add_epi32(s, _mm256_srl_epi32(_mm256_mullo_epi32(x, x), count));
  }
  uint32_t lanes[8];
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(lanes), s);
  uint32_t r = lanes_sum(lanes);
  for (; i < n; ++i) r += static_cast<uint32_t>(int64_t{v[i]} * v[i]) >> guard;
  return r;
}

// round_shift(x, s) = (x >> s) + bit s−1 of x for s >= 1 (no overflow in int32
// lanes), x << −s otherwise; then the clamp to ±limit.
ISPSIM_AVX2 int requantize_token_avx2(const int32_t* x, int n, int bits, int32_t* out) {
  __m256i m = _mm256_setzero_si256();
  int i = 0;
  for (; i + 8 <= n; i += 8)
    m = _mm256_max_epu32(m, _mm256_abs_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i))));
  uint32_t lanes[8], max_abs = 0;
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(lanes), m);
  for (uint32_t a : lanes) max_abs = a > max_abs ? a : max_abs;
  for (int j = i; j < n; ++j) max_abs = static_cast<uint32_t>(abs64(x[j])) > max_abs ? static_cast<uint32_t>(abs64(x[j])) : max_abs;
  const int32_t limit = (int32_t{1} << (bits - 1)) - 1;
  const int shift = max_abs == 0 ? 0 : requant_shift(max_abs, bits);
  const __m128i right = _mm_cvtsi32_si128(shift > 0 ? shift : 0), left = _mm_cvtsi32_si128(shift < 0 ? -shift : 0);
  const __m128i round_bit = _mm_cvtsi32_si128(shift > 0 ? shift - 1 : 0);
  const __m256i one = _mm256_set1_epi32(shift > 0 ? 1 : 0), hi = _mm256_set1_epi32(limit), lo = _mm256_set1_epi32(-limit);
  for (i = 0; i + 8 <= n; i += 8) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i));
    const __m256i rounded = _mm256_add_epi32(_mm256_sll_epi32(_mm256_sra_epi32(v, right), left),
                                             _mm256_and_si256(_mm256_sra_epi32(v, round_bit), one));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm256_min_epi32(_mm256_max_epi32(rounded, lo), hi));
  }
  for (; i < n; ++i) out[i] = static_cast<int32_t>(clamp64(round_shift(x[i], shift), -limit, limit));
  return shift;
}

}  // namespace ispsim::integer
#endif  // ISPSIM_HAVE_AVX2

#if defined(ISPSIM_HAVE_X86_SIMD)
namespace ispsim::integer {
namespace {
#define ISPSIM_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl")))

ISPSIM_AVX512 inline __mmask8 mask8(int n) {
  return n >= 8 ? __mmask8{0xFF} : (n <= 0 ? __mmask8{0} : static_cast<__mmask8>((1u << n) - 1));
}
ISPSIM_AVX512 inline __mmask16 mask16(int n) {
  return n >= 16 ? __mmask16{0xFFFF} : (n <= 0 ? __mmask16{0} : static_cast<__mmask16>((1u << n) - 1));
}
ISPSIM_AVX512 inline __m512i load8(__mmask8 valid, const int32_t* p) {
  return _mm512_cvtepi32_epi64(_mm256_maskz_loadu_epi32(valid, p));
}

struct RoundedProductAvx512 {
  __m512i mult, mult_hi, mult_lo, half;
  unsigned count;
  bool split;
  ISPSIM_AVX512 RoundedProductAvx512(int64_t m, int shift)
      : mult(_mm512_set1_epi64(m)), mult_hi(_mm512_set1_epi64(m >> 32)), mult_lo(_mm512_set1_epi64(m & 0xFFFFFFFF)),
        half(_mm512_set1_epi64(int64_t{1} << (shift >= 33 ? shift - 33 : shift - 1))),
        count(static_cast<unsigned>(shift >= 33 ? shift - 32 : shift)), split(shift >= 33) {}
  ISPSIM_AVX512 __m512i operator()(__m512i v) const {
    if (!split) return _mm512_srai_epi64(_mm512_add_epi64(_mm512_mullo_epi64(v, mult), half), count);
    const __m512i high = _mm512_add_epi64(_mm512_mul_epi32(v, mult_hi), half);
    return _mm512_srai_epi64(_mm512_add_epi64(high, _mm512_srai_epi64(_mm512_mullo_epi64(v, mult_lo), 32)), count);
  }
};
}  // namespace

ISPSIM_AVX512 void norm_scale_avx512(const int32_t* v, int n, int64_t mult, int shift1, const int32_t* gamma,
                                     int shift2, const int32_t* beta, int32_t* out) {
  const RoundedProductAvx512 scale(mult, shift1);
  const __m512i half2 = _mm512_set1_epi64(int64_t{1} << (shift2 - 1));
  const __m512i lo = _mm512_set1_epi64(INT32_MIN), hi = _mm512_set1_epi64(INT32_MAX);
  const unsigned count2 = static_cast<unsigned>(shift2);
  for (int i = 0; i < n; i += 8) {
    const __mmask8 valid = mask8(n - i);
    const __m512i normalized = _mm512_min_epi64(_mm512_max_epi64(scale(load8(valid, v + i)), lo), hi);
    __m512i y = _mm512_srai_epi64(_mm512_add_epi64(_mm512_mul_epi32(normalized, load8(valid, gamma + i)), half2), count2);
    if (beta) y = _mm512_add_epi64(y, load8(valid, beta + i));
    _mm256_mask_storeu_epi32(out + i, valid, _mm512_cvtsepi64_epi32(y));
  }
}

ISPSIM_AVX512 SquareSums square_sums_avx512(const int32_t* v, int n) {
  const __m512i low32 = _mm512_set1_epi64(0xFFFFFFFF);
  __m512i hi = _mm512_setzero_si512(), lo = _mm512_setzero_si512(), max_abs = _mm512_setzero_si512();
  for (int i = 0; i < n; i += 8) {
    const __m512i x = load8(mask8(n - i), v + i);  // absent lanes are 0
    const __m512i square = _mm512_mul_epi32(x, x);
    hi = _mm512_add_epi64(hi, _mm512_srli_epi64(square, 32));
    lo = _mm512_add_epi64(lo, _mm512_and_si512(square, low32));
    max_abs = _mm512_max_epu64(max_abs, _mm512_abs_epi64(x));
  }
  SquareSums r;
  r.sumsq = (static_cast<unsigned __int128>(_mm512_reduce_add_epi64(hi)) << 32) +
            static_cast<uint64_t>(_mm512_reduce_add_epi64(lo));
  r.max_abs = _mm512_reduce_max_epu64(max_abs);
  return r;
}

ISPSIM_AVX512 uint32_t max_square_u32_avx512(const int32_t* v, int n) {
  __m512i m = _mm512_setzero_si512();
  for (int i = 0; i < n; i += 16) {
    const __m512i x = _mm512_maskz_loadu_epi32(mask16(n - i), v + i);
    m = _mm512_max_epu32(m, _mm512_mullo_epi32(x, x));
  }
  return _mm512_reduce_max_epu32(m);
}

ISPSIM_AVX512 uint32_t guarded_square_sum_avx512(const int32_t* v, int n, int guard) {
  const __m128i count = _mm_cvtsi32_si128(guard);
  __m512i s = _mm512_setzero_si512();
  for (int i = 0; i < n; i += 16) {
    const __m512i x = _mm512_maskz_loadu_epi32(mask16(n - i), v + i);
    s = _mm512_add_epi32(s, _mm512_srl_epi32(_mm512_mullo_epi32(x, x), count));
  }
  return static_cast<uint32_t>(_mm512_reduce_add_epi32(s));
}

// As requantize_token_avx2, with masked ends.
ISPSIM_AVX512 int requantize_token_avx512(const int32_t* x, int n, int bits, int32_t* out) {
  __m512i m = _mm512_setzero_si512();
  for (int i = 0; i < n; i += 16) m = _mm512_max_epu32(m, _mm512_abs_epi32(_mm512_maskz_loadu_epi32(mask16(n - i), x + i)));
  const uint32_t max_abs = _mm512_reduce_max_epu32(m);
  const int32_t limit = (int32_t{1} << (bits - 1)) - 1;
  const int shift = max_abs == 0 ? 0 : requant_shift(max_abs, bits);
  const __m128i right = _mm_cvtsi32_si128(shift > 0 ? shift : 0), left = _mm_cvtsi32_si128(shift < 0 ? -shift : 0);
  const __m128i round_bit = _mm_cvtsi32_si128(shift > 0 ? shift - 1 : 0);
  const __m512i one = _mm512_set1_epi32(shift > 0 ? 1 : 0), hi = _mm512_set1_epi32(limit), lo = _mm512_set1_epi32(-limit);
  for (int i = 0; i < n; i += 16) {
    const __mmask16 valid = mask16(n - i);
    const __m512i v = _mm512_maskz_loadu_epi32(valid, x + i);
    const __m512i rounded = _mm512_add_epi32(_mm512_sll_epi32(_mm512_sra_epi32(v, right), left),
                                             _mm512_and_si512(_mm512_sra_epi32(v, round_bit), one));
    _mm512_mask_storeu_epi32(out + i, valid, _mm512_min_epi32(_mm512_max_epi32(rounded, lo), hi));
  }
  return shift;
}

}  // namespace ispsim::integer
#endif  // ISPSIM_HAVE_X86_SIMD
