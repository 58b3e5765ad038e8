// Float forward pass of the Llama family with fake quantization at every
// linear layer's input, used for three things:
//   - calibration (no quantization, records activation maxima: per channel
//     for SmoothQuant, per tensor for the integer path's fixed-point formats
//     and the static per-tensor W8A8 scales);
//   - ablation row "W8A8 per tensor": weights quantized per tensor (done by
//     the caller, see quantized_lm.h), activations with static per-tensor scales;
//   - ablation row "+SmoothQuant + group-wise": smoothed weights quantized per
//     (row, group), activations per (token, group) with dynamic scales.
// Nonlinear operators stay in float here. Pre-norm Llama/Qwen2 (RMSNorm, SwiGLU,
// RoPE) and pre-norm OPT (LayerNorm, ReLU, learned positions).
#pragma once

#include <vector>

#include "kernels/model/causal_lm.h"
#include "kernels/model/model.h"

namespace ispsim::integer {

// Which linear input an activation slot is.
enum Slot { kAttnIn = 0, kOutIn = 1, kFfnIn = 2, kDownIn = 3, kSlots = 4 };

struct LayerStats {
  std::vector<float> channel_max[kSlots];  // max |x_j| per input channel
  float input_max[kSlots] = {0, 0, 0, 0};  // max |x| over the whole input tensor
  float q_max = 0, k_max = 0, v_max = 0;   // after RoPE (q already divided by sqrt(head_dim))
  float gate_max = 0, up_max = 0;          // up = fc1 for OPT (no gate)
};

struct CalibrationStats {
  std::vector<LayerStats> layers;
  float residual_max = 0;  // residual stream, every layer, incl. the embeddings
  float head_in_max = 0;   // final norm output (lm_head input)
  float logits_max = 0;
  long long tokens = 0;
};

struct SimSettings {
  bool quantize_activations = false;
  int group = 0;  // 0: static per-tensor scales from `static_scales`; > 0: dynamic per (token, group)
  // Static per-tensor scales (max / 127), [layer][slot]; and for the lm_head input.
  std::vector<std::vector<float>> static_scales;
  float head_static_scale = 0;
};

class QuantSimLm : public model::CausalLm {
 public:
  // The model's weights are used as given (already smoothed / fake-quantized by
  // the caller). record, if not null, accumulates activation statistics.
  QuantSimLm(const model::Model& model, SimSettings settings, int capacity, CalibrationStats* record = nullptr);

  const model::Config& config() const override { return model_.config; }
  int capacity() const override { return capacity_; }
  int position() const override { return position_; }
  void reset() override { position_ = 0; }
  void forward(const int* tokens, int n, bool all_logits, std::vector<float>& logits) override;

 private:
  const float* quantized_input(const float* in, int n, int cols, int layer, int slot);
  void norm_rows(const std::vector<float>& weight, const std::vector<float>& bias, int n, const float* in, float* out);
  void attention(int layer, int n);
  void ffn(int layer, int n);

  const model::Model& model_;
  SimSettings settings_;
  int capacity_ = 0, position_ = 0;
  CalibrationStats* record_ = nullptr;
  std::vector<float> inv_freq_;
  std::vector<float> k_cache_, v_cache_;  // [layer][position][kv_dim]
  std::vector<float> x_, xb_, xq_, q_, k_, v_, att_, hb_, hb2_, scores_, cos_, sin_;
};

}  // namespace ispsim::integer
