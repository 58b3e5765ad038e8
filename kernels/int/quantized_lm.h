// The quantized language models the CLI and the benchmarks use, one per stage
// of the cumulative ablation (paper 1 §3.1):
//
//   fp32           the FP32 reference (kernels/model/fp32_lm.h)
//   w8a8           INT8 weights with one scale per tensor, INT8 activations with
//                  static per-tensor scales from calibration; float nonlinear ops
//                  (fake quantization in float: the same numbers an integer GEMM gives)
//   smoothquant    + SmoothQuant smoothing folded into the RMSNorm weights, and
//                  group-wise scales (g = 128 along the input dimension) for
//                  weights (per output row) and activations (per token, dynamic)
//   int-nonlinear  + the integer-only engine: integer RMSNorm (LayerNorm for
//                  OPT), Softmax, SiLU (ReLU), RoPE and residual stream; the inputs of RMSNorm and Softmax
//                  are requantized token-wise to INT8 (one scale per token)
//   int16          + INT16 token-wise requantization of those inputs (the full method)
//
// Calibration runs the FP32 model over the calibration tokens once (per-channel
// maxima for SmoothQuant, per-tensor maxima for the static scales and fixed-point
// formats); for the integer stages a second pass over the smoothed model picks
// the fixed-point formats.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kernels/int/int_engine.h"
#include "kernels/int/quant_sim_lm.h"
#include "kernels/model/causal_lm.h"
#include "kernels/model/model.h"

namespace ispsim::integer {

enum class QuantStage { kFp32 = 0, kW8A8 = 1, kSmoothQuant = 2, kIntNonlinear = 3, kInt16 = 4 };

const char* stage_name(QuantStage stage);
// Parses a stage name as printed by stage_name; BadInput(option, ...) otherwise.
QuantStage parse_stage(const std::string& name, const std::string& option = "--quant");
std::vector<QuantStage> all_stages();

struct IntegerOptions {
  QuantStage stage = QuantStage::kInt16;
  // SmoothQuant migration strength alpha; 0.5 is the SmoothQuant paper's
  // default (Xiao et al. 2023, §4) and paper 1 does not state another.
  float smooth_alpha = 0.5f;
  // Group size along the hidden (input) dimension: paper 1 §3.1.2 uses 128.
  int group_size = 128;
  // Calibration runs in windows of this many tokens from an empty KV cache;
  // 256 = the demo model's context (max_position_embeddings). Capped at the
  // model's context.
  int calibration_window = 256;
  // Width of the registers of the integer norms and Softmax: 64 (headroom:
  // no shift drops a bit before a reduction) or 32, the width paper 1 §3.1.3
  // runs them in ("32-bit multiply-and-shift with appropriate bit-shifts
  // during reductions to prevent overflow").
  int register_bits = 64;
};

// Throws BadInput("--<option>", ...) for values out of range.
void validate(const IntegerOptions& options);

// Activation statistics of `model` over `tokens` (FP32, no quantization).
CalibrationStats calibrate(const model::Model& model, const std::vector<int>& tokens, int window);

// A copy of `model` with SmoothQuant factors folded into the attention and FFN
// RMSNorm weights and the q/k/v and gate/up columns.
model::Model smooth_model(const model::Model& model, const CalibrationStats& stats, float alpha);

// The integer model of a (smoothed) float model and its calibration statistics.
IntegerModel build_integer_model(const model::Model& model, const CalibrationStats& stats, int group, bool int16_requant,
                                 int max_positions);

// The language model of options.stage. calibration_tokens may be empty only for
// fp32. capacity: KV cache in tokens (0 = the model's max_positions). The
// returned object keeps a reference to `model`.
std::unique_ptr<model::CausalLm> make_quantized_lm(const model::Model& model, const IntegerOptions& options,
                                                   const std::vector<int>& calibration_tokens, int capacity = 0);

// The integer engine behind the CausalLm interface (logits converted to float
// at the very end, outside the integer path).
class IntegerLm : public model::CausalLm {
 public:
  IntegerLm(const model::Config& config, IntegerModel integer_model, int capacity);
  const model::Config& config() const override { return config_; }
  int capacity() const override { return engine_.capacity(); }
  int position() const override { return engine_.position(); }
  void reset() override { engine_.reset(); }
  void forward(const int* tokens, int n, bool all_logits, std::vector<float>& logits) override;
  const IntegerModel& integer_model() const { return *model_; }

 private:
  model::Config config_;
  std::unique_ptr<IntegerModel> model_;  // stable address for the engine
  IntegerEngine engine_;
  std::vector<int32_t> int_logits_;
};

}  // namespace ispsim::integer
