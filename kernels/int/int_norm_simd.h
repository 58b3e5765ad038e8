// The vector parts of the integer norms (int_norm.h) at the AVX2 and AVX-512
// levels: the token-wise requantization of their input rows (requant.h), the
// row reductions and the per-element scaling, integer intrinsics only.
// Compiled with target attributes; the callers check the level first.
#pragma once

#include <cstdint>

namespace ispsim::integer {

// Σ v² exactly (each square split into its high and low 32 bits, summed in
// int64 lanes) and max |v|.
struct SquareSums {
  unsigned __int128 sumsq = 0;
  uint64_t max_abs = 0;
};

#if defined(ISPSIM_HAVE_AVX2)
// out[i] = saturate_int32(round_shift(clamp_int32(round_shift(v[i] · mult, shift1)) · gamma[i], shift2) + beta[i])
// (beta may be null), 0 <= mult < 2^63. Requires shift1, shift2 in [1, 62] and, for shift1 <= 32,
// |v[i] · mult| + 2^(shift1−1) < 2^63. For shift1 >= 33 the product is exact for any v: with
// mult = hi · 2^32 + lo, round_shift(v · mult, s) = (v · hi + 2^(s−33) + (v · lo >> 32)) >> (s − 32),
// every term within int64. v and out may be the same row.
void norm_scale_avx2(const int32_t* v, int n, int64_t mult, int shift1, const int32_t* gamma, int shift2,
                     const int32_t* beta, int32_t* out);
SquareSums square_sums_avx2(const int32_t* v, int n);
// max over i of (uint32) v[i]², and Σ ((uint32) v[i]² >> guard) in uint32 (wrapping, like the scalar code).
uint32_t max_square_u32_avx2(const int32_t* v, int n);
uint32_t guarded_square_sum_avx2(const int32_t* v, int n, int guard);
// requantize_token of requant.h on an int32 row, bits <= 31.
int requantize_token_avx2(const int32_t* x, int n, int bits, int32_t* out);
#endif

#if defined(ISPSIM_HAVE_X86_SIMD)
void norm_scale_avx512(const int32_t* v, int n, int64_t mult, int shift1, const int32_t* gamma, int shift2,
                       const int32_t* beta, int32_t* out);
SquareSums square_sums_avx512(const int32_t* v, int n);
uint32_t max_square_u32_avx512(const int32_t* v, int n);
uint32_t guarded_square_sum_avx512(const int32_t* v, int n, int guard);
int requantize_token_avx512(const int32_t* x, int n, int bits, int32_t* out);
#endif

}  // namespace ispsim::integer
