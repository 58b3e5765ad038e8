// Integer square root, RMSNorm and LayerNorm against exact / double references.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/int/int_norm.h"

namespace ispsim::integer {
namespace {

TEST(Isqrt, ExactFloorSqrtIncludingExtremes) {
  for (uint64_t n = 0; n < 100000; ++n) {
    uint64_t r = isqrt(n);
    ASSERT_LE(r * r, n);
    ASSERT_GT((r + 1) * (r + 1), n);
  }
  for (uint64_t n : {uint64_t{1} << 62, (uint64_t{1} << 62) - 1, ~uint64_t{0}, uint64_t{4294967295} * 4294967295}) {
    unsigned __int128 r = isqrt(n);
    ASSERT_LE(r * r, n) << n;
    ASSERT_GT((r + 1) * (r + 1), n) << n;
  }
}

struct Norm {
  std::vector<int32_t> gamma, beta;
  NormWeights w;
};

// gamma in [0.25, 4) with 20 fractional bits; beta (LayerNorm) in [-2, 2) at the output scale.
Norm make_norm(int n, bool with_beta, int out_frac_bits, std::mt19937& rng) {
  Norm m;
  std::uniform_real_distribution<double> g(0.25, 4.0), b(-2.0, 2.0);
  for (int i = 0; i < n; ++i) m.gamma.push_back(static_cast<int32_t>(std::lround(std::ldexp(g(rng), 20))));
  if (with_beta)
    for (int i = 0; i < n; ++i) m.beta.push_back(static_cast<int32_t>(std::lround(std::ldexp(b(rng), out_frac_bits))));
  m.w.gamma = m.gamma.data();
  m.w.gamma_frac_bits = 20;
  m.w.beta = with_beta ? m.beta.data() : nullptr;
  m.w.eps_q40 = std::llround(std::ldexp(1e-5, 40));
  return m;
}

// |err| <= 1e-5 * max|reference| + 2 output units: the reciprocal and root carry
// ~30 significant bits, so only the final roundings remain.
void check_norm(const std::vector<int32_t>& x, int frac_bits, bool layer, const char* what) {
  std::mt19937 rng(7);
  const int n = static_cast<int>(x.size()), out_frac = 16;
  Norm m = make_norm(n, layer, out_frac, rng);
  std::vector<int32_t> out(n);
  if (layer)
    int_layernorm(x.data(), n, frac_bits, m.w, out.data(), out_frac);
  else
    int_rmsnorm(x.data(), n, frac_bits, m.w, out.data(), out_frac);
  double mean = 0, sq = 0;
  for (int32_t v : x) mean += std::ldexp(v, -frac_bits) / n;
  if (!layer) mean = 0;
  for (int32_t v : x) sq += std::pow(std::ldexp(v, -frac_bits) - mean, 2) / n;
  const double inv = 1.0 / std::sqrt(sq + 1e-5);
  std::vector<double> ref(n);
  double max_ref = 0;
  for (int i = 0; i < n; ++i) {
    ref[i] = (std::ldexp(x[i], -frac_bits) - mean) * inv * std::ldexp(m.gamma[i], -20) +
             (layer ? std::ldexp(m.beta[i], -out_frac) : 0.0);
    max_ref = std::max(max_ref, std::fabs(ref[i]));
  }
  for (int i = 0; i < n; ++i)
    ASSERT_NEAR(std::ldexp(out[i], -out_frac), ref[i], 1e-5 * max_ref + std::ldexp(2.0, -out_frac))
        << what << " element " << i;
}

std::vector<int32_t> random_row(int n, int32_t lo, int32_t hi, std::mt19937& rng) {
  std::uniform_int_distribution<int32_t> d(lo, hi);
  std::vector<int32_t> x(n);
  for (auto& v : x) v = d(rng);
  return x;
}

TEST(IntRmsNorm, RandomInt16RowsWithin1e5Relative) {
  std::mt19937 rng(3);
  for (int n : {1, 64, 576, 4096, 8192}) check_norm(random_row(n, -32767, 32767, rng), 10, false, "int16");
}

TEST(IntRmsNorm, VeryLargeAndVerySmallActivations) {
  std::mt19937 rng(4);
  // Every element at the INT16 extreme, 8192 wide: sum of squares ~2^43.
  check_norm(std::vector<int32_t>(8192, 32767), 0, false, "all +32767, scale 1");
  check_norm(std::vector<int32_t>(8192, -32767), 0, false, "all -32767");
  // An outlier channel: one value 2^19 (above INT16, the documented limit is 2^20) among small ones.
  auto outlier = random_row(4096, -3, 3, rng);
  outlier[17] = 1 << 19;
  check_norm(outlier, 8, false, "outlier");
  // Tiny activations: +-1 units at 24 fractional bits (values ~6e-8, far below sqrt(eps)):
  // eps dominates, the output is tiny but still matches.
  check_norm(random_row(576, -1, 1, rng), 24, false, "tiny");
  // Small but above eps: 2^-10 with values +-3 units.
  check_norm(random_row(576, -3, 3, rng), 10, false, "small");
  // All zero: output exactly zero.
  std::vector<int32_t> zero(64, 0), out(64, 1);
  Norm m = make_norm(64, false, 16, rng);
  int_rmsnorm(zero.data(), 64, 10, m.w, out.data(), 16);
  for (int32_t v : out) EXPECT_EQ(v, 0);
}

TEST(IntLayerNorm, RandomAndExtremeInt16RowsWithin1e5Relative) {
  std::mt19937 rng(5);
  for (int n : {2, 768, 2560}) check_norm(random_row(n, -32767, 32767, rng), 10, true, "int16");
  check_norm(random_row(2048, 32000, 32767, rng), 12, true, "large common offset");
  auto alternating = std::vector<int32_t>(4096);
  for (size_t i = 0; i < alternating.size(); ++i) alternating[i] = i % 2 ? 32767 : -32767;
  check_norm(alternating, 0, true, "alternating extremes");
  check_norm(random_row(1024, -2, 2, rng), 16, true, "tiny");
}

}  // namespace
}  // namespace ispsim::integer
