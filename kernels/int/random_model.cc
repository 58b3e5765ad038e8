#include "kernels/int/random_model.h"

#include <cmath>
#include <random>

namespace ispsim::integer {
namespace {
std::vector<float> random_matrix(int rows, int cols, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  const float scale = 1.0f / std::sqrt(static_cast<float>(cols));
  std::vector<float> w(static_cast<size_t>(rows) * cols);
  for (float& v : w) v = d(rng) * scale;
  return w;
}
}  // namespace

model::Model make_random_model(const model::Config& c, uint32_t seed) {
  std::mt19937 rng(seed);
  model::Model m;
  m.config = c;
  m.dir = "random(seed " + std::to_string(seed) + ")";
  const int h = c.hidden_size, qd = c.q_dim(), kvd = c.kv_dim(), f = c.ffn_size;
  m.weights.token_embedding = random_matrix(c.vocab_size, h, rng);
  for (float& v : m.weights.token_embedding) v *= std::sqrt(static_cast<float>(h));  // embeddings of order one
  const bool opt = c.family == model::Family::kOpt;
  if (opt) {
    m.weights.position_embedding = random_matrix(c.max_positions + model::kOptPositionOffset, h, rng);
    for (float& v : m.weights.position_embedding) v *= std::sqrt(static_cast<float>(h));
  }
  for (int l = 0; l < c.num_layers; ++l) {
    model::LayerWeights w;
    w.attn_norm.assign(h, 1.0f);
    w.ffn_norm.assign(h, 1.0f);
    if (opt) {  // LayerNorm biases and every linear bias (enable_bias)
      w.attn_norm_bias = random_matrix(1, h, rng);
      w.ffn_norm_bias = random_matrix(1, h, rng);
      w.bo = random_matrix(1, h, rng);
      w.b_up = random_matrix(1, f, rng);
      w.b_down = random_matrix(1, h, rng);
    }
    w.wq = random_matrix(qd, h, rng);
    w.wk = random_matrix(kvd, h, rng);
    w.wv = random_matrix(kvd, h, rng);
    w.wo = random_matrix(h, qd, rng);
    if (!opt) w.w_gate = random_matrix(f, h, rng);
    w.w_up = random_matrix(f, h, rng);
    w.w_down = random_matrix(h, f, rng);
    if (c.qkv_bias || opt) {
      w.bq = random_matrix(1, qd, rng);
      w.bk = random_matrix(1, kvd, rng);
      w.bv = random_matrix(1, kvd, rng);
    }
    m.weights.layers.push_back(std::move(w));
  }
  m.weights.final_norm.assign(h, 1.0f);
  if (opt) m.weights.final_norm_bias = random_matrix(1, h, rng);
  if (!c.tie_word_embeddings) m.weights.lm_head = random_matrix(c.vocab_size, h, rng);
  return m;
}

model::Config opt_config(int vocab, int hidden, int ffn, int layers, int heads, int max_positions) {
  model::Config c;
  c.family = model::Family::kOpt;
  c.architecture = "OPTForCausalLM";
  c.norm = model::NormKind::kLayer;
  c.ffn = model::FfnKind::kRelu;
  c.positions = model::PositionKind::kLearned;
  c.vocab_size = vocab;
  c.hidden_size = hidden;
  c.ffn_size = ffn;
  c.num_layers = layers;
  c.num_heads = heads;
  c.num_kv_heads = heads;
  c.head_dim = hidden / heads;
  c.max_positions = max_positions;
  c.qkv_bias = c.o_bias = c.mlp_bias = true;
  c.tie_word_embeddings = true;
  return c;
}

model::Config smollm2_135m_config() {
  model::Config c;
  c.family = model::Family::kLlama;
  c.architecture = "LlamaForCausalLM";
  c.vocab_size = 49152;
  c.hidden_size = 576;
  c.ffn_size = 1536;
  c.num_layers = 30;
  c.num_heads = 9;
  c.num_kv_heads = 3;
  c.head_dim = 64;
  c.max_positions = 8192;
  c.norm_eps = 1e-5f;
  c.rope_theta = 100000.0f;
  c.tie_word_embeddings = true;
  return c;
}

}  // namespace ispsim::integer
