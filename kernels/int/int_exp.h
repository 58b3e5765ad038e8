// I-BERT integer exponential and the integer Softmax built on it.
//
// exp(x) for x <= 0 is split as x = -ln2 * z + p with p in (-ln2, 0], so
// exp(x) = exp(p) >> z, and exp(p) ~ 0.3585 (p + 1.353)^2 + 0.344 (I-BERT, Kim
// et al. 2021, second-order fit). Inputs carry frac_bits fractional bits
// (value = x * 2^-frac_bits); all coefficients are integers in that scale.
#pragma once

#include <cstdint>

#include "kernels/int/fixed_point.h"

namespace ispsim::integer {

// Precomputed integer constants of i-exp for one input scale.
struct IExpParams {
  int input_shift = 0;   // the input is shifted right by this (left if negative) first
  int work_frac_bits = 0;  // fractional bits after that shift (12..14)
  int64_t q_ln2 = 0;     // ln2 in the working scale
  int64_t q_b = 0;       // 1.353 in the working scale
  int64_t q_c = 0;       // 0.344 / 0.3585 in the output scale
  int64_t one = 0;       // 1.0 in the output scale: 2^(2 * work_frac_bits) / 0.3585
  int64_t underflow = 0;  // 31 · q_ln2: a working-scale input at or below minus this is exp() = 0
  InvariantDivisor by_ln2;  // division by q_ln2 for 0 <= a < underflow
};

// The working scale is clamped to 12..14 fractional bits: at 14 the square
// (p + q_b)^2 + q_c stays below 2^30 (the overflow-avoiding right shift of
// paper 1 §3.1), at 12 the rounding of the constants stays below 2.5e-4.
IExpParams i_exp_params(int input_frac_bits);

// exp(x * 2^-frac_bits) for x <= 0, in units of 0.3585 * 2^(-2 * work_frac_bits)
// (so params.one represents 1.0). Positive x is treated as 0.
int32_t i_exp(int64_t x, const IExpParams& params);

// Softmax over one row of n >= 1 values with frac_bits fractional bits. Output
// probabilities have out_frac_bits (<= 30) fractional bits. Max subtraction,
// i-exp, a 64-bit integer sum and one fixed-point reciprocal 2^62 / sum.
void int_softmax(const int32_t* x, int n, int frac_bits, int32_t* out, int out_frac_bits);

// The same in 32-bit registers, as paper 1 §3.1.3 describes its Softmax: each
// i-exp value (< 2^30, the right shift before the approximation being the
// working-scale clamp) is shifted right by g = bit_length(n) before the
// reduction so the sum fits 31 bits; the reciprocal 2^(30+b) / sum (b =
// bit_length(sum)) lies in (2^30, 2^31], an unsigned 32-bit register; p = (e >> g) · reciprocal >> b, a product of
// two 32-bit registers then a shift. Q30 output. The g dropped bits are the
// cost: in a row of n values, an exponential below 2^g contributes nothing.
void int_softmax_reg32(const int32_t* x, int n, int frac_bits, int32_t* out);

}  // namespace ispsim::integer
