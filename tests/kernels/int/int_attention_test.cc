// The tiled attention of the integer engine and the flash attention of the
// FP32 engine, at every ISA level the machine supports (a level it lacks is
// skipped with its reason):
// - integer: the score tiles and the fused requantization + Softmax equal the
//   whole-row operators (per-pair int64 dot, requantize_token, int_softmax)
//   bit for bit, on key counts that are and are not multiples of the tile;
//   and the engine's logits equal, bit for bit, those of the engine before
//   the tiling (fingerprints recorded from the whole-row engine);
// - FP32: the online Softmax over key blocks against a double-precision
//   attention, and the engine over several key blocks: batched prefill equal
//   to token-at-a-time, within FP32 rounding of the scalar level's original loop.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/int/gemv_int8.h"
#include "kernels/int/int_attention.h"
#include "kernels/int/int_exp.h"
#include "kernels/int/quantized_lm.h"
#include "kernels/int/random_model.h"
#include "kernels/int/requant.h"
#include "kernels/model/attention_simd.h"
#include "kernels/model/cpu_isa.h"
#include "kernels/model/fp32_lm.h"

namespace ispsim::integer {
namespace {

using model::Isa;

class TiledAttention : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!model::isa_supported(GetParam()))
      GTEST_SKIP() << model::isa_name(GetParam()) << ": " << model::isa_unsupported_reason(GetParam());
    model::set_active_isa(GetParam());
  }
  void TearDown() override { model::set_active_isa(model::best_isa()); }
};

// Keys [keys][hd] into the tile-transposed layout (zero past the last key).
std::vector<int32_t> to_key_tiles(const std::vector<int32_t>& k, int keys, int hd) {
  const int tiles = (keys + kKeyTile - 1) / kKeyTile;
  std::vector<int32_t> out(static_cast<size_t>(tiles) * kKeyTile * hd, 0);
  for (int t = 0; t < keys; ++t)
    for (int i = 0; i < hd; ++i) out[key_tile_index(t, i, hd)] = k[static_cast<size_t>(t) * hd + i];
  return out;
}

TEST_P(TiledAttention, IntegerTilesEqualWholeRowOperators) {
  std::mt19937 rng(41);
  for (auto [nq, hd, keys, range] : {std::tuple{12, 64, 513, 1 << 20}, {3, 64, 1, 1 << 20}, {7, 32, 16, 1 << 24},
                                     {1, 48, 17, 1 << 10}, {13, 80, 100, 1 << 27}, {6, 64, 47, 0}}) {
    std::uniform_int_distribution<int32_t> d(-range, range);
    std::vector<int32_t> q(static_cast<size_t>(nq) * hd), k(static_cast<size_t>(keys) * hd);
    for (int32_t& e : q) e = d(rng);
    for (int32_t& e : k) e = d(rng);
    std::vector<int> len(nq);
    for (int j = 0; j < nq; ++j) len[j] = std::max(1, keys - (nq - 1 - j));  // a causal block of queries
    const int tiles = (keys + kKeyTile - 1) / kKeyTile, lds = tiles * kKeyTile;
    const std::vector<int32_t> key_tiles = to_key_tiles(k, keys, hd);
    std::vector<int64_t> s(static_cast<size_t>(nq) * lds);
    std::vector<ScoreMax> max(nq);
    score_tiles_s32(q.data(), hd, nq, key_tiles.data(), hd, tiles, len.data(), s.data(), lds, max.data());
    for (int j = 0; j < nq; ++j) {
      std::vector<int64_t> want(len[j]);
      for (int t = 0; t < len[j]; ++t) {
        for (int i = 0; i < hd; ++i) want[t] += int64_t{q[static_cast<size_t>(j) * hd + i]} * k[static_cast<size_t>(t) * hd + i];
        ASSERT_EQ(s[static_cast<size_t>(j) * lds + t], want[t]) << nq << "x" << hd << "x" << keys << " j " << j << " t " << t;
      }
      const auto [lo, hi] = std::minmax_element(want.begin(), want.end());
      ASSERT_EQ(max[j].value, *hi);
      ASSERT_EQ(max[j].abs, std::max(std::abs(*lo), std::abs(*hi)));
      for (int bits : {16, 8})
        for (int frac : {30, 41, 60}) {
          std::vector<int32_t> reference(len[j]), got(len[j]);
          {
            const model::ScopedIsa scalar(Isa::kScalar);
            const int shift = requantize_token(want.data(), len[j], bits, reference.data());
            int_softmax(reference.data(), len[j], frac - shift, reference.data(), 30);
          }
          scores_to_probs(&s[static_cast<size_t>(j) * lds], len[j], max[j], bits, frac, 64, got.data());
          ASSERT_EQ(got, reference) << nq << "x" << hd << "x" << keys << " j " << j << " bits " << bits << " frac " << frac;
        }
    }
  }
}

// FNV-1a over the logits of an integer engine: a prefill of `prompt` tokens
// (all logits), then `decode` single tokens, on a random model of the shape.
model::Config attention_shape(int heads, int kv_heads, int head_dim) {
  model::Config c;
  c.vocab_size = 300;
  c.hidden_size = 192;
  c.ffn_size = 320;
  c.num_layers = 2;
  c.num_heads = heads;
  c.num_kv_heads = kv_heads;
  c.head_dim = head_dim;
  c.max_positions = 160;
  c.rope_theta = 10000.0f;
  c.tie_word_embeddings = true;
  return c;
}

uint64_t logits_fingerprint(const model::Config& c, QuantStage stage, int prompt, int decode) {
  const model::Model m = make_random_model(c, 31);
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> tok(0, c.vocab_size - 1);
  std::vector<int> calib(96), tokens(prompt + decode);
  for (int& t : calib) t = tok(rng);
  for (int& t : tokens) t = tok(rng);
  IntegerOptions o;
  o.stage = stage;
  o.calibration_window = 48;
  auto lm = make_quantized_lm(m, o, calib, c.max_positions);
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](const std::vector<float>& logits) {
    for (float f : logits) {
      uint32_t bits = 0;
      std::memcpy(&bits, &f, 4);
      for (int b = 0; b < 4; ++b) h = (h ^ ((bits >> (8 * b)) & 0xFF)) * 1099511628211ull;
    }
  };
  std::vector<float> logits;
  lm->forward(tokens.data(), prompt, true, logits);
  mix(logits);
  for (int t = prompt; t < prompt + decode; ++t) {
    lm->forward(&tokens[t], 1, false, logits);
    mix(logits);
  }
  return h;
}

// Fingerprints of the integer engine's logits recorded before its attention
// was tiled (whole rows of scores, requantize_token, int_softmax; identical at
// every level): prompts shorter and longer than a key tile, not multiples of
// it, GQA and MHA, head sizes 32, 48 and 64, INT16 and INT8 requantization.
TEST_P(TiledAttention, IntegerEngineLogitsEqualTheWholeRowEngine) {
  struct Case {
    int heads, kv_heads, head_dim, prompt, decode;
    QuantStage stage;
    uint64_t fingerprint;
  };
  for (const Case& c : {Case{6, 2, 32, 77, 6, QuantStage::kInt16, 0x43dffff6947de36full},
                        Case{4, 4, 48, 150, 3, QuantStage::kInt16, 0xccf7a35a5e1e574cull},
                        Case{6, 2, 32, 33, 4, QuantStage::kIntNonlinear, 0x632e6df6fa990174ull},
                        Case{3, 1, 64, 16, 2, QuantStage::kInt16, 0x1206f7a017979344ull}})
    EXPECT_EQ(logits_fingerprint(attention_shape(c.heads, c.kv_heads, c.head_dim), c.stage, c.prompt, c.decode),
              c.fingerprint)
        << c.heads << "/" << c.kv_heads << " heads of " << c.head_dim << ", " << c.prompt << "-token prompt";
}

// Online Softmax over blocks of keys, continued through accumulate_values,
// against softmax attention in double: several blocks, ragged last blocks,
// a later block whose scores exceed every earlier one (the rescaling) and
// scores far below the max (exp underflows to 0).
TEST_P(TiledAttention, Fp32OnlineSoftmaxAgreesWithDoubleReference) {
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> d(-4.0f, 4.0f);
  for (auto [nq, hd, keys, block] : {std::tuple{5, 64, 200, 64}, {3, 20, 17, 8}, {1, 128, 64, 64}, {9, 80, 130, 32}}) {
    std::vector<float> q(static_cast<size_t>(nq) * hd), k(static_cast<size_t>(keys) * hd), v(k.size());
    for (float& e : q) e = d(rng);
    for (float& e : k) e = d(rng);
    for (float& e : v) e = d(rng);
    for (int i = 0; i < hd; ++i) k[static_cast<size_t>(keys - 1) * hd + i] = 3.0f * q[i];  // a late, dominant key
    if (keys > 2) k[hd] = -50.0f;
    std::vector<int> len(nq);
    for (int j = 0; j < nq; ++j) len[j] = keys - (nq - 1 - j);
    std::vector<float> o(static_cast<size_t>(nq) * hd, 0.0f), m(nq, -INFINITY), l(nq, 0.0f), p(static_cast<size_t>(nq) * block);
    std::vector<int> count(nq);
    const float scale = 0.125f;
    for (int t0 = 0; t0 < keys; t0 += block) {
      const int t1 = std::min(keys, t0 + block);
      for (int j = 0; j < nq; ++j) {
        count[j] = std::clamp(len[j] - t0, 0, t1 - t0);
        for (int t = t0; t < t0 + count[j]; ++t) {
          float dot = 0.0f;
          for (int i = 0; i < hd; ++i) dot += q[static_cast<size_t>(j) * hd + i] * k[static_cast<size_t>(t) * hd + i];
          p[static_cast<size_t>(j) * block + t - t0] = dot;
        }
        if (count[j] == 0) continue;
        const float a = model::online_softmax_block_isa(GetParam(), &p[static_cast<size_t>(j) * block], count[j], scale, &m[j], &l[j]);
        for (int i = 0; i < hd; ++i) o[static_cast<size_t>(j) * hd + i] *= a;
      }
      model::accumulate_values_isa(GetParam(), p.data(), block, nq, count.data(), &v[static_cast<size_t>(t0) * hd], hd, hd,
                                   o.data(), hd);
    }
    for (int j = 0; j < nq; ++j) {
      std::vector<double> w(len[j]);
      double mx = -1e300, sum = 0;
      for (int t = 0; t < len[j]; ++t) {
        double dot = 0;
        for (int i = 0; i < hd; ++i) dot += double{q[static_cast<size_t>(j) * hd + i]} * k[static_cast<size_t>(t) * hd + i];
        w[t] = dot * scale;
        mx = std::max(mx, w[t]);
      }
      for (double& e : w) sum += e = std::exp(e - mx);
      for (int i = 0; i < hd; ++i) {
        double want = 0;
        for (int t = 0; t < len[j]; ++t) want += w[t] / sum * v[static_cast<size_t>(t) * hd + i];
        ASSERT_NEAR(o[static_cast<size_t>(j) * hd + i] / l[j], want, 4e-4)
            << nq << "x" << hd << "x" << keys << " block " << block << " j " << j << " i " << i;
      }
    }
  }
}

// The FP32 engine over several key blocks (a 150-token prompt, blocks of 64):
// a batched prefill gives the bits of token-at-a-time decode, and the logits
// agree with the scalar level's original attention loop within FP32 rounding.
TEST_P(TiledAttention, Fp32FlashEngineIsBatchInvariantAndAgreesWithScalar) {
  const model::Model m = make_random_model(attention_shape(6, 2, 32), 17);
  std::vector<int> prompt(150);
  for (int i = 0; i < 150; ++i) prompt[i] = (i * 61 + 11) % 300;
  auto last_logits = [&](Isa isa, bool batched) {
    const model::ScopedIsa level(isa);
    model::Fp32Lm lm(m, 160);
    std::vector<float> logits;
    if (batched) {
      lm.forward(prompt.data(), 150, false, logits);
    } else {
      for (int t : prompt) lm.forward(&t, 1, false, logits);
    }
    return logits;
  };
  const std::vector<float> batched = last_logits(GetParam(), true);
  EXPECT_EQ(batched, last_logits(GetParam(), false));
  const std::vector<float> reference = last_logits(Isa::kScalar, true);
  const auto [lo, hi] = std::minmax_element(reference.begin(), reference.end());
  for (size_t i = 0; i < batched.size(); ++i) ASSERT_NEAR(batched[i], reference[i], 1e-4 * (*hi - *lo)) << i;
}

INSTANTIATE_TEST_SUITE_P(, TiledAttention, ::testing::Values(Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kAmx),
                         [](const ::testing::TestParamInfo<Isa>& info) { return std::string(model::isa_name(info.param)); });

}  // namespace
}  // namespace ispsim::integer
