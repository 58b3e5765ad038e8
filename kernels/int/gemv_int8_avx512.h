// AVX-512 VNNI int8 GEMM on weights packed for vpdpbusd (integer intrinsics
// only). Compiled with target attributes; callers check the CPU first
// (model::isa_supported(Isa::kAvx512)).
#pragma once

#include <cstdint>

#include "kernels/int/fixed_point.h"

namespace ispsim::integer {

struct PackedS8;
struct IExpParams;
struct ScoreMax;

#if defined(ISPSIM_HAVE_X86_SIMD)
// Rows [r0, r1) (multiples of 16, r1 may be the ragged end) of
// Y[t][rows] = Σ_g round(partial · act_scale[t][g] · weight_scale[r][g]) for all
// tokens; X_biased is X + 128 as bytes, [tokens][packed.cols_padded].
void gemm_s8_packed_avx512(const PackedS8& packed, const uint8_t* X_biased, int tokens, const Dyadic* act_scale,
                           int r0, int r1, int32_t* Y);
// The AMX kernel's scaling of one group (ScaleRowsFn of amx_gemm_kernel.h):
// sums[t][r] += round(partial[t][r] · act[t].mult · wmult[r], act[t].shift + wshift[r]), r < 16.
void scale_add_rows_avx512(const int32_t* partial, int ld_partial, int tokens, const Dyadic* act, int act_stride,
                           const int64_t* wmult, const int64_t* wshift, int64_t* sums, int ld_sums);
// dot_s32 / axpy_s32 of gemv_int8.h.
int64_t dot_s32_avx512(const int32_t* a, const int32_t* b, int n);
void axpy_s32_avx512(int64_t p, const int32_t* v, int n, int64_t* acc);
// int_softmax of int_exp.h (params = i_exp_params(frac_bits)).
void int_softmax_avx512(const int32_t* x, int n, const IExpParams& params, int32_t* out, int out_frac_bits);
// quantize_groups_int8 of requant.h.
void quantize_groups_int8_avx512(const int32_t* x, int n, int group, int8_t* q, Dyadic* scales);
// weighted_sum_s32 of gemv_int8.h, blocked over the queries.
void weighted_sum_s32_avx512(const int32_t* p, int ldp, int nq, const int32_t* v, int ldv, int nk, int n,
                             int64_t* acc, int ldacc);
// int_swiglu of int_activation.h for out shifts in [1, 62] (params = i_exp_params(gate_frac_bits)).
void int_swiglu_avx512(const int32_t* gate, const int32_t* up, int n, const IExpParams& params, int shift,
                       int32_t* out);
// score_tiles_s32 / scores_to_probs of int_attention.h (the row maxima fused into the score tiles).
void score_tiles_s32_avx512(const int32_t* q, int ldq, int nq, const int32_t* key_tiles, int head_dim, int tiles,
                            const int* len, int64_t* s, int lds, ScoreMax* max);
void scores_to_probs_avx512(const int64_t* s, int n, int64_t max_abs, int64_t max_value, int bits, int frac_bits,
                            int32_t* probs);
#endif

}  // namespace ispsim::integer
