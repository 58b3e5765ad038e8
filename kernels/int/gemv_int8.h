// int8 x int8 -> int32 matrix-vector and matrix-matrix products.
//
// Weights are row-major [rows][cols] (one output per row, the HF Linear
// layout). Both operands must lie in [-127, 127] (the quantizers guarantee it):
// the AVX2 kernel multiplies |w| by sign(w) * x with maddubs, which is exact
// only without -128. An AVX2 kernel is used when the CPU has it (checked once
// at run time); otherwise, or when disabled, a portable loop.
#pragma once

#include <cstdint>

#include "kernels/int/fixed_point.h"

namespace ispsim::integer {

// Which dot-product kernel runs; set_simd_enabled(false) forces the portable one.
bool simd_available();
void set_simd_enabled(bool enabled);
bool simd_enabled();

// partial[g] = sum over group g of w[k] * x[k]; groups of `group` elements, the
// last one possibly shorter.
void dot_s8_groups(const int8_t* w, const int8_t* x, int cols, int group, int32_t* partial);

// y[r] = sum_k W[r][k] * x[k], exact.
void gemv_s8(const int8_t* W, const int8_t* x, int rows, int cols, int32_t* y);

// Group-wise scaled product: y[r] = sum_g round(dot_g * act_scale[g] * weight_scale[r][g]),
// saturated to int32. weight_scale is [rows][groups] and already contains the
// factor that maps to y's fixed-point format.
void gemv_s8_grouped(const int8_t* W, const int8_t* x, int rows, int cols, int group, const Dyadic* act_scale,
                     const Dyadic* weight_scale, int32_t* y);

// The same for `tokens` input rows X[t][cols] with act_scale[t][groups] into
// Y[t][rows]. Loops weight rows outermost so each weight row is read once.
void gemm_s8_grouped(const int8_t* W, const int8_t* X, int tokens, int rows, int cols, int group,
                     const Dyadic* act_scale, const Dyadic* weight_scale, int32_t* Y);

}  // namespace ispsim::integer
