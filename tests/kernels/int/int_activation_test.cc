// Integer sigmoid, SiLU, SwiGLU, ReLU and RoPE against double references.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/int/int_activation.h"
#include "kernels/int/int_rope.h"
#include "kernels/int/rope_table.h"

namespace ispsim::integer {
namespace {

// sigmoid: the I-BERT fit moves e/(1+e) by at most 7.19e-4 (checked in double
// over every shift z); bound 8e-4 absolute, over x in [-40, 40].
TEST(IntSigmoid, Within8e4AbsoluteOverWholeRange) {
  for (int frac_bits : {8, 12, 16, 24}) {
    const int64_t range = int64_t{40} << frac_bits;
    for (int64_t x = -range; x <= range; x += std::max<int64_t>(1, range / 100000)) {
      double real = std::ldexp(static_cast<double>(x), -frac_bits);
      ASSERT_NEAR(std::ldexp(int_sigmoid_q30(x, frac_bits), -30), 1.0 / (1.0 + std::exp(-real)), 8e-4)
          << "frac_bits " << frac_bits << " x " << real;
    }
  }
}

// silu(x) = x * sigmoid(x): error <= 8e-4 * |x| + 1 output unit; saturates to
// exactly x (x >= 22) and 0 (x <= -22) because exp(-22) is below the i-exp's
// resolution at every working scale.
TEST(IntSilu, WithinBoundAndSaturatesExactly) {
  for (int frac_bits : {8, 12, 16, 20}) {
    std::vector<int32_t> x, out;
    const int64_t range = int64_t{64} << frac_bits;
    for (int64_t v = -range; v <= range; v += std::max<int64_t>(1, range / 50000)) x.push_back(static_cast<int32_t>(v));
    x.push_back(INT32_MAX);
    x.push_back(INT32_MIN + 1);
    out.resize(x.size());
    int_silu(x.data(), static_cast<int>(x.size()), frac_bits, out.data());
    for (size_t i = 0; i < x.size(); ++i) {
      double real = std::ldexp(static_cast<double>(x[i]), -frac_bits);
      double ref = real / (1.0 + std::exp(-real));
      ASSERT_NEAR(std::ldexp(out[i], -frac_bits), ref, 8e-4 * std::fabs(real) + std::ldexp(1.0, -frac_bits))
          << "x " << real;
      if (real >= 22) {
        ASSERT_EQ(out[i], x[i]) << real;
      }
      if (real <= -22) {
        ASSERT_EQ(out[i], 0) << real;
      }
    }
  }
}

TEST(IntSwiglu, RandomWithinSiluBoundTimesUp) {
  std::mt19937 rng(8);
  std::uniform_int_distribution<int32_t> gate(-(20 << 16), 20 << 16), up(-(8 << 12), 8 << 12);
  const int n = 10000;
  std::vector<int32_t> g(n), u(n), out(n);
  for (int i = 0; i < n; ++i) g[i] = gate(rng), u[i] = up(rng);
  int_swiglu(g.data(), 16, u.data(), 12, n, out.data(), 14);
  for (int i = 0; i < n; ++i) {
    double gr = std::ldexp(g[i], -16), ur = std::ldexp(u[i], -12);
    double ref = gr / (1 + std::exp(-gr)) * ur;
    ASSERT_NEAR(std::ldexp(out[i], -14), ref, (8e-4 * std::fabs(gr) + std::ldexp(1.0, -16)) * std::fabs(ur) +
                                                  std::ldexp(1.0, -14));
  }
}

TEST(IntRelu, ExactIncludingExtremes) {
  std::vector<int32_t> x = {INT32_MIN, -5, 0, 5, INT32_MAX}, out(5);
  int_relu(x.data(), 5, out.data());
  EXPECT_EQ(out, (std::vector<int32_t>{0, 0, 0, 5, INT32_MAX}));
}

// Q30 tables: cos/sin within 2^-30; a rotation of values up to 2^24 units is
// within 2 units of the exact rotation.
TEST(IntRope, MatchesFloatRotationWithin2Units) {
  const int head_dim = 64, positions = 4096;
  std::vector<double> inv_freq(head_dim / 2);
  for (int i = 0; i < head_dim / 2; ++i) inv_freq[i] = std::pow(10000.0, -2.0 * i / head_dim);
  RopeTable table = build_rope_table(inv_freq, positions);
  std::mt19937 rng(9);
  std::uniform_int_distribution<int32_t> d(-(1 << 24), 1 << 24);
  for (int pos : {0, 1, 17, 1000, 4095}) {
    std::vector<int32_t> x(head_dim);
    for (auto& v : x) v = d(rng);
    std::vector<int32_t> y = x;
    int_rope(y.data(), head_dim, table.cos_row(pos), table.sin_row(pos));
    for (int i = 0; i < head_dim / 2; ++i) {
      double a = x[i], b = x[i + head_dim / 2], angle = pos * inv_freq[i];
      ASSERT_NEAR(y[i], a * std::cos(angle) - b * std::sin(angle), 2.0) << pos << " " << i;
      ASSERT_NEAR(y[i + head_dim / 2], b * std::cos(angle) + a * std::sin(angle), 2.0) << pos << " " << i;
    }
  }
}

}  // namespace
}  // namespace ispsim::integer
