// Small random models and documents shared by the RAG tests.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "kernels/int/random_model.h"
#include "kernels/model/model.h"
#include "kernels/rag/blend.h"

namespace ispsim::rag::testing {

// A GQA Llama-family model with head_dim 64, so store tiles hold T = 64
// tokens and a 200-token context spans four tiles.
inline model::Config rag_config() {
  model::Config c;
  c.vocab_size = 300;
  c.hidden_size = 192;
  c.ffn_size = 320;
  c.num_layers = 3;
  c.num_heads = 4;
  c.num_kv_heads = 2;
  c.head_dim = 64;
  c.max_positions = 256;
  c.rope_theta = 10000.0f;
  c.tie_word_embeddings = true;
  return c;
}

inline std::vector<int> random_tokens(int n, int vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(0, vocab - 1);
  std::vector<int> t(n);
  for (int& v : t) v = d(rng);
  return t;
}

// Three documents of 70, 45 and 90 tokens (205 context tokens: four tiles).
inline std::vector<Document> rag_documents(int vocab) {
  return {{"alpha", random_tokens(70, vocab, 11)}, {"beta", random_tokens(45, vocab, 12)},
          {"gamma", random_tokens(90, vocab, 13)}};
}

}  // namespace ispsim::rag::testing
