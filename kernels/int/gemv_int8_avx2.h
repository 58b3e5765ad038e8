// AVX2 int8 dot products (integer intrinsics only). Compiled with the AVX2
// target attribute so the rest of the build stays portable; callers check
// avx2_supported() first.
#pragma once

#include <cstdint>

namespace ispsim::integer {

bool avx2_supported();

#if defined(ISPSIM_HAVE_AVX2)
// Same contract as dot_s8_groups in gemv_int8.h; values in [-127, 127].
void dot_groups_avx2(const int8_t* w, const int8_t* x, int cols, int group, int32_t* partial);
// dot_s32 / axpy_s32 of gemv_int8.h.
int64_t dot_s32_avx2(const int32_t* a, const int32_t* b, int n);
void axpy_s32_avx2(int64_t p, const int32_t* v, int n, int64_t* acc);
// The scores of score_tiles_s32 (int_attention.h), without the row maxima.
void score_tiles_s32_avx2(const int32_t* q, int ldq, int nq, const int32_t* key_tiles, int head_dim, int tiles,
                          int64_t* s, int lds);
#endif

}  // namespace ispsim::integer
