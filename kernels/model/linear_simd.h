// FP32 y = x W^T + b kernels for each instruction-set level (see cpu_isa.h).
// Every output y[t][o] is accumulated the same way whatever tile or thread
// computes it, so a batch (prefill) gives bit-identical rows to one token at a
// time, and any thread count gives identical results. Different levels round
// differently (lane count, FMA) and agree to FP32 rounding.
#pragma once

#include "kernels/model/cpu_isa.h"

namespace ispsim::model {

// Rows [o0, o1) of y for all `rows` input rows; bias may be null.
// avx2 / avx512 variants exist only when the compiler supports them
// (ISPSIM_HAVE_X86_SIMD); callers check isa_supported() first.
void linear_rows_scalar(const float* x, int rows, int in, const float* w, const float* bias, int out, int o0, int o1,
                        float* y);
void linear_rows_avx2(const float* x, int rows, int in, const float* w, const float* bias, int out, int o0, int o1,
                      float* y);
void linear_rows_avx512(const float* x, int rows, int in, const float* w, const float* bias, int out, int o0, int o1,
                        float* y);

// linear() of ops.h at a given level, on the calling thread only.
void linear_isa(Isa isa, const float* x, int rows, int in, const float* w, const float* bias, int out, int o0, int o1,
                float* y);

// y[t][o] = x[t]·w[o] (in elements) for t < rows, o in [o0, o1), on strided
// operands: x rows ldx floats apart, w rows ldw, y rows ldy (attention scores:
// queries × cached keys). Each output is accumulated as in linear_isa.
void dot_rows_isa(Isa isa, const float* x, int ldx, int rows, int in, const float* w, int ldw, int o0, int o1, float* y,
                  int ldy);

}  // namespace ispsim::model
