#include "models/cim/cost.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "traces/trace.pb.h"

namespace ispsim::cim {

double ComputeCost::energy_pj(double ops) const {
  return ops * op_pj + std::ceil(ops / static_cast<double>(simd_width)) * overhead_pj;
}

double overlap_ns(double t1, double t2, double rho) {
  return std::max(t1, t2) + (1.0 - rho) * std::min(t1, t2);
}

double overlap_ns(const std::vector<double>& times, double rho) {
  if (times.empty()) return 0;
  double t = times.front();
  for (size_t i = 1; i < times.size(); ++i) t = overlap_ns(t, times[i], rho);
  return t;
}

FloatOps float_ops_per_element(int kind) {
  switch (kind) {
    // max, subtract, exp, sum, multiply by the reciprocal of the sum.
    case trace::NONLINEAR_SOFTMAX: return {3, 1, 0, 0, 1};
    // square and accumulate, scale by 1/rms and by gamma; the per-row sqrt and
    // divide are added per row by the caller (negligible: once per hidden vector).
    case trace::NONLINEAR_RMSNORM: return {1, 3, 0, 0, 0};
    case trace::NONLINEAR_LAYERNORM: return {3, 3, 0, 0, 0};
    // silu(g) = g / (1 + exp(-g)); times up.
    case trace::NONLINEAR_SILU: return {1, 1, 1, 0, 1};
    case trace::NONLINEAR_SWIGLU: return {1, 2, 1, 0, 1};
    case trace::NONLINEAR_RELU: return {1, 0, 0, 0, 0};
    case trace::NONLINEAR_GELU: return {2, 3, 1, 0, 1};
    // rotate pairs: x0 cos - x1 sin, x0 sin + x1 cos = 2 mul + 1 add per element.
    case trace::NONLINEAR_ROPE: return {1, 2, 0, 0, 0};
    case trace::NONLINEAR_RESIDUAL_ADD: return {1, 0, 0, 0, 0};
    case trace::NONLINEAR_REQUANTIZE: return {1, 1, 0, 0, 0};
    default: throw std::logic_error("cim: no operation count for nonlinear kind " + std::to_string(kind));
  }
}

IntOps int_ops_per_element(int kind) {
  // I-BERT's i-exp: q = floor(x / ln2) (1 mul), r = x - q ln2 (1 mul, 1 add),
  // a (r + b)^2 + c (2 mul, 2 add; the square counts as a mul), shift = 3 mul + 3 add
  // (the (r+b)^2 square folded into the second mul).
  constexpr IntOps iexp{3, 3};
  switch (kind) {
    // max (1 add), subtract (1 add), i-exp, sum (1 add), fixed-point reciprocal
    // multiply-and-shift (1 mul, 1 add for the shift).
    case trace::NONLINEAR_SOFTMAX: return {iexp.add + 4, iexp.mul + 1};
    // INT16 requantization (1 mul, 1 add), square (1 mul), accumulate (1 add),
    // multiply-and-shift by 1/sqrt (1 mul, 1 add), gamma (1 mul); the per-row
    // Newton-Raphson sqrt is negligible per element.
    case trace::NONLINEAR_RMSNORM: return {3, 4};
    case trace::NONLINEAR_LAYERNORM: return {5, 5};
    // i-exp of -g, 1 + e (1 add), reciprocal multiply (1 mul, 1 add), g * sigma (1 mul).
    case trace::NONLINEAR_SILU: return {iexp.add + 2, iexp.mul + 2};
    case trace::NONLINEAR_SWIGLU: return {iexp.add + 2, iexp.mul + 3};  // and * up
    case trace::NONLINEAR_RELU: return {1, 0};
    case trace::NONLINEAR_GELU: return {iexp.add + 3, iexp.mul + 4};
    // fixed-point cos/sin tables: 2 mul + 1 add per element, plus the shift (1 add).
    case trace::NONLINEAR_ROPE: return {2, 2};
    case trace::NONLINEAR_RESIDUAL_ADD: return {1, 0};
    case trace::NONLINEAR_REQUANTIZE: return {1, 1};
    default: throw std::logic_error("cim: no operation count for nonlinear kind " + std::to_string(kind));
  }
}

}  // namespace ispsim::cim
