// Token-wise INT16/INT8 requantization and group-wise INT8 activation quantization.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/int/int_exp.h"
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

// The multiply-and-shift division equals the hardware division for every
// dividend below 2^bits: divisors of every bit length, dividends at and around
// each multiple of d and at the top of the range.
TEST(InvariantDivisor, EqualsDivisionUpToTheBound) {
  std::mt19937_64 rng(3);
  std::vector<uint64_t> divisors = {1, 2, 3, 5, 7, 127, 128, 129, 11357, (1u << 31) - 1, 1u << 31};
  for (int b = 2; b <= 32; ++b) divisors.push_back((uint64_t{1} << (b - 1)) + rng() % (uint64_t{1} << (b - 1)));
  for (uint64_t d : divisors) {
    const int bits = bit_length(d) + 7;  // the quantizer's bound: dividends below 128·d
    const InvariantDivisor by = invariant_divisor(d, bits);
    const uint64_t top = (uint64_t{1} << bits) - 1;
    std::vector<uint64_t> dividends = {0, 1, top, top - 1, d - 1, d, d + 1};
    for (uint64_t m = 1; m * d <= top && m < 300; ++m)
      for (uint64_t a : {m * d - 1, m * d, m * d + 1, m * d + d / 2}) dividends.push_back(a);
    for (int i = 0; i < 200; ++i) dividends.push_back(rng() & top);
    for (uint64_t a : dividends)
      if (a <= top) { ASSERT_EQ(divide(a, by), a / d) << a << " / " << d; }
  }
}

// Division-free quantization = the defining formula div_round(x·127, max|x|),
// at the extremes of int32 too.
TEST(QuantizeGroupsInt8, EqualsRoundedDivisionAtExtremes) {
  std::mt19937 rng(4);
  for (int32_t max : {1, 2, 3, 127, 255, 1000003, (1 << 24) + 1, INT32_MAX}) {
    std::vector<int32_t> x = {max, -max, 0, max / 2, -(max / 2), max / 254, -(max / 254) - 1};
    for (int i = 0; i < 57; ++i) x.push_back(std::uniform_int_distribution<int32_t>(-max, max)(rng));
    const int n = static_cast<int>(x.size());
    std::vector<int8_t> q(n);
    Dyadic scale;
    quantize_groups_int8(x.data(), n, n, q.data(), &scale);
    for (int i = 0; i < n; ++i) ASSERT_EQ(q[i], saturate_int8(div_round(int64_t{x[i]} * 127, max))) << x[i] << " of " << max;
  }
  std::vector<int32_t> x = {INT32_MIN, INT32_MAX, -5, 1 << 30};
  std::vector<int8_t> q(4);
  Dyadic scale;
  quantize_groups_int8(x.data(), 4, 4, q.data(), &scale);
  const int64_t max = int64_t{1} << 31;
  for (int i = 0; i < 4; ++i) EXPECT_EQ(q[i], saturate_int8(div_round(int64_t{x[i]} * 127, max))) << x[i];
}

// i-exp's quotient by ln 2 (now multiply-and-shift) against the division, over
// every working scale and the whole range of inputs that do not underflow.
TEST(IntExp, QuotientByLn2EqualsDivision) {
  for (int frac : {8, 12, 13, 14, 20}) {
    const IExpParams p = i_exp_params(frac);
    for (int64_t a = 0; a < p.underflow; ++a)
      ASSERT_EQ(static_cast<int64_t>(divide(static_cast<uint64_t>(a), p.by_ln2)), a / p.q_ln2) << a << ", frac " << frac;
  }
}

}  // namespace
}  // namespace ispsim::integer
