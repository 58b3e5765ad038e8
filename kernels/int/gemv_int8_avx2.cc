#include "kernels/int/gemv_int8_avx2.h"

#include "kernels/int/int_attention.h"

#if defined(ISPSIM_HAVE_AVX2)
#include <immintrin.h>
#endif

namespace ispsim::integer {

#if defined(ISPSIM_HAVE_AVX2)

bool avx2_supported() {
  __builtin_cpu_init();  // may run from a static initializer, before main
  return __builtin_cpu_supports("avx2");
}

namespace {
__attribute__((target("avx2"))) inline int32_t horizontal_sum(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
  return _mm_cvtsi128_si32(s);
}

// 32 products per step: |w| (unsigned) times sign(w) * x (signed) in maddubs
// gives exact int16 pair sums (at most 2 * 127 * 127), widened by madd.
__attribute__((target("avx2"))) inline __m256i multiply_add(__m256i acc, const int8_t* w, const int8_t* x) {
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w));
  __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x));
  __m256i pairs = _mm256_maddubs_epi16(_mm256_sign_epi8(a, a), _mm256_sign_epi8(b, a));
  return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, ones));
}
}  // namespace

// Sum of one 32-byte-multiple span into a vector accumulator (two chains for ILP).
__attribute__((target("avx2"))) inline __m256i span_sum(const int8_t* w, const int8_t* x, int len) {
  __m256i acc0 = _mm256_setzero_si256(), acc1 = _mm256_setzero_si256();
  int k = 0;
  for (; k + 64 <= len; k += 64) {
    acc0 = multiply_add(acc0, w + k, x + k);
    acc1 = multiply_add(acc1, w + k + 32, x + k + 32);
  }
  if (k < len) acc0 = multiply_add(acc0, w + k, x + k);
  return _mm256_add_epi32(acc0, acc1);
}

__attribute__((target("avx2"))) void dot_groups_avx2(const int8_t* w, const int8_t* x, int cols, int group,
                                                     int32_t* partial) {
  int start = 0, g = 0;
  // Four full groups at a time when the group is a multiple of 32: their
  // horizontal sums share one hadd tree instead of four.
  if (group % 32 == 0)
    for (; start + 4 * group <= cols; start += 4 * group, g += 4) {
      __m256i a0 = span_sum(w + start, x + start, group);
      __m256i a1 = span_sum(w + start + group, x + start + group, group);
      __m256i a2 = span_sum(w + start + 2 * group, x + start + 2 * group, group);
      __m256i a3 = span_sum(w + start + 3 * group, x + start + 3 * group, group);
      __m256i t = _mm256_hadd_epi32(_mm256_hadd_epi32(a0, a1), _mm256_hadd_epi32(a2, a3));
      __m128i sums = _mm_add_epi32(_mm256_castsi256_si128(t), _mm256_extracti128_si256(t, 1));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(partial + g), sums);
    }
  for (; start < cols; start += group, ++g) {
    const int end = start + group < cols ? start + group : cols;
    const int vector_end = start + (end - start) / 32 * 32;
    int32_t sum = horizontal_sum(span_sum(w + start, x + start, vector_end - start));
    for (int k = vector_end; k < end; ++k) sum += int32_t{w[k]} * x[k];
    partial[g] = sum;
  }
}

// vpmuldq multiplies the low signed 32 bits of each 64-bit lane: exact products.
__attribute__((target("avx2"))) int64_t dot_s32_avx2(const int32_t* a, const int32_t* b, int n) {
  __m256i acc = _mm256_setzero_si256();
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m256i x = _mm256_cvtepi32_epi64(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i)));
    const __m256i y = _mm256_cvtepi32_epi64(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i)));
    acc = _mm256_add_epi64(acc, _mm256_mul_epi32(x, y));
  }
  int64_t lanes[4];
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(lanes), acc);
  int64_t sum = lanes[0] + lanes[1] + lanes[2] + lanes[3];
  for (; i < n; ++i) sum += int64_t{a[i]} * b[i];
  return sum;
}

__attribute__((target("avx2"))) void axpy_s32_avx2(int64_t p, const int32_t* v, int n, int64_t* acc) {
  const __m256i pv = _mm256_set1_epi64x(p);
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m256i x = _mm256_cvtepi32_epi64(_mm_loadu_si128(reinterpret_cast<const __m128i*>(v + i)));
    __m256i* out = reinterpret_cast<__m256i*>(acc + i);
    _mm256_storeu_si256(out, _mm256_add_epi64(_mm256_loadu_si256(out), _mm256_mul_epi32(pv, x)));
  }
  for (; i < n; ++i) acc[i] += p * v[i];
}

namespace {
// R queries × one tile of kKeyTile = 16 keys in four int64 vectors each: one broadcast
// query element times the tile's row of that element, per element.
template <int R>
__attribute__((target("avx2"))) void score_key_tile_avx2(const int32_t* q, int ldq, const int32_t* tile, int head_dim,
                                                         int64_t* s, int lds) {
  __m256i a[R][4];
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < 4; ++c) a[r][c] = _mm256_setzero_si256();
  for (int i = 0; i < head_dim; ++i) {
    __m256i k[4];
    for (int c = 0; c < 4; ++c)
      k[c] = _mm256_cvtepi32_epi64(_mm_loadu_si128(reinterpret_cast<const __m128i*>(tile + i * kKeyTile + 4 * c)));
    for (int r = 0; r < R; ++r) {
      const __m256i qb = _mm256_set1_epi64x(q[static_cast<int64_t>(r) * ldq + i]);
      for (int c = 0; c < 4; ++c) a[r][c] = _mm256_add_epi64(a[r][c], _mm256_mul_epi32(qb, k[c]));
    }
  }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < 4; ++c) _mm256_storeu_si256(reinterpret_cast<__m256i*>(s + static_cast<int64_t>(r) * lds + 4 * c), a[r][c]);
}
}  // namespace

__attribute__((target("avx2"))) void score_tiles_s32_avx2(const int32_t* q, int ldq, int nq, const int32_t* key_tiles,
                                                          int head_dim, int tiles, int64_t* s, int lds) {
  for (int j = 0; j < nq; j += 2)
    for (int b = 0; b < tiles; ++b) {
      const int32_t* tile = key_tiles + static_cast<int64_t>(b) * head_dim * kKeyTile;
      int64_t* out = s + static_cast<int64_t>(j) * lds + b * kKeyTile;
      if (nq - j >= 2)
        score_key_tile_avx2<2>(q + static_cast<int64_t>(j) * ldq, ldq, tile, head_dim, out, lds);
      else
        score_key_tile_avx2<1>(q + static_cast<int64_t>(j) * ldq, ldq, tile, head_dim, out, lds);
    }
}

#else  // no AVX2 on this compiler/target: the portable kernel is always used

bool avx2_supported() { return false; }

#endif

}  // namespace ispsim::integer
