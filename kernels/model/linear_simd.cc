#include "kernels/model/linear_simd.h"

#if defined(ISPSIM_HAVE_X86_SIMD)
// GCC 12's AVX-512 headers warn about their own _mm*_undefined_*() (GCC bug 105593).
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#endif

#include <algorithm>
#include <cstddef>
#include <utility>

#include "kernels/model/ops.h"

namespace ispsim::model {

namespace {
// Output rows per cache block: their weights stay in L2 while every token tile passes.
constexpr int kRowBlock = 32;
}  // namespace

void linear_rows_scalar(const float* x, int rows, int in, const float* w, const float* bias, int out, int o0, int o1,
                        float* y) {
  constexpr int kTokenBlock = 8;
  for (int t0 = 0; t0 < rows; t0 += kTokenBlock) {
    const int t1 = std::min(rows, t0 + kTokenBlock);
    for (int o = o0; o < o1; ++o) {
      const float* wrow = w + static_cast<size_t>(o) * in;
      const float b = bias ? bias[o] : 0.0f;
      for (int t = t0; t < t1; ++t) y[static_cast<size_t>(t) * out + o] = dot(x + static_cast<size_t>(t) * in, wrow, in) + b;
    }
  }
}

#if defined(ISPSIM_HAVE_X86_SIMD)
namespace {

// ---- AVX2 + FMA: one 8-lane accumulator per output, masked tail load. ----
__attribute__((target("avx2,fma"))) inline float hsum256(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

template <int R, int T>
__attribute__((target("avx2,fma"))) void tile_avx2(const float* x, int ldx, int in, const float* w, int ldw,
                                                  const float* bias, int out, float* y) {
  __m256 acc[R][T];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps();
  int k = 0;
  for (; k + 8 <= in; k += 8) {
    __m256 xv[T];
    for (int t = 0; t < T; ++t) xv[t] = _mm256_loadu_ps(x + static_cast<size_t>(t) * ldx + k);
    for (int r = 0; r < R; ++r) {
      const __m256 wv = _mm256_loadu_ps(w + static_cast<size_t>(r) * ldw + k);
      for (int t = 0; t < T; ++t) acc[r][t] = _mm256_fmadd_ps(wv, xv[t], acc[r][t]);
    }
  }
  if (k < in) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(in - k), lane);
    __m256 xv[T];
    for (int t = 0; t < T; ++t) xv[t] = _mm256_maskload_ps(x + static_cast<size_t>(t) * ldx + k, mask);
    for (int r = 0; r < R; ++r) {
      const __m256 wv = _mm256_maskload_ps(w + static_cast<size_t>(r) * ldw + k, mask);
      for (int t = 0; t < T; ++t) acc[r][t] = _mm256_fmadd_ps(wv, xv[t], acc[r][t]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) y[static_cast<size_t>(t) * out + r] = hsum256(acc[r][t]) + (bias ? bias[r] : 0.0f);
}

// ---- AVX-512: one 16-lane accumulator per output, masked tail load. ----
// Halves added, then hsum256's order (GCC 12's _mm512_reduce_add_ps warns).
__attribute__((target("avx512f,avx2,fma"))) inline float hsum512(__m512 v) {
  const __m256 lo = _mm512_castps512_ps256(v), hi = _mm512_castps512_ps256(_mm512_shuffle_f32x4(v, v, 0xEE));
  return hsum256(_mm256_add_ps(lo, hi));
}

template <int R, int T>
__attribute__((target("avx512f,avx2,fma"))) void tile_avx512(const float* x, int ldx, int in, const float* w, int ldw,
                                                             const float* bias, int out, float* y) {
  __m512 acc[R][T];
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) acc[r][t] = _mm512_setzero_ps();
  int k = 0;
  for (; k + 16 <= in; k += 16) {
    __m512 xv[T];
    for (int t = 0; t < T; ++t) xv[t] = _mm512_loadu_ps(x + static_cast<size_t>(t) * ldx + k);
    for (int r = 0; r < R; ++r) {
      const __m512 wv = _mm512_loadu_ps(w + static_cast<size_t>(r) * ldw + k);
      for (int t = 0; t < T; ++t) acc[r][t] = _mm512_fmadd_ps(wv, xv[t], acc[r][t]);
    }
  }
  if (k < in) {
    const __mmask16 mask = static_cast<__mmask16>((1u << (in - k)) - 1);
    __m512 xv[T];
    for (int t = 0; t < T; ++t) xv[t] = _mm512_maskz_loadu_ps(mask, x + static_cast<size_t>(t) * ldx + k);
    for (int r = 0; r < R; ++r) {
      const __m512 wv = _mm512_maskz_loadu_ps(mask, w + static_cast<size_t>(r) * ldw + k);
      for (int t = 0; t < T; ++t) acc[r][t] = _mm512_fmadd_ps(wv, xv[t], acc[r][t]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t)
      y[static_cast<size_t>(t) * out + r] = hsum512(acc[r][t]) + (bias ? bias[r] : 0.0f);
}

// ---- Decode (one token): whole rows one after another. ----
// A block's rows are read as one sequential stream, which the hardware
// prefetcher follows best; rows interleaved in a tile (several short streams
// 2-6 KB apart) streamed the weights slower. Each output keeps its level's
// accumulator, k order and horizontal sum, so it equals the tiles' bit for bit.
template <class Dot>
void gemv_rows(const float* x, int in, const float* w, const float* bias, int o0, int o1, float* y) {
  for (int o = o0; o < o1; ++o) y[o] = Dot::dot(x, w + static_cast<size_t>(o) * in, in) + (bias ? bias[o] : 0.0f);
}

// Masked lanes load zeros, as in the tiles: lanes [0, n) of a vector of 8.
__attribute__((target("avx2,fma"))) inline __m256i first_lanes(int n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// The avx2 level's 8-lane accumulator.
struct Avx2Dot {
  __attribute__((target("avx2,fma"))) static float dot(const float* x, const float* w, int in) {
    __m256 acc = _mm256_setzero_ps();
    int k = 0;
    for (; k + 8 <= in; k += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(w + k), _mm256_loadu_ps(x + k), acc);
    if (k < in) {
      const __m256i mask = first_lanes(in - k);
      acc = _mm256_fmadd_ps(_mm256_maskload_ps(w + k, mask), _mm256_maskload_ps(x + k, mask), acc);
    }
    return hsum256(acc);
  }
};

// The avx512 level's 16-lane accumulator as two 8-lane halves: the same
// per-lane FMAs and the same final sum (hsum512 adds the halves first), so the
// same bits; 256-bit loads streamed faster than 512-bit ones on the AMD EPYC.
struct Avx512Dot {
  __attribute__((target("avx2,fma"))) static float dot(const float* x, const float* w, int in) {
    __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps();
    int k = 0;
    for (; k + 16 <= in; k += 16) {
      lo = _mm256_fmadd_ps(_mm256_loadu_ps(w + k), _mm256_loadu_ps(x + k), lo);
      hi = _mm256_fmadd_ps(_mm256_loadu_ps(w + k + 8), _mm256_loadu_ps(x + k + 8), hi);
    }
    if (k < in) {
      const __m256i mlo = first_lanes(in - k), mhi = first_lanes(in - k - 8);
      lo = _mm256_fmadd_ps(_mm256_maskload_ps(w + k, mlo), _mm256_maskload_ps(x + k, mlo), lo);
      hi = _mm256_fmadd_ps(_mm256_maskload_ps(w + k + 8, mhi), _mm256_maskload_ps(x + k + 8, mhi), hi);
    }
    return hsum256(_mm256_add_ps(lo, hi));
  }
};

using TileFn = void (*)(const float*, int, int, const float*, int, const float*, int, float*);

// Tables of tile shapes [R-1][T-1]; the full tile is the largest entry.
template <template <int, int> class K>
struct Tiles;

template <int R, int T>
struct Avx2Tile {
  static void run(const float* x, int ldx, int in, const float* w, int ldw, const float* b, int out, float* y) {
    tile_avx2<R, T>(x, ldx, in, w, ldw, b, out, y);
  }
};
template <int R, int T>
struct Avx512Tile {
  static void run(const float* x, int ldx, int in, const float* w, int ldw, const float* b, int out, float* y) {
    tile_avx512<R, T>(x, ldx, in, w, ldw, b, out, y);
  }
};

template <template <int, int> class K, int RM, int TM>
struct TileTable {
  TileFn fn[RM][TM];
  template <int R, int T>
  void fill_one() {
    fn[R - 1][T - 1] = &K<R, T>::run;
  }
  template <int R, int... Ts>
  void fill_row(std::integer_sequence<int, Ts...>) {
    (fill_one<R, Ts + 1>(), ...);
  }
  template <int... Rs>
  void fill(std::integer_sequence<int, Rs...>) {
    (fill_row<Rs + 1>(std::make_integer_sequence<int, TM>()), ...);
  }
  TileTable() { fill(std::make_integer_sequence<int, RM>()); }
};

// y rows are `out` apart, x rows ldx, w rows ldw.
template <template <int, int> class K, int RM, int TM>
void linear_tiled(const float* x, int ldx, int rows, int in, const float* w, int ldw, const float* bias, int out, int o0,
                  int o1, float* y) {
  static const TileTable<K, RM, TM> table;
  for (int b0 = o0; b0 < o1; b0 += kRowBlock) {
    const int b1 = std::min(o1, b0 + kRowBlock);
    for (int t = 0; t < rows; t += TM) {
      const int nt = std::min(TM, rows - t);
      for (int o = b0; o < b1; o += RM) {
        const int nr = std::min(RM, b1 - o);
        table.fn[nr - 1][nt - 1](x + static_cast<size_t>(t) * ldx, ldx, in, w + static_cast<size_t>(o) * ldw, ldw,
                                 bias ? bias + o : nullptr, out, y + static_cast<size_t>(t) * out + o);
      }
    }
  }
}

}  // namespace

void linear_rows_avx2(const float* x, int rows, int in, const float* w, const float* bias, int out, int o0, int o1,
                      float* y) {
  if (rows == 1) return gemv_rows<Avx2Dot>(x, in, w, bias, o0, o1, y);
  linear_tiled<Avx2Tile, 2, 4>(x, in, rows, in, w, in, bias, out, o0, o1, y);
}

void linear_rows_avx512(const float* x, int rows, int in, const float* w, const float* bias, int out, int o0, int o1,
                        float* y) {
  if (rows == 1) return gemv_rows<Avx512Dot>(x, in, w, bias, o0, o1, y);
  linear_tiled<Avx512Tile, 4, 4>(x, in, rows, in, w, in, bias, out, o0, o1, y);
}
#endif  // ISPSIM_HAVE_X86_SIMD

void dot_rows_isa(Isa isa, const float* x, int ldx, int rows, int in, const float* w, int ldw, int o0, int o1, float* y,
                  int ldy) {
#if defined(ISPSIM_HAVE_X86_SIMD)
  if (isa >= Isa::kAvx512) return linear_tiled<Avx512Tile, 4, 4>(x, ldx, rows, in, w, ldw, nullptr, ldy, o0, o1, y);
  if (isa == Isa::kAvx2) return linear_tiled<Avx2Tile, 2, 4>(x, ldx, rows, in, w, ldw, nullptr, ldy, o0, o1, y);
#else
  (void)isa;
#endif
  for (int t = 0; t < rows; ++t)
    for (int o = o0; o < o1; ++o)
      y[static_cast<size_t>(t) * ldy + o] = dot(x + static_cast<size_t>(t) * ldx, w + static_cast<size_t>(o) * ldw, in);
}

void linear_isa(Isa isa, const float* x, int rows, int in, const float* w, const float* bias, int out, int o0, int o1,
                float* y) {
#if defined(ISPSIM_HAVE_X86_SIMD)
  if (isa >= Isa::kAvx512) return linear_rows_avx512(x, rows, in, w, bias, out, o0, o1, y);
  if (isa == Isa::kAvx2) return linear_rows_avx2(x, rows, in, w, bias, out, o0, o1, y);
#else
  (void)isa;
#endif
  linear_rows_scalar(x, rows, in, w, bias, out, o0, o1, y);
}

}  // namespace ispsim::model
