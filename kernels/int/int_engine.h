// The integer-only forward pass of pre-norm decoder models: the Llama family
// (RMSNorm, SwiGLU, RoPE; GQA/MHA; optional q/k/v biases as in Qwen2) and OPT
// (LayerNorm, ReLU, learned positions, biases). Everything here is integer: the
// model arrives prepared by quantized_lm.h (which may use float at load), and
// the logits leave as int32 with a known number of fractional bits.
//
// Data formats (F = fractional bits, chosen at load from calibration so that
// the calibrated maximum sits just below 2^20; int32 leaves 2^11 headroom):
//   residual stream           int32, F_res
//   norm inputs               token-wise INT16 (or INT8 without the INT16 stage), power-of-two scale
//   linear-layer inputs       INT8, one dynamic scale per (token, group of 128)
//   weights                   INT8, one scale per (output row, group of 128) as a dyadic number
//   q (already / sqrt(d)), k, v, and the KV cache   int32, F_q, F_k, F_v
//   attention scores          int64 q.k, requantized token-wise to INT16 (or INT8) for Softmax
//   probabilities             Q30; attention output int32 at F_v
//   gate, up, SwiGLU output   int32, F_gate, F_up, F_hidden
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/int/fixed_point.h"
#include "kernels/int/gemv_int8.h"
#include "kernels/int/int_attention.h"
#include "kernels/int/rope_table.h"

namespace ispsim::integer {

struct IntLinear {
  int rows = 0, cols = 0, group = 0;
  std::vector<int8_t> q;       // [rows][cols]
  std::vector<Dyadic> scale;   // [rows][groups]: weight scale * 2^(F_out - F_in)
  std::vector<int32_t> bias;   // [rows] at F_out; empty when none
  PackedS8 packed;             // q and scale repacked for the AVX-512 VNNI kernel (pack_weights); may be empty
  int groups() const { return (cols + group - 1) / group; }
};

struct IntNorm {
  bool layer_norm = false;     // LayerNorm (OPT) instead of RMSNorm
  std::vector<int32_t> gamma;  // norm weight (divided by the SmoothQuant factors)
  std::vector<int32_t> beta;   // LayerNorm bias at out_frac_bits (divided likewise); empty for RMSNorm
  int gamma_frac_bits = 0;
  int64_t eps_q40 = 0;
  int out_frac_bits = 0;
};

struct IntLayer {
  IntNorm attn_norm, ffn_norm;
  IntLinear wq, wk, wv, wo, w_gate, w_up, w_down;
  int q_frac = 0, k_frac = 0, v_frac = 0;
  int gate_frac = 0, up_frac = 0, hidden_frac = 0;  // OPT: no gate, hidden = ReLU(fc1) at up_frac
};

struct IntegerModel {
  int vocab = 0, hidden = 0, ffn = 0, heads = 0, kv_heads = 0, head_dim = 0, max_positions = 0;
  int group = 128;
  bool int16_requant = true;  // false: norm and Softmax inputs requantized to INT8 instead (ablation)
  int register_bits = 64;     // 32: the norms and the Softmax in 32-bit registers (int_norm.h, int_exp.h)
  bool swiglu = true;         // SwiGLU FFN (Llama) or ReLU FFN (OPT)
  bool rotary = true;         // RoPE (Llama) or learned positions (OPT)
  int residual_frac = 0;
  IntLinear embedding;        // [vocab][hidden]; scale maps straight to the residual format
  IntLinear positions;        // OPT: [max_positions + 2][hidden], row p + 2 for position p, same format
  IntLinear lm_head;          // [vocab][hidden]
  IntNorm final_norm;
  int logits_frac = 0;
  RopeTable rope;
  std::vector<IntLayer> layers;

  // Bytes of weights read per decoded token (every matrix once, one embedding row).
  int64_t weight_bytes_per_token() const;
};

// Builds every linear layer's PackedS8 (a no-op without AVX-512 VNNI). Called
// once the weights are final; the kernels fall back to the row-major weights
// for a matrix without one.
void pack_weights(IntegerModel& model);

// y = W·x (+ bias) for n INT8 rows with their group scales, at the active ISA level and thread count.
void int_linear(const IntLinear& w, const int8_t* xq, const Dyadic* xs, int n, int32_t* out);

class IntegerEngine {
 public:
  IntegerEngine(const IntegerModel& model, int capacity);

  int capacity() const { return capacity_; }
  int position() const { return position_; }
  void reset() { position_ = 0; }
  // Same contract as model::CausalLm::forward, with int32 logits at model.logits_frac.
  void forward(const int* tokens, int n, bool all_logits, std::vector<int32_t>& logits);

 private:
  void norm_rows(const IntNorm& norm, int n, const int32_t* in, int32_t* out);
  void quantize_rows(const int32_t* in, int n, int cols);
  void linear(const IntLinear& w, int n, int32_t* out);
  void attention(int layer, int n);
  void ffn(int layer, int n);
  struct AttendScratch {
    std::vector<int64_t> scores, acc;
    std::vector<int32_t> queries, probs;
    std::vector<int> len;
    std::vector<ScoreMax> max;
  };
  void attend_block(int layer, int kv_head, int r0, int r1, AttendScratch& scratch);

  const IntegerModel& m_;
  int capacity_ = 0, position_ = 0;
  size_t key_offset(int layer, int kv_head) const;
  std::vector<int32_t> k_cache_;  // [layer][kv head][position / 16][head_dim][position % 16] (int_attention.h)
  std::vector<int32_t> v_cache_;  // [layer][position][kv_dim]
  std::vector<int32_t> x_, xn_, q_, k_, v_, att_, gate_, up_;
  std::vector<int8_t> xq_;
  std::vector<Dyadic> xs_;
};

}  // namespace ispsim::integer
