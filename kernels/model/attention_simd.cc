#include "kernels/model/attention_simd.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <utility>

#include "kernels/model/ops.h"

#if defined(ISPSIM_HAVE_X86_SIMD)
// GCC 12's AVX-512 headers warn about their own _mm*_undefined_*() (GCC bug 105593).
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

// Every function of a region is compiled for that region's ISA: GCC takes
// `#pragma GCC target`; clang (the fuzz preset) ignores it and takes
// `#pragma clang attribute` instead.
#if defined(__clang__)
#define ISPSIM_ISA_BEGIN_AVX2 _Pragma("clang attribute push(__attribute__((target(\"avx2,fma\"))), apply_to = function)")
#define ISPSIM_ISA_BEGIN_AVX512 \
  _Pragma("clang attribute push(__attribute__((target(\"avx512f,avx512dq,avx2,fma\"))), apply_to = function)")
#define ISPSIM_ISA_END _Pragma("clang attribute pop")
#else
#define ISPSIM_ISA_BEGIN_AVX2 _Pragma("GCC push_options") _Pragma("GCC target(\"avx2,fma\")")
#define ISPSIM_ISA_BEGIN_AVX512 _Pragma("GCC push_options") _Pragma("GCC target(\"avx512f,avx512dq,avx2,fma\")")
#define ISPSIM_ISA_END _Pragma("GCC pop_options")
#endif

namespace ispsim::model {

ISPSIM_ISA_BEGIN_AVX2
namespace avx2 {
struct V {
  using T = __m256;
  static constexpr int kLanes = 8;
  static constexpr int kMaxRows = 2;  // 16 ymm registers: 2 rows × 4 chunks of accumulators
  static __m256i mask(int n) { return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)); }
  static T zero() { return _mm256_setzero_ps(); }
  static T set1(float x) { return _mm256_set1_ps(x); }
  static T load(const float* p) { return _mm256_loadu_ps(p); }
  static T load_n(const float* p, int n) { return _mm256_maskload_ps(p, mask(n)); }
  static void store(float* p, T v) { _mm256_storeu_ps(p, v); }
  static void store_n(float* p, T v, int n) { _mm256_maskstore_ps(p, mask(n), v); }
  static T add(T a, T b) { return _mm256_add_ps(a, b); }
  static T sub(T a, T b) { return _mm256_sub_ps(a, b); }
  static T mul(T a, T b) { return _mm256_mul_ps(a, b); }
  static T max(T a, T b) { return _mm256_max_ps(a, b); }
  static T fma(T a, T b, T c) { return _mm256_fmadd_ps(a, b, c); }
  static T round(T x) { return _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  // v in the first n lanes, `fill` in the others.
  static T first_n(T v, T fill, int n) { return _mm256_blendv_ps(fill, v, _mm256_castsi256_ps(mask(n))); }
  // p · 2^n for integral n in [-126, 0]: n + 127 written into the exponent field.
  static T times_pow2(T p, T n) {
    const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
  }
  static T keep_where_ge(T x, T lo, T v) { return _mm256_and_ps(_mm256_cmp_ps(x, lo, _CMP_GE_OQ), v); }
  static float hsum(T v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  static float hmax(T v) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
};
#include "kernels/model/attention_simd_kernels.inc"
}  // namespace avx2
ISPSIM_ISA_END

ISPSIM_ISA_BEGIN_AVX512
namespace avx512 {
struct V {
  using T = __m512;
  static constexpr int kLanes = 16;
  static constexpr int kMaxRows = 4;  // 32 zmm registers: 4 rows × 4 chunks of accumulators
  static __mmask16 mask(int n) { return n >= 16 ? __mmask16{0xFFFF} : static_cast<__mmask16>((1u << n) - 1); }
  static T zero() { return _mm512_setzero_ps(); }
  static T set1(float x) { return _mm512_set1_ps(x); }
  static T load(const float* p) { return _mm512_loadu_ps(p); }
  static T load_n(const float* p, int n) { return _mm512_maskz_loadu_ps(mask(n), p); }
  static void store(float* p, T v) { _mm512_storeu_ps(p, v); }
  static void store_n(float* p, T v, int n) { _mm512_mask_storeu_ps(p, mask(n), v); }
  static T add(T a, T b) { return _mm512_add_ps(a, b); }
  static T sub(T a, T b) { return _mm512_sub_ps(a, b); }
  static T mul(T a, T b) { return _mm512_mul_ps(a, b); }
  static T max(T a, T b) { return _mm512_max_ps(a, b); }
  static T fma(T a, T b, T c) { return _mm512_fmadd_ps(a, b, c); }
  static T round(T x) { return _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static T first_n(T v, T fill, int n) { return _mm512_mask_blend_ps(mask(n), fill, v); }
  static T times_pow2(T p, T n) { return _mm512_scalef_ps(p, n); }
  static T keep_where_ge(T x, T lo, T v) { return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(x, lo, _CMP_GE_OQ), v); }
  // Halves combined, then avx2's order.
  static float hsum(T v) {
    return avx2::V::hsum(_mm256_add_ps(_mm512_castps512_ps256(v), _mm512_castps512_ps256(_mm512_shuffle_f32x4(v, v, 0xEE))));
  }
  static float hmax(T v) {
    return avx2::V::hmax(_mm256_max_ps(_mm512_castps512_ps256(v), _mm512_castps512_ps256(_mm512_shuffle_f32x4(v, v, 0xEE))));
  }
};
#include "kernels/model/attention_simd_kernels.inc"
}  // namespace avx512
ISPSIM_ISA_END

}  // namespace ispsim::model
#endif  // ISPSIM_HAVE_X86_SIMD

namespace ispsim::model {

void scaled_softmax_isa(Isa isa, float* x, int n, float scale) {
#if defined(ISPSIM_HAVE_X86_SIMD)
  if (isa >= Isa::kAvx512) return avx512::scaled_softmax(x, n, scale);
  if (isa == Isa::kAvx2) return avx2::scaled_softmax(x, n, scale);
#endif
  (void)isa;
  for (int i = 0; i < n; ++i) x[i] *= scale;
  softmax(x, n);
}

void weighted_values_isa(Isa isa, const float* p, int ldp, int nq, const int* len, const float* v, int ldv, int hd,
                         float* o, int ldo) {
#if defined(ISPSIM_HAVE_X86_SIMD)
  if (isa >= Isa::kAvx512) return avx512::weighted_values(p, ldp, nq, len, v, ldv, hd, o, ldo);
  if (isa == Isa::kAvx2) return avx2::weighted_values(p, ldp, nq, len, v, ldv, hd, o, ldo);
#endif
  for (int j = 0; j < nq; ++j) std::fill(o + static_cast<size_t>(j) * ldo, o + static_cast<size_t>(j) * ldo + hd, 0.0f);
  accumulate_values_isa(isa, p, ldp, nq, len, v, ldv, hd, o, ldo);
}

float online_softmax_block_isa(Isa isa, float* x, int n, float scale, float* m, float* l) {
#if defined(ISPSIM_HAVE_X86_SIMD)
  if (isa >= Isa::kAvx512) return avx512::online_softmax_block(x, n, scale, m, l);
  if (isa == Isa::kAvx2) return avx2::online_softmax_block(x, n, scale, m, l);
#endif
  (void)isa;
  float m_new = *m;
  for (int i = 0; i < n; ++i) m_new = std::max(m_new, x[i] *= scale);
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) sum += x[i] = std::exp(x[i] - m_new);
  const float a = *m == m_new ? 1.0f : std::exp(*m - m_new);
  *l = *l * a + sum;
  *m = m_new;
  return a;
}

void accumulate_values_isa(Isa isa, const float* p, int ldp, int nq, const int* len, const float* v, int ldv, int hd,
                           float* o, int ldo) {
#if defined(ISPSIM_HAVE_X86_SIMD)
  if (isa >= Isa::kAvx512) return avx512::accumulate_values(p, ldp, nq, len, v, ldv, hd, o, ldo);
  if (isa == Isa::kAvx2) return avx2::accumulate_values(p, ldp, nq, len, v, ldv, hd, o, ldo);
#endif
  (void)isa;
  for (int j = 0; j < nq; ++j)
    for (int t = 0; t < len[j]; ++t)
      for (int i = 0; i < hd; ++i)
        o[static_cast<size_t>(j) * ldo + i] += p[static_cast<size_t>(j) * ldp + t] * v[static_cast<size_t>(t) * ldv + i];
}

}  // namespace ispsim::model
