// Integer activations: sigmoid and SiLU through the I-BERT i-exp (paper 1
// §3.1.3, IntSiLU), SwiGLU built on it, and ReLU (OPT).
#pragma once

#include <cstdint>

namespace ispsim::integer {

// sigmoid(x * 2^-frac_bits) as a Q30 integer: exp(-|x|) / (1 + exp(-|x|)) from
// i-exp, mirrored for x > 0. Saturates cleanly: exp(-|x|) is 0 beyond ~21.
int32_t int_sigmoid_q30(int64_t x, int frac_bits);

// out[i] = x[i] * sigmoid(x[i]); same scale in and out. In-place allowed.
void int_silu(const int32_t* x, int n, int frac_bits, int32_t* out);

// out[i] = silu(gate[i]) * up[i], rescaled to out_frac_bits. In-place on gate allowed.
void int_swiglu(const int32_t* gate, int gate_frac_bits, const int32_t* up, int up_frac_bits, int n, int32_t* out,
                int out_frac_bits);

// out[i] = max(x[i], 0). In-place allowed.
void int_relu(const int32_t* x, int n, int32_t* out);

}  // namespace ispsim::integer
