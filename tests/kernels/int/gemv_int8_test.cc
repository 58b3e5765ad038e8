// int8 GEMV/GEMM: exact against a scalar reference (SIMD and portable), and the
// group-wise scaled product against a double reference.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/int/gemv_int8.h"

namespace ispsim::integer {
namespace {

std::vector<int8_t> random_int8(size_t n, std::mt19937& rng) {
  std::uniform_int_distribution<int> d(-127, 127);
  std::vector<int8_t> v(n);
  for (auto& x : v) x = static_cast<int8_t>(d(rng));
  return v;
}

void expect_exact_gemv(int rows, int cols, std::mt19937& rng) {
  auto W = random_int8(static_cast<size_t>(rows) * cols, rng), x = random_int8(cols, rng);
  W[0] = -127, x[0] = -127;  // extremes: the largest pair product
  std::vector<int32_t> y(rows);
  gemv_s8(W.data(), x.data(), rows, cols, y.data());
  for (int r = 0; r < rows; ++r) {
    int64_t ref = 0;
    for (int k = 0; k < cols; ++k) ref += W[static_cast<size_t>(r) * cols + k] * x[k];
    ASSERT_EQ(y[r], ref) << rows << "x" << cols << " row " << r;
  }
}

TEST(GemvS8, ExactForOddShapesWithAndWithoutSimd) {
  std::mt19937 rng(12);
  for (bool simd : {true, false}) {
    set_simd_enabled(simd);
    for (auto [rows, cols] : {std::pair{1, 1}, {3, 31}, {5, 32}, {7, 63}, {9, 64}, {17, 577}, {64, 1536}}) expect_exact_gemv(rows, cols, rng);
  }
  set_simd_enabled(true);
}

TEST(GemvS8, AllExtremesDoNotSaturate) {
  // 4096 products of 127 * 127 (and -127 * -127): the int16 pair sums of maddubs stay exact.
  for (int8_t sign : {int8_t{1}, int8_t{-1}}) {
    std::vector<int8_t> W(4096, static_cast<int8_t>(127 * sign)), x(4096, static_cast<int8_t>(127 * sign));
    int32_t y = 0;
    gemv_s8(W.data(), x.data(), 1, 4096, &y);
    EXPECT_EQ(y, 4096 * 127 * 127);
  }
}

// Shapes cover a ragged last group, a block of four full groups (the AVX2
// kernel's shared reduction) followed by single groups, and SmolLM2's 576.
void check_grouped(int cols, int group, std::mt19937& rng) {
  const int tokens = 3, rows = 42, groups = (cols + group - 1) / group;
  auto W = random_int8(static_cast<size_t>(rows) * cols, rng), X = random_int8(static_cast<size_t>(tokens) * cols, rng);
  std::vector<Dyadic> act(tokens * groups), wsc(rows * groups);
  std::uniform_int_distribution<int32_t> m(1 << 13, (1 << 15) - 1), sh(10, 30);
  for (auto& d : act) d = Dyadic{m(rng), sh(rng)};
  for (auto& d : wsc) d = Dyadic{m(rng), sh(rng)};
  std::vector<int32_t> Y(tokens * rows);
  gemm_s8_grouped(W.data(), X.data(), tokens, rows, cols, group, act.data(), wsc.data(), Y.data());
  for (int t = 0; t < tokens; ++t)
    for (int r = 0; r < rows; ++r) {
      double ref = 0;
      for (int g = 0; g < groups; ++g) {
        int64_t dot = 0;
        for (int k = g * group; k < std::min(cols, (g + 1) * group); ++k)
          dot += W[static_cast<size_t>(r) * cols + k] * X[static_cast<size_t>(t) * cols + k];
        const Dyadic &a = act[t * groups + g], &w = wsc[r * groups + g];
        ref += dot * std::ldexp(static_cast<double>(a.mult) * w.mult, -(a.shift + w.shift));
      }
      if (std::fabs(ref) < 2e9) {
        ASSERT_NEAR(Y[t * rows + r], ref, 0.5 * groups + 1e-6) << cols << " " << t << " " << r;
      }
    }
  // The portable kernel gives bit-identical results.
  set_simd_enabled(false);
  std::vector<int32_t> portable(tokens * rows);
  gemm_s8_grouped(W.data(), X.data(), tokens, rows, cols, group, act.data(), wsc.data(), portable.data());
  set_simd_enabled(true);
  EXPECT_EQ(portable, Y);
  // gemv_s8_grouped is the one-token case.
  std::vector<int32_t> y(rows);
  gemv_s8_grouped(W.data(), X.data(), rows, cols, group, act.data(), wsc.data(), y.data());
  for (int r = 0; r < rows; ++r) EXPECT_EQ(y[r], Y[r]);
}

TEST(GemmS8Grouped, MatchesDoubleReferenceWithinOneUnitPerGroup) {
  std::mt19937 rng(13);
  for (auto [cols, group] : {std::pair{300, 128}, {1000, 128}, {576, 128}, {576, 64}, {1536, 128}, {100, 32}}) check_grouped(cols, group, rng);
}

}  // namespace
}  // namespace ispsim::integer
