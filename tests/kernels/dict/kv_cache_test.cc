// The compressed KV cache: hierarchical sparsity at N = 100 %, window and
// compression bookkeeping against a brute-force dense reference, the
// compression-ratio formula on hand-computed cases, and the decoder's dense
// path against the FP32 reference.
#include <cmath>
#include <cstring>
#include <deque>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "common/error.h"
#include "kernels/dict/accounting.h"
#include "kernels/dict/decoder.h"
#include "kernels/dict/kv_cache.h"
#include "kernels/int/random_model.h"
#include "kernels/model/fp32_lm.h"

namespace ispsim::dict {
namespace {

Dictionary random_dictionary(int atoms, int dim, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> n(0.0f, 1.0f);
  Dictionary d;
  d.atoms = atoms;
  d.dim = dim;
  d.data.resize(static_cast<size_t>(atoms) * dim);
  for (float& v : d.data) v = n(rng);
  normalize_atoms(d);
  return d;
}

std::vector<float> random_vector(size_t n, std::mt19937& rng) {
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

constexpr int kHeads = 4, kKvHeads = 2, kDim = 16, kAtoms = 64;

CacheSettings small_settings() {
  CacheSettings s;
  s.window_tokens = 8;
  s.unit_tokens = 4;
  s.k_high = 6;
  s.k_low = 2;
  return s;
}

TEST(DictCache, HierarchicalWithFullRefinementEqualsKHighExactly) {
  const Dictionary dk = random_dictionary(kAtoms, kDim, 1), dv = random_dictionary(kAtoms, kDim, 2);
  CacheSettings plain = small_settings();
  CacheSettings hier = plain;
  hier.hierarchical = true;
  hier.refine_fraction = 1.0;
  CompressedKvCache a(dk, dv, kHeads, kKvHeads, kDim, plain), b(dk, dv, kHeads, kKvHeads, kDim, hier);
  std::mt19937 rng(3);
  for (int t = 0; t < 37; ++t) {
    const std::vector<float> k = random_vector(kKvHeads * kDim, rng), v = random_vector(kKvHeads * kDim, rng);
    a.append(k.data(), v.data());
    b.append(k.data(), v.data());
    const std::vector<float> q = random_vector(kHeads * kDim, rng);
    std::vector<float> oa(kHeads * kDim), ob(kHeads * kDim);
    StepReads ra, rb;
    a.attend(q.data(), oa.data(), &ra);
    b.attend(q.data(), ob.data(), &rb);
    EXPECT_EQ(0, std::memcmp(oa.data(), ob.data(), oa.size() * sizeof(float))) << "after " << t + 1 << " tokens";
    EXPECT_EQ(ra.key_entries, rb.key_entries);
    EXPECT_EQ(ra.value_entries, rb.value_entries);
  }
  EXPECT_EQ(a.compressed_tokens(), 32);  // the test did reach the compressed region
}

TEST(DictCache, HierarchicalRefinesTheTopFractionAndReadsLess) {
  const Dictionary dk = random_dictionary(kAtoms, kDim, 1), dv = random_dictionary(kAtoms, kDim, 2);
  CacheSettings hier = small_settings();
  hier.hierarchical = true;
  hier.refine_fraction = 0.25;
  CompressedKvCache c(dk, dv, kHeads, kKvHeads, kDim, hier);
  std::mt19937 rng(4);
  for (int t = 0; t < 48; ++t) {
    const std::vector<float> k = random_vector(kKvHeads * kDim, rng), v = random_vector(kKvHeads * kDim, rng);
    c.append(k.data(), v.data());
  }
  ASSERT_EQ(c.compressed_tokens(), 40);
  const std::vector<float> q = random_vector(kHeads * kDim, rng);
  std::vector<float> out(kHeads * kDim);
  StepReads r;
  c.attend(q.data(), out.data(), &r);
  // ceil(0.25 · 40) = 10 tokens per query head; two query heads share a KV head, so each
  // KV head reads 10..20 tokens at K_high and the rest at K_low.
  EXPECT_GE(r.refined_tokens, 2u * 10u);
  EXPECT_LE(r.refined_tokens, 2u * 20u);
  EXPECT_EQ(r.key_entries, r.refined_tokens * 6 + (2u * 40u - r.refined_tokens) * 2);
  EXPECT_EQ(r.value_entries, r.key_entries);
  EXPECT_EQ(r.window_tokens, 8u);
  EXPECT_EQ(r.compressed_tokens, 40u);
}

// Brute force: a dense list of every token; a token leaves the window exactly when
// the reference says so, its stored codes are the pursuit of its own K/V, and the
// attention equals plain softmax attention over [reconstructed compressed ; window].
TEST(DictCache, BookkeepingAndAttentionMatchBruteForceDenseReference) {
  const Dictionary dk = random_dictionary(kAtoms, kDim, 5), dv = random_dictionary(kAtoms, kDim, 6);
  const CacheSettings s = small_settings();
  CompressedKvCache cache(dk, dv, kHeads, kKvHeads, kDim, s);
  std::mt19937 rng(7);
  std::vector<std::vector<float>> keys, values;
  int ref_compressed = 0;
  PursuitScratch scratch;
  for (int t = 0; t < 45; ++t) {
    keys.push_back(random_vector(kKvHeads * kDim, rng));
    values.push_back(random_vector(kKvHeads * kDim, rng));
    cache.append(keys.back().data(), values.back().data());
    while (static_cast<int>(keys.size()) - ref_compressed > s.window_tokens) ref_compressed += s.unit_tokens;
    ASSERT_EQ(cache.compressed_tokens(), ref_compressed);
    ASSERT_EQ(cache.window_tokens(), static_cast<int>(keys.size()) - ref_compressed);
    ASSERT_LE(cache.window_tokens(), s.window_tokens);
    if (ref_compressed > 0) { ASSERT_GT(cache.window_tokens(), s.window_tokens - s.unit_tokens); }

    // Reconstructed K/V of every token.
    const int n = static_cast<int>(keys.size());
    std::vector<float> rk(static_cast<size_t>(n) * kKvHeads * kDim), rv(rk.size());
    for (int i = 0; i < n; ++i) {
      for (int g = 0; g < kKvHeads; ++g) {
        float* dst_k = &rk[(static_cast<size_t>(i) * kKvHeads + g) * kDim];
        float* dst_v = &rv[(static_cast<size_t>(i) * kKvHeads + g) * kDim];
        if (i < ref_compressed) {
          SparseCode expect;
          projection_pursuit(dk, &keys[i][g * kDim], s.k_high, expect, scratch);
          const SparseCode& got = cache.code(i, g, Stream::kKey);
          ASSERT_EQ(got.index, expect.index);
          for (int p = 0; p < got.size(); ++p) EXPECT_EQ(got.coef[p], round_to_fp16(expect.coef[p]));
          reconstruct(dk, got, s.k_high, dst_k);
          reconstruct(dv, cache.code(i, g, Stream::kValue), s.k_high, dst_v);
        } else {
          std::memcpy(dst_k, &keys[i][g * kDim], kDim * sizeof(float));
          std::memcpy(dst_v, &values[i][g * kDim], kDim * sizeof(float));
        }
      }
    }
    const std::vector<float> q = random_vector(kHeads * kDim, rng);
    std::vector<float> out(kHeads * kDim);
    cache.attend(q.data(), out.data());
    for (int h = 0; h < kHeads; ++h) {
      const int g = h / (kHeads / kKvHeads);
      std::vector<double> score(n);
      double mx = -1e300, sum = 0;
      for (int i = 0; i < n; ++i) {
        double dot = 0;
        for (int e = 0; e < kDim; ++e) dot += double(q[h * kDim + e]) * rk[(size_t(i) * kKvHeads + g) * kDim + e];
        score[i] = dot / std::sqrt(double(kDim));
        mx = std::max(mx, score[i]);
      }
      for (double& x : score) sum += (x = std::exp(x - mx));
      for (int e = 0; e < kDim; ++e) {
        double o = 0;
        for (int i = 0; i < n; ++i) o += score[i] / sum * rv[(size_t(i) * kKvHeads + g) * kDim + e];
        EXPECT_NEAR(out[h * kDim + e], o, 2e-5) << "tokens " << n << " head " << h;
      }
    }
  }
}

TEST(DictCache, SettingsOutsideTheirRangeAreBadInput) {
  const Dictionary d = random_dictionary(kAtoms, kDim, 1);
  CacheSettings s = small_settings();
  s.unit_tokens = 9;  // U > W
  EXPECT_THROW({ CompressedKvCache c(d, d, kHeads, kKvHeads, kDim, s); }, BadInput);
  s = small_settings();
  s.k_high = kAtoms + 1;
  EXPECT_THROW({ CompressedKvCache c(d, d, kHeads, kKvHeads, kDim, s); }, BadInput);
  s = small_settings();
  s.hierarchical = true;
  s.k_low = 7;  // > K_high
  EXPECT_THROW({ CompressedKvCache c(d, d, kHeads, kKvHeads, kDim, s); }, BadInput);
  EXPECT_THROW({ CompressedKvCache c(d, d, kHeads, kKvHeads, kDim + 1, small_settings()); }, BadInput);
}

TEST(DictCache, Fp16RoundingOfCoefficients) {
  EXPECT_EQ(round_to_fp16(1.0f), 1.0f);
  EXPECT_EQ(round_to_fp16(1.0f + 1.0f / 4096), 1.0f);            // below half an ulp (2^-10)
  EXPECT_EQ(round_to_fp16(1.0f + 3.0f / 2048), 1.0f + 2.0f / 1024);  // 1.5 ulp rounds to even (2 ulp)
  EXPECT_EQ(round_to_fp16(-3.14159f), -3.140625f);
  EXPECT_EQ(round_to_fp16(1e-8f), 0.0f);                          // below half the smallest subnormal 2^-24
  EXPECT_EQ(round_to_fp16(std::ldexp(1.0f, -24)), std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isinf(round_to_fp16(70000.0f)));
}

// Hand-computed: 2 KV heads × 64 elements, 100 window tokens, 64 compressed tokens
// at K_high = 16 for both heads and streams.
//   dense  = 164 · 2 · 64 · 2 · 2 B = 83 968 B
//   window = 100 · 2 · 64 · 2 · 2 B = 51 200 B
//   codes  = 2 streams · 2 heads · 64 · 16 entries · 4 B = 16 384 B
//   ratio  = 83 968 / 67 584 = 1.242424...
TEST(DictAccounting, HandComputedPlainCase) {
  StepReads r;
  r.window_tokens = 100;
  r.compressed_tokens = 64;
  r.key_entries = 2 * 64 * 16;
  r.value_entries = 2 * 64 * 16;
  ByteTally t;
  t.add(r, 2, 64, EntryBits{});
  EXPECT_EQ(t.dense_bytes(), 83968u);
  EXPECT_EQ(t.loaded_bytes(), 51200u + 16384u);
  EXPECT_NEAR(t.ratio(), 83968.0 / 67584.0, 1e-12);
}

// Hand-computed, hierarchical, one KV head of 128 (Llama-3.1-8B's head), 1000
// compressed tokens of which 100 refined, 128 window tokens, INT8 window:
//   dense  = 1128 · 128 · 2 · 2 B = 577 536 B
//   window = 128 · 128 · 2 · 1 B = 32 768 B
//   codes  = 2 · (900 · 3 + 100 · 16) entries · (16 + 8) bit / 8 = 8600 · 3 B = 25 800 B
//   ratio  = 577 536 / 58 568 = 9.8609...
TEST(DictAccounting, HandComputedHierarchicalCase) {
  StepReads r;
  r.window_tokens = 128;
  r.compressed_tokens = 1000;
  r.key_entries = 900 * 3 + 100 * 16;
  r.value_entries = r.key_entries;
  EntryBits bits;
  bits.coef_bits = 8;
  bits.window_bits = 8;
  ByteTally t;
  t.add(r, 1, 128, bits);
  EXPECT_EQ(t.dense_bytes(), 577536u);
  EXPECT_EQ(t.loaded_bytes(), 32768u + 25800u);
  EXPECT_NEAR(t.ratio(), 577536.0 / 58568.0, 1e-12);
  ByteTally sum;
  sum.add(t);
  sum.add(t);
  EXPECT_EQ(sum.dense_bytes(), 2 * 577536u);
  EXPECT_NEAR(sum.ratio(), t.ratio(), 1e-12);
  EXPECT_EQ(sum.steps, 2u);
}

// The reads the cache reports for a plain K_high step are the hand count.
TEST(DictAccounting, CacheReportsItsReads) {
  const Dictionary d = random_dictionary(kAtoms, kDim, 9);
  CompressedKvCache c(d, d, kHeads, kKvHeads, kDim, small_settings());
  std::mt19937 rng(10);
  for (int t = 0; t < 13; ++t) {
    const std::vector<float> k = random_vector(kKvHeads * kDim, rng);
    c.append(k.data(), k.data());
  }
  const std::vector<float> q = random_vector(kHeads * kDim, rng);
  std::vector<float> out(kHeads * kDim);
  StepReads r;
  c.attend(q.data(), out.data(), &r);
  EXPECT_EQ(r.compressed_tokens, 8u);  // 13 > 8 → 4 compressed → 9 > 8 → 8 compressed, window 5
  EXPECT_EQ(r.window_tokens, 5u);
  EXPECT_EQ(r.key_entries, 8u * kKvHeads * 6);
  EXPECT_EQ(r.value_entries, 8u * kKvHeads * 6);
}

model::Config tiny_config() {
  model::Config c;
  c.vocab_size = 97;
  c.hidden_size = 64;
  c.ffn_size = 96;
  c.num_layers = 2;
  c.num_heads = 4;
  c.num_kv_heads = 2;
  c.head_dim = 16;
  c.max_positions = 64;
  c.rope_theta = 10000.0f;
  c.tie_word_embeddings = true;
  return c;
}

// Without compression the decoder is the FP32 reference; with a window larger
// than the sequence it never compresses and gives the same logits.
TEST(DictDecoder, DensePathMatchesFp32Reference) {
  const model::Model m = integer::make_random_model(tiny_config(), 11);
  std::vector<int> tokens;
  std::mt19937 rng(12);
  for (int i = 0; i < 40; ++i) tokens.push_back(static_cast<int>(rng() % 97));
  model::Fp32Lm ref(m);
  std::vector<float> want;
  CacheSettings dense;
  dense.compress = false;
  std::vector<Dictionary> dicts;
  for (int i = 0; i < 4; ++i) dicts.push_back(random_dictionary(kAtoms, 16, 20 + i));
  CacheSettings wide;
  wide.window_tokens = 64;
  CompressedDecoder a(m, {}, dense), b(m, dicts, wide);
  std::vector<float> la, lb;
  const std::vector<int> prompt(tokens.begin(), tokens.begin() + 10);
  ref.forward(prompt.data(), 10, false, want);
  a.prefill(prompt, la);
  b.prefill(prompt, lb);
  for (int i = 10; i <= static_cast<int>(tokens.size()); ++i) {
    for (size_t v = 0; v < want.size(); ++v) {
      ASSERT_NEAR(la[v], want[v], 1e-4) << "position " << i;
      ASSERT_EQ(la[v], lb[v]);
    }
    if (i == static_cast<int>(tokens.size())) break;
    ref.forward(&tokens[i], 1, false, want);
    a.decode(tokens[i], la);
    b.decode(tokens[i], lb);
  }
  EXPECT_EQ(b.cache(0).compressed_tokens(), 0);
}

}  // namespace
}  // namespace ispsim::dict
