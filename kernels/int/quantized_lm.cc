#include "kernels/int/quantized_lm.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"
#include "kernels/int/quantize.h"
#include "kernels/model/cpu_isa.h"
#include "kernels/model/fp32_lm.h"
#include "kernels/model/ops.h"

namespace ispsim::integer {
namespace {
using model::Model;

constexpr int kActivationBits = 20;  // calibrated maxima land just below 2^20 in int32
constexpr int kGammaBits = 24;

// Every float weight matrix of the model, in one place.
std::vector<std::vector<float>*> linear_weights(model::LayerWeights& l) {
  return {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down};
}

// A float model whose weights are replaced by their INT8 round trip.
class FakeQuantLm : public model::CausalLm {
 public:
  FakeQuantLm(Model model, SimSettings settings, int capacity)
      : model_(std::make_unique<Model>(std::move(model))), sim_(*model_, std::move(settings), capacity) {}
  const model::Config& config() const override { return sim_.config(); }
  int capacity() const override { return sim_.capacity(); }
  int position() const override { return sim_.position(); }
  void reset() override { sim_.reset(); }
  void forward(const int* tokens, int n, bool all_logits, std::vector<float>& logits) override {
    sim_.forward(tokens, n, all_logits, logits);
  }

 private:
  std::unique_ptr<Model> model_;
  QuantSimLm sim_;
};

void fake_quantize_weights(Model& m, int group) {
  const int h = m.config.hidden_size;
  for (model::LayerWeights& l : m.weights.layers)
    for (std::vector<float>* w : linear_weights(l)) {
      if (w->empty()) continue;  // OPT has no gate
      const int cols = w == &l.wo ? m.config.q_dim() : (w == &l.w_down ? m.config.ffn_size : h);
      *w = dequantize(quantize_matrix(w->data(), static_cast<int>(w->size() / cols), cols, group));
    }
  std::vector<float>& out = m.weights.lm_head.empty() ? m.weights.token_embedding : m.weights.lm_head;
  out = dequantize(quantize_matrix(out.data(), m.config.vocab_size, h, group));
}

IntLinear make_linear(const std::vector<float>& w, const std::vector<float>& bias, int rows, int cols, int group,
                      int in_frac, int out_frac, double extra = 1.0) {
  QuantizedMatrix qm = quantize_matrix(w.data(), rows, cols, group);
  IntLinear l;
  l.rows = rows, l.cols = cols, l.group = group;
  l.q = std::move(qm.q);
  l.scale.resize(qm.scale.size());
  for (size_t i = 0; i < qm.scale.size(); ++i) l.scale[i] = to_dyadic(qm.scale[i] * extra * std::ldexp(1.0, out_frac - in_frac));
  for (float b : bias) l.bias.push_back(static_cast<int32_t>(std::llround(b * extra * std::ldexp(1.0, out_frac))));
  return l;
}

IntNorm make_norm(const std::vector<float>& gamma, const std::vector<float>& beta, bool layer_norm, float eps,
                  int out_frac) {
  IntNorm n;
  n.layer_norm = layer_norm;
  for (float b : beta) n.beta.push_back(static_cast<int32_t>(std::llround(std::ldexp(static_cast<double>(b), out_frac))));
  float max = 0;
  for (float g : gamma) max = std::max(max, std::fabs(g));
  n.gamma_frac_bits = frac_bits_for(max, kGammaBits);
  for (float g : gamma) n.gamma.push_back(static_cast<int32_t>(std::llround(std::ldexp(g, n.gamma_frac_bits))));
  n.eps_q40 = std::llround(std::ldexp(static_cast<double>(eps), 40));
  n.out_frac_bits = out_frac;
  return n;
}
}  // namespace

const char* stage_name(QuantStage stage) {
  switch (stage) {
    case QuantStage::kFp32: return "fp32";
    case QuantStage::kW8A8: return "w8a8";
    case QuantStage::kSmoothQuant: return "smoothquant";
    case QuantStage::kIntNonlinear: return "int-nonlinear";
    case QuantStage::kInt16: return "int16";
  }
  return "?";
}

std::vector<QuantStage> all_stages() {
  return {QuantStage::kFp32, QuantStage::kW8A8, QuantStage::kSmoothQuant, QuantStage::kIntNonlinear, QuantStage::kInt16};
}

QuantStage parse_stage(const std::string& name, const std::string& option) {
  for (QuantStage s : all_stages())
    if (name == stage_name(s)) return s;
  throw BadInput(option, "unknown quantization stage '" + name +
                             "' (expected fp32, w8a8, smoothquant, int-nonlinear or int16)");
}

void validate(const IntegerOptions& o) {
  if (!(o.smooth_alpha >= 0.0f && o.smooth_alpha <= 1.0f))
    throw BadInput("--smooth-alpha", "must be in [0, 1], got " + std::to_string(o.smooth_alpha));
  if (o.group_size < 1 || o.group_size > 65536)
    throw BadInput("--group-size", "must be in [1, 65536], got " + std::to_string(o.group_size));
  if (o.calibration_window < 1) throw BadInput("--calib-window", "must be at least 1 token");
  if (o.register_bits != 32 && o.register_bits != 64)
    throw BadInput("--register-bits", "must be 32 or 64, got " + std::to_string(o.register_bits));
}

CalibrationStats calibrate(const Model& model, const std::vector<int>& tokens, int window) {
  if (tokens.empty()) throw BadInput("calibration", "no calibration tokens (quantized stages need calibration text)");
  // The scalar FP32 kernels, whatever the machine: the formats and scales
  // chosen from these maxima must not depend on the ISA level (cpu_isa.h).
  const model::ScopedIsa portable(model::Isa::kScalar);
  CalibrationStats stats;
  window = std::min({window, static_cast<int>(tokens.size()), model.config.max_positions});
  QuantSimLm sim(model, SimSettings{}, window, &stats);
  std::vector<float> logits;
  for (size_t start = 0; start < tokens.size(); start += window) {
    const int n = static_cast<int>(std::min<size_t>(window, tokens.size() - start));
    sim.reset();
    sim.forward(&tokens[start], n, true, logits);
  }
  return stats;
}

Model smooth_model(const Model& model, const CalibrationStats& stats, float alpha) {
  Model m = model;
  const int h = m.config.hidden_size;
  for (size_t i = 0; i < m.weights.layers.size(); ++i) {
    model::LayerWeights& l = m.weights.layers[i];
    const LayerStats& s = stats.layers[i];
    // The norm output X_j is divided by s_j: its weight and (LayerNorm) bias.
    std::vector<float> sa = smoothquant_factors(s.channel_max[kAttnIn], {&l.wq, &l.wk, &l.wv}, h, alpha);
    for (int j = 0; j < h; ++j) l.attn_norm[j] /= sa[j];
    for (size_t j = 0; j < l.attn_norm_bias.size(); ++j) l.attn_norm_bias[j] /= sa[j];
    for (std::vector<float>* w : {&l.wq, &l.wk, &l.wv}) scale_columns(*w, h, sa);
    std::vector<const std::vector<float>*> ffn_in = {&l.w_up};
    if (!l.w_gate.empty()) ffn_in.push_back(&l.w_gate);
    std::vector<float> sf = smoothquant_factors(s.channel_max[kFfnIn], ffn_in, h, alpha);
    for (int j = 0; j < h; ++j) l.ffn_norm[j] /= sf[j];
    for (size_t j = 0; j < l.ffn_norm_bias.size(); ++j) l.ffn_norm_bias[j] /= sf[j];
    for (std::vector<float>* w : {&l.w_gate, &l.w_up})
      if (!w->empty()) scale_columns(*w, h, sf);
  }
  return m;
}

IntegerModel build_integer_model(const Model& model, const CalibrationStats& stats, int group, bool int16_requant,
                                 int max_positions) {
  const model::Config& c = model.config;
  IntegerModel im;
  im.vocab = c.vocab_size, im.hidden = c.hidden_size, im.ffn = c.ffn_size;
  im.heads = c.num_heads, im.kv_heads = c.num_kv_heads, im.head_dim = c.head_dim;
  im.max_positions = max_positions;
  im.group = group;
  im.int16_requant = int16_requant;
  im.swiglu = c.ffn == model::FfnKind::kSwiGlu;
  im.rotary = c.positions == model::PositionKind::kRope;
  const bool layer_norm = c.norm == model::NormKind::kLayer;
  im.residual_frac = frac_bits_for(stats.residual_max, kActivationBits);
  const int h = c.hidden_size, qd = c.q_dim(), kvd = c.kv_dim(), f = c.ffn_size;
  const double inv_sqrt = 1.0 / std::sqrt(static_cast<double>(c.head_dim));
  for (size_t i = 0; i < model.weights.layers.size(); ++i) {
    const model::LayerWeights& w = model.weights.layers[i];
    const LayerStats& s = stats.layers[i];
    IntLayer L;
    const int attn_in = frac_bits_for(s.input_max[kAttnIn], kActivationBits);
    const int ffn_in = frac_bits_for(s.input_max[kFfnIn], kActivationBits);
    L.attn_norm = make_norm(w.attn_norm, w.attn_norm_bias, layer_norm, c.norm_eps, attn_in);
    L.ffn_norm = make_norm(w.ffn_norm, w.ffn_norm_bias, layer_norm, c.norm_eps, ffn_in);
    L.q_frac = frac_bits_for(s.q_max, kActivationBits);
    L.k_frac = frac_bits_for(s.k_max, kActivationBits);
    L.v_frac = frac_bits_for(s.v_max, kActivationBits);
    L.gate_frac = frac_bits_for(s.gate_max, kActivationBits);
    L.up_frac = frac_bits_for(s.up_max, kActivationBits);
    // SwiGLU output has its own format; ReLU keeps fc1's.
    L.hidden_frac = im.swiglu ? frac_bits_for(s.input_max[kDownIn], kActivationBits) : L.up_frac;
    L.wq = make_linear(w.wq, w.bq, qd, h, group, attn_in, L.q_frac, inv_sqrt);  // 1/sqrt(d) folded into q
    L.wk = make_linear(w.wk, w.bk, kvd, h, group, attn_in, L.k_frac);
    L.wv = make_linear(w.wv, w.bv, kvd, h, group, attn_in, L.v_frac);
    L.wo = make_linear(w.wo, w.bo, h, qd, group, L.v_frac, im.residual_frac);
    if (im.swiglu) L.w_gate = make_linear(w.w_gate, {}, f, h, group, ffn_in, L.gate_frac);
    L.w_up = make_linear(w.w_up, w.b_up, f, h, group, ffn_in, L.up_frac);
    L.w_down = make_linear(w.w_down, w.b_down, h, f, group, L.hidden_frac, im.residual_frac);
    im.layers.push_back(std::move(L));
  }
  const int head_in = frac_bits_for(stats.head_in_max, kActivationBits);
  im.final_norm = make_norm(model.weights.final_norm, model.weights.final_norm_bias, layer_norm, c.norm_eps, head_in);
  im.logits_frac = frac_bits_for(stats.logits_max, kActivationBits);
  im.embedding = make_linear(model.weights.token_embedding, {}, c.vocab_size, h, group, 0, im.residual_frac);
  im.lm_head = make_linear(model.weights.output_matrix(), {}, c.vocab_size, h, group, head_in, im.logits_frac);
  if (im.rotary) {
    std::vector<float> inv_freq_f = model::rope_inv_freq(c);
    im.rope = build_rope_table(std::vector<double>(inv_freq_f.begin(), inv_freq_f.end()), max_positions);
  } else {
    im.max_positions = std::min(max_positions, c.max_positions);
    im.positions = make_linear(model.weights.position_embedding, {}, c.max_positions + model::kOptPositionOffset, h,
                               group, 0, im.residual_frac);
  }
  pack_weights(im);
  return im;
}

std::unique_ptr<model::CausalLm> make_quantized_lm(const Model& model, const IntegerOptions& options,
                                                   const std::vector<int>& calibration_tokens, int capacity) {
  validate(options);
  const model::Config& c = model.config;
  if (capacity <= 0) capacity = c.max_positions;
  if (options.stage == QuantStage::kFp32) return std::make_unique<model::Fp32Lm>(model, capacity);
  CalibrationStats stats = calibrate(model, calibration_tokens, options.calibration_window);
  if (options.stage == QuantStage::kW8A8) {
    Model m = model;
    fake_quantize_weights(m, 0);
    SimSettings s;
    s.quantize_activations = true;
    s.group = 0;
    for (const LayerStats& ls : stats.layers) {
      std::vector<float> scales;
      for (float mx : ls.input_max) scales.push_back(mx / 127.0f);
      s.static_scales.push_back(scales);
    }
    s.head_static_scale = stats.head_in_max / 127.0f;
    return std::make_unique<FakeQuantLm>(std::move(m), std::move(s), capacity);
  }
  Model smoothed = smooth_model(model, stats, options.smooth_alpha);
  if (options.stage == QuantStage::kSmoothQuant) {
    fake_quantize_weights(smoothed, options.group_size);
    SimSettings s;
    s.quantize_activations = true;
    s.group = options.group_size;
    return std::make_unique<FakeQuantLm>(std::move(smoothed), std::move(s), capacity);
  }
  CalibrationStats smoothed_stats = calibrate(smoothed, calibration_tokens, options.calibration_window);
  IntegerModel im = build_integer_model(smoothed, smoothed_stats, options.group_size,
                                        options.stage == QuantStage::kInt16, capacity);
  im.register_bits = options.register_bits;
  return std::make_unique<IntegerLm>(c, std::move(im), capacity);
}

IntegerLm::IntegerLm(const model::Config& config, IntegerModel integer_model, int capacity)
    : config_(config), model_(std::make_unique<IntegerModel>(std::move(integer_model))), engine_(*model_, capacity) {}

void IntegerLm::forward(const int* tokens, int n, bool all_logits, std::vector<float>& logits) {
  engine_.forward(tokens, n, all_logits, int_logits_);
  logits.resize(int_logits_.size());
  const float unit = std::ldexp(1.0f, -model_->logits_frac);
  for (size_t i = 0; i < int_logits_.size(); ++i) logits[i] = static_cast<float>(int_logits_[i]) * unit;
}

}  // namespace ispsim::integer
