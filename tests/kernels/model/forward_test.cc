// FP32 forward pass: internal consistency (prefill == decode, GQA == MHA with
// duplicated KV heads), closed-form perplexity, windowing and greedy decoding.
#include <gtest/gtest.h>

#include <cmath>

#include "common/error.h"
#include "kernels/model/evaluation.h"
#include "kernels/model/fp32_lm.h"
#include "kernels/model/ops.h"
#include "tests/kernels/model/test_model.h"

namespace ispsim::model {
namespace {

using namespace testing;

const std::vector<int> kTokens = {5, 17, 42, 299, 0, 7, 7, 128, 64, 3, 250, 11};

std::vector<float> logits_all(CausalLm& lm, const std::vector<int>& tokens) {
  std::vector<float> logits;
  lm.reset();
  lm.forward(tokens.data(), static_cast<int>(tokens.size()), true, logits);
  return logits;
}

TEST(ModelForward, PrefillEqualsTokenByTokenDecodeForEveryFamily) {
  for (const std::string family : {"llama", "qwen2", "opt"}) {
    TinyModel tm;
    tm.family = family;
    Model m = load_model(make_tiny_model_dir("prefill_" + family, tm));
    Fp32Lm lm(m);
    std::vector<float> batch = logits_all(lm, kTokens);
    lm.reset();
    std::vector<float> one;
    const int v = m.config.vocab_size;
    for (size_t t = 0; t < kTokens.size(); ++t) {
      lm.forward(&kTokens[t], 1, false, one);
      for (int i = 0; i < v; ++i) ASSERT_NEAR(one[i], batch[t * v + i], 1e-4) << family << " t=" << t;
    }
    // Mixed: a prefill of 5 then a batch of the rest.
    lm.reset();
    lm.forward(kTokens.data(), 5, false, one);
    lm.forward(kTokens.data() + 5, static_cast<int>(kTokens.size()) - 5, false, one);
    for (int i = 0; i < v; ++i) ASSERT_NEAR(one[i], batch[(kTokens.size() - 1) * v + i], 1e-4) << family;
    EXPECT_EQ(lm.position(), static_cast<int>(kTokens.size()));
  }
}

TEST(ModelForward, GroupedQueryAttentionEqualsMhaWithDuplicatedKvHeads) {
  TinyModel tm;  // 4 query heads share 2 KV heads: head h reads KV head h / 2
  Model gqa = load_model(make_tiny_model_dir("gqa", tm));
  Model mha = gqa;
  mha.config.num_kv_heads = 4;
  const size_t row = static_cast<size_t>(gqa.config.head_dim) * gqa.config.hidden_size;
  for (LayerWeights& L : mha.weights.layers) {
    for (std::vector<float>* w : {&L.wk, &L.wv}) {
      std::vector<float> wide(4 * row);
      for (int h = 0; h < 4; ++h) std::copy_n(w->begin() + (h / 2) * row, row, wide.begin() + h * row);
      *w = wide;
    }
  }
  Fp32Lm a(gqa), b(mha);
  std::vector<float> la = logits_all(a, kTokens), lb = logits_all(b, kTokens);
  ASSERT_EQ(la.size(), lb.size());
  for (size_t i = 0; i < la.size(); ++i) ASSERT_NEAR(la[i], lb[i], 1e-5);
}

TEST(ModelForward, ZeroOutputMatrixGivesPerplexityEqualToVocabularySize) {
  TinyModel tm;
  tm.zero_lm_head = true;  // every logit 0: uniform over 300 tokens
  Model m = load_model(make_tiny_model_dir("uniform", tm));
  Fp32Lm lm(m);
  PerplexityResult r = perplexity(lm, kTokens);
  EXPECT_NEAR(r.perplexity, 300.0, 1e-9);
  EXPECT_NEAR(r.mean_nll, std::log(300.0), 1e-12);
  EXPECT_EQ(r.predicted, static_cast<long long>(kTokens.size()) - 1);
  EXPECT_EQ(r.windows, 1);
}

TEST(ModelForward, PerplexityWindowsOverlapByOneTokenAndRestartTheCache) {
  TinyModel tm;
  Model m = load_model(make_tiny_model_dir("windows", tm));
  Fp32Lm lm(m);
  const int window = 5;  // 12 tokens: windows [0,5) [4,9) [8,12) predict 4 + 4 + 3 = 11 tokens
  PerplexityResult r = perplexity(lm, kTokens, window);
  EXPECT_EQ(r.windows, 3);
  EXPECT_EQ(r.predicted, 11);
  double nll = 0.0;
  const int v = m.config.vocab_size;
  for (size_t start : {0, 4, 8}) {
    std::vector<int> w(kTokens.begin() + start, kTokens.begin() + std::min(start + window, kTokens.size()));
    std::vector<float> logits = logits_all(lm, w);
    for (size_t t = 0; t + 1 < w.size(); ++t) nll += negative_log_likelihood(&logits[t * v], v, w[t + 1]);
  }
  EXPECT_NEAR(r.mean_nll, nll / 11.0, 1e-12);
}

TEST(ModelForward, GreedyGenerationPicksTheArgmaxOfTheFullSequence) {
  TinyModel tm;
  tm.family = "qwen2";
  Model m = load_model(make_tiny_model_dir("greedy", tm));
  m.config.eos_token_ids.clear();  // run the full length
  Fp32Lm lm(m);
  std::vector<int> prompt(kTokens.begin(), kTokens.begin() + 4);
  std::vector<int> streamed;
  std::vector<int> out = generate_greedy(lm, prompt, 6, [&](int id) { streamed.push_back(id); });
  ASSERT_EQ(out.size(), 6u);
  EXPECT_EQ(out, streamed);
  std::vector<int> seq = prompt;
  seq.insert(seq.end(), out.begin(), out.end());
  std::vector<float> logits = logits_all(lm, seq);
  const int v = m.config.vocab_size;
  for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i], argmax(&logits[(prompt.size() - 1 + i) * v], v));
}

TEST(ModelForward, ContextBeyondTheCacheIsBadInput) {
  TinyModel tm;
  tm.max_positions = 8;
  Model m = load_model(make_tiny_model_dir("capacity", tm));
  Fp32Lm lm(m);
  std::vector<float> logits;
  EXPECT_THROW(lm.forward(kTokens.data(), 12, false, logits), BadInput);
  EXPECT_THROW(perplexity(lm, kTokens, 9), BadInput);
  std::vector<int> bad = {300};
  EXPECT_THROW(lm.forward(bad.data(), 1, false, logits), BadInput);
}

}  // namespace
}  // namespace ispsim::model

namespace ispsim::model {
namespace {

TEST(ModelForward, OptPostLayerNormWiringForOneTokenByHand) {
  // do_layer_norm_before false (post-LN): x = LN1(x + attn(x)); x = LN2(x + ffn(x)); no final norm.
  TinyModel tm;
  tm.family = "opt";
  tm.layers = 1;
  tm.tie = true;
  std::string dir = make_tiny_model_dir("opt_post_ln", tm);
  std::string config = tiny_config_json(tm);
  config.replace(config.find("\"do_layer_norm_before\":true"), 27, "\"do_layer_norm_before\":false");
  write_file(dir + "/config.json", config);
  std::vector<RawTensor> t = tiny_tensors(tm);
  t.resize(t.size() - 2);  // post-LN OPT has no model.decoder.final_layer_norm
  write_safetensors(dir + "/model.safetensors", t);
  Model m = load_model(dir);
  ASSERT_FALSE(m.config.norm_before);
  ASSERT_FALSE(m.config.final_norm);

  const int h = 32, f = 48, tok = 7;
  const Weights& w = m.weights;
  const LayerWeights& L = w.layers[0];
  std::vector<float> x(h), a(h), o(h), up(f), down(h);
  for (int i = 0; i < h; ++i) x[i] = w.token_embedding[tok * h + i] + w.position_embedding[2 * h + i];
  // One token attends only to itself: the attention output is its value vector.
  linear(x.data(), 1, h, L.wv.data(), L.bv.data(), h, a.data());
  linear(a.data(), 1, h, L.wo.data(), L.bo.data(), h, o.data());
  for (int i = 0; i < h; ++i) x[i] += o[i];
  layer_norm(x.data(), L.attn_norm.data(), L.attn_norm_bias.data(), h, 1e-5f, x.data());
  linear(x.data(), 1, h, L.w_up.data(), L.b_up.data(), f, up.data());
  for (float& u : up) u = std::max(u, 0.0f);
  linear(up.data(), 1, f, L.w_down.data(), L.b_down.data(), h, down.data());
  for (int i = 0; i < h; ++i) x[i] += down[i];
  layer_norm(x.data(), L.ffn_norm.data(), L.ffn_norm_bias.data(), h, 1e-5f, x.data());
  std::vector<float> want(m.config.vocab_size);
  linear(x.data(), 1, h, w.token_embedding.data(), nullptr, m.config.vocab_size, want.data());

  Fp32Lm lm(m);
  std::vector<float> got;
  lm.forward(&tok, 1, false, got);
  for (int i = 0; i < m.config.vocab_size; ++i) ASSERT_NEAR(got[i], want[i], 1e-4) << i;
}

}  // namespace
}  // namespace ispsim::model

namespace ispsim::model {
namespace {

TEST(ModelForward, LongWindowsAreFedInChunksWithTheSameResult) {
  TinyModel tm;  // RoPE model: the cache may exceed max_positions when asked to
  Model m = load_model(make_tiny_model_dir("chunks", tm));
  Fp32Lm lm(m, 700);
  std::vector<int> tokens(600);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int>((i * 7919) % 300);
  PerplexityResult r = perplexity(lm, tokens, 600);  // one window, three chunks of <= 256
  EXPECT_EQ(r.windows, 1);
  std::vector<float> logits;
  lm.reset();
  lm.forward(tokens.data(), 600, true, logits);
  double nll = 0.0;
  for (int t = 0; t + 1 < 600; ++t) nll += negative_log_likelihood(&logits[size_t(t) * 300], 300, tokens[t + 1]);
  EXPECT_NEAR(r.mean_nll, nll / 599.0, 1e-12);
}

}  // namespace
}  // namespace ispsim::model
