#include "kernels/int/int_activation.h"

#include "kernels/int/fixed_point.h"
#include "kernels/int/gemv_int8_avx512.h"
#include "kernels/int/int_exp.h"
#include "kernels/model/cpu_isa.h"

namespace ispsim::integer {
namespace {
int32_t sigmoid_q30(int64_t x, const IExpParams& params) {
  int64_t e = i_exp(-abs64(x), params);                            // exp(-|x|) in i-exp units
  int64_t negative_half = (e << 30) / (params.one + e);            // sigmoid(-|x|), Q30
  return static_cast<int32_t>(x >= 0 ? (int64_t{1} << 30) - negative_half : negative_half);
}
}  // namespace

int32_t int_sigmoid_q30(int64_t x, int frac_bits) { return sigmoid_q30(x, i_exp_params(frac_bits)); }

void int_silu(const int32_t* x, int n, int frac_bits, int32_t* out) {
  IExpParams params = i_exp_params(frac_bits);
  for (int i = 0; i < n; ++i) out[i] = static_cast<int32_t>(round_shift(int64_t{x[i]} * sigmoid_q30(x[i], params), 30));
}

void int_swiglu(const int32_t* gate, int gate_frac_bits, const int32_t* up, int up_frac_bits, int n, int32_t* out,
                int out_frac_bits) {
  IExpParams params = i_exp_params(gate_frac_bits);
  const int shift = gate_frac_bits + up_frac_bits - out_frac_bits;
#if defined(ISPSIM_HAVE_X86_SIMD)
  if (model::active_isa() >= model::Isa::kAvx512 && shift >= 1 && shift <= 62)
    return int_swiglu_avx512(gate, up, n, params, shift, out);
#endif
  for (int i = 0; i < n; ++i) {
    int64_t silu = round_shift(int64_t{gate[i]} * sigmoid_q30(gate[i], params), 30);
    out[i] = saturate_int32(round_shift128(static_cast<__int128>(silu) * up[i], shift));
  }
}

void int_relu(const int32_t* x, int n, int32_t* out) {
  for (int i = 0; i < n; ++i) out[i] = x[i] > 0 ? x[i] : 0;
}

}  // namespace ispsim::integer
