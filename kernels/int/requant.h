// Requantization on the integer path.
//
// - Token-wise requantization (paper 1 §3.1.3): a whole token (one activation
//   row, or one row of attention scores) gets a single power-of-two scale so a
//   reduction over it (Softmax, RMSNorm) is valid. bits = 16 is the paper's
//   INT16 requantization; bits = 8 is the ablation without it.
// - Group-wise dynamic INT8 quantization of GEMM inputs: one scale per group of
//   `group` consecutive elements of a token (g = 128 by default).
#pragma once

#include <cstdint>

#include "kernels/int/fixed_point.h"

namespace ispsim::integer {

// Writes x >> shift (rounded, saturated) so that max|out| fills a signed
// `bits`-bit range (|out| <= 2^(bits-1) - 1), and returns shift; shift is
// negative when the row is small and gets shifted left. The output has
// (input frac bits - shift) fractional bits. An all-zero row returns 0.
int requantize_token(const int64_t* x, int n, int bits, int32_t* out);
int requantize_token(const int32_t* x, int n, int bits, int32_t* out);

// The shift requantize_token uses for a row whose max |x| is max_abs > 0.
int requant_shift(int64_t max_abs, int bits);

// max|x| / 127 as a dyadic number with a 15-bit multiplier (in units of the
// input scale); max_abs > 0.
Dyadic int8_scale_for_max(int64_t max_abs);

// For each group of `group` elements (the last may be shorter): q = round(x *
// 127 / max|x_group|), and scales[g] = max|x_group| / 127 in input units. An
// all-zero group gets scale 0 and q = 0.
void quantize_groups_int8(const int32_t* x, int n, int group, int8_t* q, Dyadic* scales);

}  // namespace ispsim::integer
