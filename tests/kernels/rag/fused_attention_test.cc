// The tiled fused attention kernels against the plain references: FP32 online
// softmax within 1e-5, integer two-pass kernel bit-exact, for jagged positions,
// GQA and tiles smaller than, equal to and larger than the cache.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/rag/fused_attention.h"
#include "kernels/rag/int_fused_attention.h"

namespace ispsim::rag {
namespace {

AttentionShape shape(int tile) {
  AttentionShape s;
  s.heads = 4;
  s.kv_heads = 2;
  s.head_dim = 64;
  s.tile_tokens = tile;
  return s;
}

// Q_fused as CacheBlend builds it: scattered recomputed rows, then the query rows at the end.
const std::vector<int> kPositions = {0, 3, 17, 31, 32, 63, 64, 100, 149, 150, 151, 152};
constexpr int kCache = 153;

TEST(FusedAttention, Fp32OnlineSoftmaxMatchesReference) {
  std::mt19937 rng(7);
  std::normal_distribution<float> d(0.0f, 2.0f);  // scores of order 16: the max changes across tiles
  for (int tile : {1, 7, 32, 64, 200}) {
    const AttentionShape s = shape(tile);
    const int rows = static_cast<int>(kPositions.size());
    std::vector<float> q(rows * s.q_dim()), k(kCache * s.kv_dim()), v(kCache * s.kv_dim());
    for (float& x : q) x = d(rng);
    for (float& x : k) x = d(rng);
    for (float& x : v) x = d(rng);
    std::vector<float> fused(q.size()), reference(q.size());
    fused_attention(s, q.data(), kPositions.data(), rows, k.data(), v.data(), kCache, fused.data());
    reference_attention(s, q.data(), kPositions.data(), rows, k.data(), v.data(), kCache, reference.data());
    float worst = 0;
    for (size_t i = 0; i < q.size(); ++i) worst = std::max(worst, std::fabs(fused[i] - reference[i]));
    EXPECT_LE(worst, 1e-5f) << "tile " << tile;
    // Row 0 (position 0) sees only token 0: its output is v_0 of its KV head.
    for (int h = 0; h < s.heads; ++h)
      for (int i = 0; i < s.head_dim; ++i)
        EXPECT_FLOAT_EQ(fused[h * s.head_dim + i], v[(h / 2) * s.head_dim + i]);
  }
}

TEST(FusedAttention, IntegerKernelIsBitExactWithReference) {
  std::mt19937 rng(9);
  std::uniform_int_distribution<int32_t> d(-(1 << 18), 1 << 18);  // q, k, v at ~18 fractional bits
  for (int bits : {16, 8}) {
    for (int tile : {1, 7, 32, 64, 200}) {
      const AttentionShape s = shape(tile);
      IntAttentionFormat f;
      f.score_frac_bits = 36;
      f.requant_bits = bits;
      const int rows = static_cast<int>(kPositions.size());
      std::vector<int32_t> q(rows * s.q_dim()), k(kCache * s.kv_dim()), v(kCache * s.kv_dim());
      for (int32_t& x : q) x = d(rng);
      for (int32_t& x : k) x = d(rng);
      for (int32_t& x : v) x = d(rng);
      std::vector<int32_t> fused(q.size()), reference(q.size());
      int_fused_attention(s, f, q.data(), kPositions.data(), rows, k.data(), v.data(), kCache, fused.data());
      int_reference_attention(s, f, q.data(), kPositions.data(), rows, k.data(), v.data(), kCache, reference.data());
      EXPECT_EQ(fused, reference) << "tile " << tile << ", INT" << bits;
    }
  }
}

// The integer reference is the integer engine's attention: a uniform score
// row averages V exactly (probabilities 1/n in Q30, then a rounding shift).
// More Q_fused rows than the integer kernel's block of 16: three blocks.
TEST(FusedAttention, IntegerKernelOverSeveralRowBlocks) {
  std::mt19937 rng(10);
  std::uniform_int_distribution<int32_t> d(-(1 << 18), 1 << 18);
  const AttentionShape s = shape(32);
  IntAttentionFormat f;
  f.score_frac_bits = 36;
  std::vector<int> positions;
  for (int i = 0; i < 45; ++i) positions.push_back(3 * i + (i % 3));
  const int rows = static_cast<int>(positions.size());
  std::vector<int32_t> q(rows * s.q_dim()), k(kCache * s.kv_dim()), v(kCache * s.kv_dim());
  for (int32_t& x : q) x = d(rng);
  for (int32_t& x : k) x = d(rng);
  for (int32_t& x : v) x = d(rng);
  std::vector<int32_t> fused(q.size()), reference(q.size());
  int_fused_attention(s, f, q.data(), positions.data(), rows, k.data(), v.data(), kCache, fused.data());
  int_reference_attention(s, f, q.data(), positions.data(), rows, k.data(), v.data(), kCache, reference.data());
  EXPECT_EQ(fused, reference);
}

TEST(FusedAttention, IntegerUniformScoresAverageValues) {
  const AttentionShape s = shape(4);
  IntAttentionFormat f;
  f.score_frac_bits = 20;
  std::vector<int32_t> q(s.q_dim(), 0), k(8 * s.kv_dim(), 5), v(8 * s.kv_dim());
  for (int t = 0; t < 8; ++t)
    for (int i = 0; i < s.kv_dim(); ++i) v[t * s.kv_dim() + i] = 1000 * (t + 1);  // mean over 8 tokens: 4500
  const int pos = 7;
  std::vector<int32_t> out(s.q_dim());
  int_fused_attention(s, f, q.data(), &pos, 1, k.data(), v.data(), 8, out.data());
  for (int32_t x : out) EXPECT_NEAR(x, 4500, 1);
}

}  // namespace
}  // namespace ispsim::rag
