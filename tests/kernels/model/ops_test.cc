// FP32 building blocks against closed forms.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/model/ops.h"
#include "kernels/model/safetensors.h"

namespace ispsim::model {
namespace {

TEST(ModelOps, RopeRotatesPairsIAndIPlusHalfByPositionTimesInverseFrequency) {
  Config c;
  c.head_dim = 4;
  c.rope_theta = 100.0f;
  std::vector<float> inv = rope_inv_freq(c);
  ASSERT_EQ(inv.size(), 2u);
  EXPECT_FLOAT_EQ(inv[0], 1.0f);
  EXPECT_FLOAT_EQ(inv[1], 0.1f);  // 100^(-2/4)
  float cs[2], sn[2];
  rope_angles(inv, 3, cs, sn);
  float x[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  apply_rope(x, 4, cs, sn);
  // rotate_half pairing: (x0, x2) rotated by 3 rad, (x1, x3) by 0.3 rad.
  EXPECT_NEAR(x[0], 1 * std::cos(3.0) - 3 * std::sin(3.0), 1e-5);
  EXPECT_NEAR(x[2], 3 * std::cos(3.0) + 1 * std::sin(3.0), 1e-5);
  EXPECT_NEAR(x[1], 2 * std::cos(0.3) - 4 * std::sin(0.3), 1e-5);
  EXPECT_NEAR(x[3], 4 * std::cos(0.3) + 2 * std::sin(0.3), 1e-5);
}

TEST(ModelOps, RopeScoresDependOnlyOnRelativePosition) {
  Config c;
  c.head_dim = 8;
  std::vector<float> inv = rope_inv_freq(c);
  auto score = [&](int mpos, int npos) {
    float q[8] = {0.3f, -1.0f, 0.5f, 2.0f, 1.5f, -0.2f, 0.7f, 0.1f};
    float k[8] = {-0.4f, 0.9f, 1.1f, -0.6f, 0.2f, 0.8f, -1.3f, 0.5f};
    float cs[4], sn[4];
    rope_angles(inv, mpos, cs, sn);
    apply_rope(q, 8, cs, sn);
    rope_angles(inv, npos, cs, sn);
    apply_rope(k, 8, cs, sn);
    return dot(q, k, 8);
  };
  EXPECT_NEAR(score(5, 2), score(13, 10), 1e-4);
  EXPECT_NEAR(score(7, 7), score(0, 0), 1e-4);
}

TEST(ModelOps, Llama3RopeScalingKeepsHighDividesLowAndBlendsMiddleFrequencies) {
  Config c;  // Llama-3.1-8B values
  c.head_dim = 128;
  c.rope_theta = 500000.0f;
  c.rope_llama3 = true;
  c.rope_factor = 8.0f;
  c.rope_low_freq_factor = 1.0f;
  c.rope_high_freq_factor = 4.0f;
  c.rope_original_max_positions = 8192;
  std::vector<float> scaled = rope_inv_freq(c);
  c.rope_llama3 = false;
  std::vector<float> plain = rope_inv_freq(c);
  const double pi = 3.14159265358979323846;
  int high = 0, low = 0, mid = 0;
  for (size_t i = 0; i < plain.size(); ++i) {
    double wavelen = 2 * pi / plain[i];
    if (wavelen < 8192.0 / 4) {
      EXPECT_FLOAT_EQ(scaled[i], plain[i]);
      ++high;
    } else if (wavelen > 8192.0) {
      EXPECT_FLOAT_EQ(scaled[i], plain[i] / 8.0f);
      ++low;
    } else {
      double smooth = (8192.0 / wavelen - 1.0) / 3.0;
      EXPECT_NEAR(scaled[i], (1 - smooth) * plain[i] / 8 + smooth * plain[i], 1e-6 * plain[i]);
      ++mid;
    }
  }
  EXPECT_GT(high, 0);
  EXPECT_GT(low, 0);
  EXPECT_GT(mid, 0);
}

TEST(ModelOps, SoftmaxMatchesClosedFormAndSurvivesLargeInputs) {
  std::vector<float> x = {1.0f, 2.0f, 3.0f};
  softmax(x.data(), 3);
  double z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  EXPECT_NEAR(x[0], std::exp(1.0) / z, 1e-6);
  EXPECT_NEAR(x[2], std::exp(3.0) / z, 1e-6);
  std::vector<float> big = {1000.0f, 1000.0f, -1000.0f};
  softmax(big.data(), 3);
  EXPECT_FLOAT_EQ(big[0], 0.5f);
  EXPECT_FLOAT_EQ(big[2], 0.0f);
}

TEST(ModelOps, RmsNormAndLayerNormMatchClosedForms) {
  const float x[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  const float w[4] = {1.0f, 0.5f, 2.0f, 1.0f};
  const float b[4] = {0.0f, 1.0f, 0.0f, -1.0f};
  float y[4];
  rms_norm(x, w, 4, 0.0f, y);
  const double rms = std::sqrt((1 + 4 + 9 + 16) / 4.0);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(y[i], x[i] / rms * w[i], 1e-6);
  layer_norm(x, w, b, 4, 0.0f, y);
  const double sd = std::sqrt(1.25);  // mean 2.5, biased variance 1.25
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(y[i], (x[i] - 2.5) / sd * w[i] + b[i], 1e-6);
}

TEST(ModelOps, LinearMatchesNaiveLoopsWithBias) {
  const int rows = 11, in = 37, out = 13;  // odd sizes cross every block boundary
  std::vector<float> x(rows * in), w(out * in), b(out), y(rows * out);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.1f * i);
  for (size_t i = 0; i < w.size(); ++i) w[i] = std::cos(0.07f * i);
  for (int o = 0; o < out; ++o) b[o] = 0.5f * o;
  linear(x.data(), rows, in, w.data(), b.data(), out, y.data());
  for (int r = 0; r < rows; ++r)
    for (int o = 0; o < out; ++o) {
      double s = b[o];
      for (int i = 0; i < in; ++i) s += static_cast<double>(x[r * in + i]) * w[o * in + i];
      EXPECT_NEAR(y[r * out + o], s, 1e-4);
    }
}

TEST(ModelOps, HalfAndBfloat16DecodeKnownBitPatterns) {
  EXPECT_EQ(f16_to_f32(0x3C00), 1.0f);
  EXPECT_EQ(f16_to_f32(0xC000), -2.0f);
  EXPECT_EQ(f16_to_f32(0x7BFF), 65504.0f);
  EXPECT_EQ(f16_to_f32(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(f16_to_f32(0x03FF), std::ldexp(1023.0f, -24));  // largest subnormal
  EXPECT_TRUE(std::isinf(f16_to_f32(0x7C00)));
  EXPECT_TRUE(std::isnan(f16_to_f32(0x7E00)));
  EXPECT_EQ(bf16_to_f32(0x3F80), 1.0f);
  EXPECT_EQ(bf16_to_f32(0xC0A0), -5.0f);
}

}  // namespace
}  // namespace ispsim::model
