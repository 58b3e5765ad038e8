#include "kernels/rag/rag_model.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "common/error.h"
#include "common/input_file.h"
#include "kernels/rag/fnv1a.h"

namespace ispsim::rag {
namespace {

template <typename T>
uint64_t hash_vector(const std::vector<T>& v, uint64_t h) {
  const uint64_t n = v.size();
  h = fnv1a64(&n, sizeof n, h);
  return v.empty() ? h : fnv1a64(v.data(), v.size() * sizeof(T), h);
}

uint64_t hash_file(const std::string& path, uint64_t h) {
  check_input_file(path);  // a FIFO or device is refused, not read forever
  std::ifstream in(path, std::ios::binary);
  if (!in) throw BadInput(path, "cannot open file");
  h = fnv1a64(path.substr(path.find_last_of('/') + 1), h);  // the name too, so files cannot swap roles
  char buffer[1 << 16];
  while (in) {
    in.read(buffer, sizeof buffer);
    h = fnv1a64(buffer, static_cast<size_t>(in.gcount()), h);
  }
  return h;
}

// config.json and the weights files (model.safetensors, or the index and its shards).
uint64_t hash_checkpoint_dir(const std::string& dir, uint64_t h) {
  namespace fs = std::filesystem;
  h = hash_file(dir + "/config.json", h);
  std::vector<std::string> weights;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    const bool safetensors = name.size() > 12 && name.compare(name.size() - 12, 12, ".safetensors") == 0;
    if (safetensors || name == "model.safetensors.index.json") weights.push_back(e.path().string());
  }
  if (ec) throw BadInput(dir, "cannot list the checkpoint directory: " + ec.message());
  std::sort(weights.begin(), weights.end());
  for (const std::string& w : weights) h = hash_file(w, h);
  return h;
}

// A model without a directory (random test models): its shape and FP32 weights.
uint64_t hash_model_in_memory(const model::Model& m, uint64_t h) {
  const model::Config& c = m.config;
  for (int v : {c.vocab_size, c.hidden_size, c.ffn_size, c.num_layers, c.num_heads, c.num_kv_heads, c.head_dim,
                c.max_positions})
    h = fnv1a64(&v, sizeof v, h);
  const model::Weights& w = m.weights;
  for (const auto* v : {&w.token_embedding, &w.position_embedding, &w.final_norm, &w.final_norm_bias, &w.lm_head})
    h = hash_vector(*v, h);
  for (const model::LayerWeights& L : w.layers)
    for (const auto* v : {&L.attn_norm, &L.attn_norm_bias, &L.wq, &L.wk, &L.wv, &L.wo, &L.bq, &L.bk, &L.bv, &L.bo,
                          &L.ffn_norm, &L.ffn_norm_bias, &L.w_gate, &L.w_up, &L.w_down, &L.b_up, &L.b_down})
      h = hash_vector(*v, h);
  return h;
}

uint64_t hash_linear(const integer::IntLinear& l, uint64_t h) {
  for (int v : {l.rows, l.cols, l.group}) h = fnv1a64(&v, sizeof v, h);
  return hash_vector(l.bias, hash_vector(l.scale, hash_vector(l.q, h)));
}

uint64_t hash_norm(const integer::IntNorm& n, uint64_t h) {
  for (int64_t v : {int64_t{n.layer_norm}, int64_t{n.gamma_frac_bits}, n.eps_q40, int64_t{n.out_frac_bits}})
    h = fnv1a64(&v, sizeof v, h);
  return hash_vector(n.beta, hash_vector(n.gamma, h));
}

// Every number of the integer model: weights, scales and fixed-point formats.
uint64_t hash_integer_model(const integer::IntegerModel& m, uint64_t h) {
  for (int v : {m.vocab, m.hidden, m.ffn, m.heads, m.kv_heads, m.head_dim, m.max_positions, m.group,
                int{m.int16_requant}, int{m.swiglu}, int{m.rotary}, m.residual_frac, m.logits_frac})
    h = fnv1a64(&v, sizeof v, h);
  h = hash_linear(m.lm_head, hash_linear(m.positions, hash_linear(m.embedding, h)));
  h = hash_norm(m.final_norm, h);
  h = hash_vector(m.rope.sin_q30, hash_vector(m.rope.cos_q30, h));
  for (const integer::IntLayer& L : m.layers) {
    h = hash_norm(L.ffn_norm, hash_norm(L.attn_norm, h));
    for (const integer::IntLinear* w : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_gate, &L.w_up, &L.w_down}) h = hash_linear(*w, h);
    for (int v : {L.q_frac, L.k_frac, L.v_frac, L.gate_frac, L.up_frac, L.hidden_frac}) h = fnv1a64(&v, sizeof v, h);
  }
  return h;
}

uint64_t model_hash(const model::Model& m, const std::string& engine) {
  // Random test models carry a descriptive dir ("random(seed 42)") without files.
  std::error_code ec;
  const bool on_disk = !m.dir.empty() && std::filesystem::is_regular_file(m.dir + "/config.json", ec);
  uint64_t h = on_disk ? hash_checkpoint_dir(m.dir, kFnvOffsetBasis) : hash_model_in_memory(m, kFnvOffsetBasis);
  return fnv1a64("engine=" + engine, h);
}

}  // namespace

void RagModel::check_supported(const model::Config& c) {
  if (c.positions != model::PositionKind::kRope || !c.norm_before)
    throw BadInput("engine", std::string("RAG blending needs a rotary pre-norm model (Llama, Qwen2); ") +
                                 model::family_name(c.family) + " has learned positions or post-norm layers");
}

RagModel RagModel::fp32(const model::Model& model) {
  check_supported(model.config);
  RagModel r;
  r.model_ = &model;
  r.engine_ = "fp32";
  r.fingerprint_ = model_hash(model, r.engine_);
  return r;
}

RagModel RagModel::integer(const model::Model& model, const std::vector<int>& calibration_tokens,
                           integer::QuantStage stage, const integer::IntegerOptions& options) {
  check_supported(model.config);
  if (stage != integer::QuantStage::kInt16 && stage != integer::QuantStage::kIntNonlinear)
    throw BadInput("--quant", std::string("the integer engine is int16 or int-nonlinear, not ") +
                                  integer::stage_name(stage));
  integer::IntegerOptions o = options;
  o.stage = stage;
  std::unique_ptr<model::CausalLm> lm = integer::make_quantized_lm(model, o, calibration_tokens);
  const auto* integer_lm = dynamic_cast<const integer::IntegerLm*>(lm.get());
  if (!integer_lm) throw std::logic_error("make_quantized_lm did not build the integer engine");
  RagModel r;
  r.model_ = &model;
  r.engine_ = integer::stage_name(stage);
  r.integer_ = std::make_shared<const integer::IntegerModel>(integer_lm->integer_model());
  r.fingerprint_ = hash_integer_model(*r.integer_, model_hash(model, r.engine_));
  return r;
}

const integer::IntegerModel& RagModel::integer_model() const {
  if (!integer_) throw std::logic_error("RagModel::integer_model() on the FP32 engine");
  return *integer_;
}

}  // namespace ispsim::rag
