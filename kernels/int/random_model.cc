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
  for (int l = 0; l < c.num_layers; ++l) {
    model::LayerWeights w;
    w.attn_norm.assign(h, 1.0f);
    w.ffn_norm.assign(h, 1.0f);
    w.wq = random_matrix(qd, h, rng);
    w.wk = random_matrix(kvd, h, rng);
    w.wv = random_matrix(kvd, h, rng);
    w.wo = random_matrix(h, qd, rng);
    w.w_gate = random_matrix(f, h, rng);
    w.w_up = random_matrix(f, h, rng);
    w.w_down = random_matrix(h, f, rng);
    if (c.qkv_bias) {
      w.bq = random_matrix(1, qd, rng);
      w.bk = random_matrix(1, kvd, rng);
      w.bv = random_matrix(1, kvd, rng);
    }
    m.weights.layers.push_back(std::move(w));
  }
  m.weights.final_norm.assign(h, 1.0f);
  if (!c.tie_word_embeddings) m.weights.lm_head = random_matrix(c.vocab_size, h, rng);
  return m;
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
