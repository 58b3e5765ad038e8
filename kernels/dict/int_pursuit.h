// Algorithm 1 on the integer path (paper 1 §4, "KV cache write path"): the
// controller keeps the residual in INT32, sends it to the array as INT8 (one
// power-of-two scale per step, the token-wise requantization of kernels/int),
// the array returns the INT32 projections D_q^T r8 on the INT8 dictionary, and
// the controller picks the atom and updates the residual in INT32.
//
// Number formats: x and the residual are int32 with F fractional bits (any F;
// the caller's). The dictionary is q (INT8) with per-tensor scale s_D. A
// coefficient is stored as an int64 in units of s_D·2^-F, so the code
// represents x ≈ Σ coef_p · s_D² · q_{index_p} · 2^-F; the residual update
// multiplies coef·q by s_D² given as a dyadic number (computed once at load).
//
// No floating point: compiled a second time under -mgeneral-regs-only.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/int/fixed_point.h"

namespace ispsim::dict {

struct IntDictionaryView {
  const int8_t* q = nullptr;  // [atoms][dim], values in [-127, 127]
  int atoms = 0;
  int dim = 0;
  integer::Dyadic scale_sq;   // s_D² as mult · 2^-shift
};

struct IntSparseCode {
  std::vector<int32_t> index;  // selection order, distinct
  std::vector<int64_t> coef;   // units of s_D · 2^-F
};

struct IntPursuitScratch {
  std::vector<int32_t> residual, r8_wide, corr;
  std::vector<int8_t> r8;
  std::vector<char> selected;
};

// k steps of Algorithm 1 (1 <= k <= atoms; the caller checks). residual_out,
// when not null, receives the final INT32 residual (dim values).
void int_projection_pursuit(const IntDictionaryView& d, const int32_t* x, int k, IntSparseCode& code,
                            IntPursuitScratch& s, int32_t* residual_out = nullptr);

}  // namespace ispsim::dict
