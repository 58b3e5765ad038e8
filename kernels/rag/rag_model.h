// The engine a KV store is made with and blended on: the FP32 reference
// (kernels/model) or the integer-only engine (kernels/int). Only rotary
// pre-norm models (Llama, Qwen2 families) are supported: blending moves keys to
// new positions by re-rotating them, which learned positions (OPT) do not allow.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/int/int_engine.h"
#include "kernels/int/quantized_lm.h"
#include "kernels/model/model.h"

namespace ispsim::rag {

class RagModel {
 public:
  // The FP32 engine; keeps a reference to `model`.
  static RagModel fp32(const model::Model& model);
  // The integer engine of `model` at `stage` (int-nonlinear or int16),
  // calibrated exactly as `ispsim engine --quant <stage>` does
  // (integer::make_quantized_lm). Keeps a reference to `model`.
  static RagModel integer(const model::Model& model, const std::vector<int>& calibration_tokens,
                          integer::QuantStage stage = integer::QuantStage::kInt16,
                          const integer::IntegerOptions& options = {});

  bool is_integer() const { return integer_ != nullptr; }
  const std::string& engine_name() const { return engine_; }  // "fp32", "int16" or "int-nonlinear"
  const model::Config& config() const { return model_->config; }
  const model::Model& model() const { return *model_; }
  const integer::IntegerModel& integer_model() const;  // only when is_integer()
  int context() const { return model_->config.max_positions; }  // tokens
  // FNV-1a 64 over config.json and the weights files' bytes when the model
  // came from a checkpoint directory (the shape and weights in memory otherwise, e.g. random test
  // models), the engine name, and for the integer engine its whole integer
  // model (so a different calibration is a different model too).
  uint64_t fingerprint() const { return fingerprint_; }
  // Throws BadInput("engine", ...) unless rotary and pre-norm.
  static void check_supported(const model::Config& config);

 private:
  RagModel() = default;
  const model::Model* model_ = nullptr;
  std::shared_ptr<const integer::IntegerModel> integer_;
  std::string engine_;
  uint64_t fingerprint_ = 0;
};

}  // namespace ispsim::rag
