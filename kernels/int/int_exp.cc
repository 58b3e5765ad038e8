#include "kernels/int/int_exp.h"

#include "kernels/int/fixed_point.h"
#include "kernels/int/gemv_int8_avx512.h"
#include "kernels/model/cpu_isa.h"

namespace ispsim::integer {
namespace {
// Real constants as Q30 / Q28 integers (computed once with Python, rounded).
constexpr int64_t kLn2Q30 = 744261118;           // ln 2
constexpr int64_t kBQ30 = 1452772688;            // 1.353
constexpr int64_t kCOverAQ30 = 1030312936;       // 0.344 / 0.3585
constexpr int64_t kInverseAQ28 = 748773936;      // 1 / 0.3585
constexpr int kMinWorkFracBits = 12;
constexpr int kMaxWorkFracBits = 14;
}  // namespace

IExpParams i_exp_params(int input_frac_bits) {
  IExpParams p;
  int f = input_frac_bits;
  if (f < kMinWorkFracBits) f = kMinWorkFracBits;
  if (f > kMaxWorkFracBits) f = kMaxWorkFracBits;
  p.work_frac_bits = f;
  p.input_shift = input_frac_bits - f;
  p.q_ln2 = round_shift(kLn2Q30, 30 - f);
  p.q_b = round_shift(kBQ30, 30 - f);
  p.q_c = round_shift(kCOverAQ30, 30 - 2 * f);
  p.one = round_shift(kInverseAQ28, 28 - 2 * f);
  p.underflow = 31 * p.q_ln2;
  p.by_ln2 = invariant_divisor(static_cast<uint64_t>(p.q_ln2), bit_length(static_cast<uint64_t>(p.underflow)));
  return p;
}

int32_t i_exp(int64_t x, const IExpParams& params) {
  if (x > 0) x = 0;
  // Bring the input to the working scale; anything below -2^40 is exp() = 0 anyway.
  if (x < -(int64_t{1} << 40)) return 0;
  int64_t xs = params.input_shift >= 0 ? -round_shift(-x, params.input_shift)
                                        : x * (int64_t{1} << -params.input_shift);
  // z = floor(-xs / q_ln2) (xs <= 0); z >= 31 exactly when -xs >= 31 · q_ln2.
  if (-xs >= params.underflow) return 0;
  const int64_t z = static_cast<int64_t>(divide(static_cast<uint64_t>(-xs), params.by_ln2));
  int64_t p = xs + z * params.q_ln2;  // in (-ln2, 0]
  int64_t t = p + params.q_b;
  int64_t poly = t * t + params.q_c;  // < 2^30 by the working-scale clamp
  return static_cast<int32_t>(poly >> z);
}

void int_softmax(const int32_t* x, int n, int frac_bits, int32_t* out, int out_frac_bits) {
  IExpParams params = i_exp_params(frac_bits);
#if defined(ISPSIM_HAVE_X86_SIMD)
  if (model::active_isa() >= model::Isa::kAvx512 && out_frac_bits >= 0 && out_frac_bits <= 62)
    return int_softmax_avx512(x, n, params, out, out_frac_bits);
#endif
  int32_t max = x[0];
  for (int i = 1; i < n; ++i) max = x[i] > max ? x[i] : max;
  int64_t sum = 0;
  for (int i = 0; i < n; ++i) {
    out[i] = i_exp(int64_t{x[i]} - max, params);
    sum += out[i];
  }
  // sum >= exp(0) > 2^20, and out[i] <= sum, so out[i] * inverse <= 2^62.
  int64_t inverse = (int64_t{1} << 62) / sum;
  for (int i = 0; i < n; ++i) out[i] = static_cast<int32_t>(round_shift(out[i] * inverse, 62 - out_frac_bits));
}

void int_softmax_reg32(const int32_t* x, int n, int frac_bits, int32_t* out) {
  const IExpParams params = i_exp_params(frac_bits);
  int32_t max = x[0];
  for (int i = 1; i < n; ++i) max = x[i] > max ? x[i] : max;
  const int guard = bit_length(static_cast<uint64_t>(n));
  uint32_t sum = 0;  // < n · 2^30 / 2^guard < 2^30
  for (int i = 0; i < n; ++i) {
    out[i] = i_exp(int64_t{x[i]} - max, params) >> guard;
    sum += static_cast<uint32_t>(out[i]);
  }
  if (sum == 0) sum = 1;  // only in rows of 2^25 elements or more: the max's exp is above 2^25
  const int b = bit_length(sum);
  const uint32_t reciprocal = static_cast<uint32_t>((uint64_t{1} << (30 + b)) / sum);  // in (2^30, 2^31]
  for (int i = 0; i < n; ++i) out[i] = static_cast<int32_t>((uint64_t(uint32_t(out[i])) * reciprocal) >> b);
}

}  // namespace ispsim::integer
