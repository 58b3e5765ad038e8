// i-exp and integer Softmax against double references over their whole input range.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/int/int_exp.h"

namespace ispsim::integer {
namespace {

double exp_value(int64_t x, int frac_bits) {
  IExpParams p = i_exp_params(frac_bits);
  return static_cast<double>(i_exp(x, p)) / static_cast<double>(p.one);
}

// The second-order fit alone is off by up to 0.310% relative on (-ln2, 0]
// (checked in double); the right shift by z keeps it relative. Bound: |err| <= 3.2e-3 * e^x + 1e-6
// (the additive part is the truncation of the shifted polynomial and the
// input rounding at 12 fractional bits), over x in [-30, 0] at every scale.
TEST(IntExp, MatchesExpWithin0p32PercentRelativeOverWholeRange) {
  for (int frac_bits : {4, 8, 10, 12, 14, 16, 20, 24}) {
    const int64_t lo = -(int64_t{30} << frac_bits);
    const int64_t step = std::max<int64_t>(1, -lo / 200000);
    double worst = 0;
    for (int64_t x = lo; x <= 0; x += step) {
      double real = std::ldexp(static_cast<double>(x), -frac_bits);
      double err = std::fabs(exp_value(x, frac_bits) - std::exp(real));
      double allowed = 3.2e-3 * std::exp(real) + 1e-6;
      // At coarse inputs (frac_bits < 10) the input itself is exact, so the same bound holds.
      ASSERT_LE(err, allowed) << "frac_bits " << frac_bits << " x " << real;
      worst = std::max(worst, err / std::exp(real));
    }
    RecordProperty("worst_relative_error_f" + std::to_string(frac_bits), std::to_string(worst));
  }
}

TEST(IntExp, ZeroIsOneAndPositiveClampsToOne) {
  IExpParams p = i_exp_params(12);
  EXPECT_NEAR(static_cast<double>(i_exp(0, p)) / p.one, 1.0, 3.2e-3);
  EXPECT_EQ(i_exp(5, p), i_exp(0, p));
  EXPECT_EQ(i_exp(-(int64_t{1} << 50), p), 0);  // far below the range: exactly 0, no overflow
}

std::vector<double> softmax_reference(const std::vector<int32_t>& x, int frac_bits) {
  double max = x[0];
  for (int32_t v : x) max = std::max<double>(max, v);
  std::vector<double> out(x.size());
  double sum = 0;
  for (size_t i = 0; i < x.size(); ++i) sum += out[i] = std::exp(std::ldexp(x[i] - max, -frac_bits));
  for (double& v : out) v /= sum;
  return out;
}

// Bound per probability: 0.7% of the largest probability plus 2^-29 (output
// rounding at Q30). The relative i-exp error (<= 0.32%) enters the numerator and
// the sum, so the ratio moves by at most ~0.64%.
void expect_softmax_close(const std::vector<int32_t>& x, int frac_bits, const char* what) {
  std::vector<int32_t> out(x.size());
  int_softmax(x.data(), static_cast<int>(x.size()), frac_bits, out.data(), 30);
  std::vector<double> ref = softmax_reference(x, frac_bits);
  double max_prob = *std::max_element(ref.begin(), ref.end());
  double sum = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    double got = std::ldexp(out[i], -30);
    sum += got;
    ASSERT_NEAR(got, ref[i], 7e-3 * max_prob + std::ldexp(1.0, -29)) << what << " element " << i;
  }
  EXPECT_NEAR(sum, 1.0, 1e-6 * static_cast<double>(x.size()) + 1e-6) << what;
}

TEST(IntSoftmax, RandomRowsWithin0p7PercentOfMaxProbability) {
  std::mt19937 rng(1);
  for (int frac_bits : {6, 10, 14, 18}) {
    for (int n : {1, 2, 7, 64, 1000}) {
      std::uniform_int_distribution<int32_t> dist(-(12 << frac_bits), 12 << frac_bits);
      std::vector<int32_t> x(n);
      for (auto& v : x) v = dist(rng);
      expect_softmax_close(x, frac_bits, "random");
    }
  }
}

TEST(IntSoftmax, Row32KElementsInt16ExtremesNoOverflow) {
  // 32768 scores spanning the full INT16 range at 11 fractional bits (+-16).
  std::mt19937 rng(2);
  std::uniform_int_distribution<int32_t> dist(-32767, 32767);
  std::vector<int32_t> x(32768);
  for (auto& v : x) v = dist(rng);
  x[5] = 32767;
  x[6] = -32767;
  expect_softmax_close(x, 11, "32K random");
  // All equal at the INT16 maximum: the sum is 32768 * exp(0) and every probability is 2^-15.
  std::vector<int32_t> flat(32768, 32767), out(32768);
  int_softmax(flat.data(), 32768, 11, out.data(), 30);
  for (int32_t v : out) ASSERT_NEAR(v, 1 << 15, 1);
  // A single dominant element among 32K at -16: it keeps ~all the mass.
  std::vector<int32_t> peak(32768, -32767);
  peak[100] = 32767;
  expect_softmax_close(peak, 11, "32K peak");
}

}  // namespace
}  // namespace ispsim::integer
