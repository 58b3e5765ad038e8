// Token-wise INT16/INT8 requantization and group-wise INT8 activation quantization.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/int/requant.h"

namespace ispsim::integer {
namespace {

TEST(RequantizeToken, Int16FillsRangeAndErrorIsHalfAStep) {
  std::mt19937 rng(10);
  for (int64_t magnitude : {int64_t{5}, int64_t{32767}, int64_t{32768}, int64_t{1} << 40, int64_t{1} << 61}) {
    std::uniform_int_distribution<int64_t> d(-magnitude, magnitude);
    std::vector<int64_t> x(1000);
    for (auto& v : x) v = d(rng);
    x[3] = magnitude;  // the row maximum
    std::vector<int32_t> out(x.size());
    int shift = requantize_token(x.data(), 1000, 16, out.data());
    int32_t max_out = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      ASSERT_LE(std::abs(out[i]), 32767);
      max_out = std::max(max_out, std::abs(out[i]));
      // |x - out * 2^shift| <= 2^shift / 2 (one rounding)
      ASSERT_LE(std::fabs(static_cast<double>(x[i]) - std::ldexp(out[i], shift)), std::ldexp(0.5, shift) + 1e-9)
          << magnitude;
    }
    EXPECT_GE(max_out, 16384) << "range not filled for magnitude " << magnitude;
  }
}

TEST(RequantizeToken, Int8ExtremesAndZeroRow) {
  std::vector<int32_t> x = {INT32_MIN + 1, INT32_MAX, 0, 1}, out(4);
  int shift = requantize_token(x.data(), 4, 8, out.data());
  EXPECT_EQ(shift, 25);  // 2^31 >> 24 rounds to 128 > 127, so one more bit
  EXPECT_EQ(out, (std::vector<int32_t>{-64, 64, 0, 0}));
  std::vector<int32_t> zero(4, 0);
  EXPECT_EQ(requantize_token(zero.data(), 4, 8, out.data()), 0);
  EXPECT_EQ(out, zero);
  // A small row is shifted left to fill the range: 3 -> 96 (shift -5).
  std::vector<int32_t> small = {3, -1};
  EXPECT_EQ(requantize_token(small.data(), 2, 8, out.data()), -5);
  EXPECT_EQ(out[0], 96);
  EXPECT_EQ(out[1], -32);
}

TEST(QuantizeGroupsInt8, ErrorWithinHalfStepPerGroupIncludingRaggedLastGroup) {
  std::mt19937 rng(11);
  const int n = 576, group = 128;  // SmolLM2's hidden size: 4 groups of 128 and one of 64
  std::vector<int32_t> x(n);
  for (int i = 0; i < n; ++i) {
    int32_t m = (i / group + 1) * 1000 * ((i / group) % 2 ? 1000 : 1);  // very different group ranges
    x[i] = std::uniform_int_distribution<int32_t>(-m, m)(rng);
  }
  for (int i = 256; i < 384; ++i) x[i] = 0;  // an all-zero group
  std::vector<int8_t> q(n);
  std::vector<Dyadic> scales(5);
  quantize_groups_int8(x.data(), n, group, q.data(), scales.data());
  for (int i = 0; i < n; ++i) {
    const Dyadic& s = scales[i / group];
    double scale = std::ldexp(s.mult, -s.shift);
    ASSERT_LE(std::abs(q[i]), 127);
    // Half a step of rounding plus the 2^-13 relative error of the 14-bit scale.
    ASSERT_NEAR(q[i] * scale, x[i], 0.5 * scale + 127 * scale * std::ldexp(1.0, -13) + 1e-9) << i;
  }
  EXPECT_EQ(scales[2].mult, 0);
}

}  // namespace
}  // namespace ispsim::integer
