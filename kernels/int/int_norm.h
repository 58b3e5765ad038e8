// Integer RMSNorm (Llama) and LayerNorm (OPT).
//
// Inputs are token-wise requantized activations (INT16 or INT8 range, see
// requant.h) with frac_bits fractional bits. The root mean square comes from a
// Newton-Raphson integer square root, the division from one fixed-point
// reciprocal 2^62 / rms per token, and the output from a multiply-and-shift.
// Where paper 1 shifts inside 32-bit registers we use 64-bit accumulators
// (still integer-only; a 16-bit input times 2^13 elements needs 43 bits).
#pragma once

#include <cstdint>

namespace ispsim::integer {

// floor(sqrt(n)) by Newton-Raphson from a power-of-two start above the root.
uint64_t isqrt(uint64_t n);

// Per-model constants of a norm layer, all integers.
struct NormWeights {
  const int32_t* gamma = nullptr;  // n weights with gamma_frac_bits fractional bits
  int gamma_frac_bits = 0;
  const int32_t* beta = nullptr;   // LayerNorm only: n biases with out_frac_bits (may be null)
  int64_t eps_q40 = 0;             // epsilon * 2^40
};

// out = x / sqrt(mean(x^2) + eps) * gamma. Requires |x| < 2^20.
void int_rmsnorm(const int32_t* x, int n, int frac_bits, const NormWeights& w, int32_t* out,
                 int out_frac_bits);

// out = (x - mean) / sqrt(var + eps) * gamma + beta. Requires |x| < 2^16, n <= 2^14.
void int_layernorm(const int32_t* x, int n, int frac_bits, const NormWeights& w, int32_t* out,
                   int out_frac_bits);

// The same in 32-bit registers, as paper 1 §3.1.3 describes its RMSNorm:
// the squares are shifted right by an even guard g (the fewest bits that keep
// their sum below 2^31, from the row's max |x| and n) before the reduction;
// the mean (+ eps) is shifted left by an even amount to 29-30 bits for the
// integer square root (15 bits); the reciprocal 2^45 / root fits 31 bits; x
// times it and the result times gamma are products of two 32-bit registers
// followed by a shift. LayerNorm centres on the rounded integer mean first.
void int_rmsnorm_reg32(const int32_t* x, int n, int frac_bits, const NormWeights& w, int32_t* out, int out_frac_bits);
void int_layernorm_reg32(const int32_t* x, int n, int frac_bits, const NormWeights& w, int32_t* out,
                         int out_frac_bits);

}  // namespace ispsim::integer
