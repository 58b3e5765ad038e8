// The integer norms and Softmax in 32-bit registers (IntegerOptions::
// register_bits = 32, paper 1 §3.1.3) against the 64-bit ones: closed forms
// where the guard shift keeps a row whose plain 32-bit sum would overflow
// exact, and where it drops what lies below it; random rows within the
// precision of a 15-bit root; the engine end to end.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "common/error.h"
#include "kernels/int/fixed_point.h"
#include "kernels/int/int_exp.h"
#include "kernels/int/int_norm.h"
#include "kernels/int/quantized_lm.h"
#include "kernels/int/random_model.h"

namespace ispsim::integer {
namespace {

// gamma = 1.0 (24 fractional bits), no beta, eps 0: outputs are x / rms exactly.
NormWeights unit_gamma(std::vector<int32_t>& gamma, int n) {
  gamma.assign(n, 1 << 24);
  NormWeights w;
  w.gamma = gamma.data();
  w.gamma_frac_bits = 24;
  return w;
}

// 4096 values of 2^14: the squares sum to 2^40, past any 32-bit register. The
// guard (12 bits) keeps every square exact, so both widths give x / rms = 1.
TEST(RegisterWidth, RmsNormGuardKeepsAnOverflowingRowExact) {
  std::vector<int32_t> gamma, x(4096, 1 << 14), out32(4096), out64(4096);
  const NormWeights w = unit_gamma(gamma, 4096);
  int_rmsnorm_reg32(x.data(), 4096, 0, w, out32.data(), 20);
  int_rmsnorm(x.data(), 4096, 0, w, out64.data(), 20);
  for (int i = 0; i < 4096; ++i) {
    ASSERT_EQ(out32[i], 1 << 20) << i;
    ASSERT_EQ(out64[i], 1 << 20) << i;
  }
}

// One value 2^14 among 4095 ones: at 32 bits the guard of 12 bits drops the
// ones' squares, so rms = sqrt(2^28 / 4096) = 256 and x0 / rms = 64 exactly;
// at 64 bits they count: 2^14 / sqrt((2^28 + 4095) / 4096).
TEST(RegisterWidth, RmsNormDropsSquaresBelowTheGuard) {
  std::vector<int32_t> gamma, x(4096, 1), out32(4096), out64(4096);
  x[0] = 1 << 14;
  const NormWeights w = unit_gamma(gamma, 4096);
  int_rmsnorm_reg32(x.data(), 4096, 0, w, out32.data(), 20);
  int_rmsnorm(x.data(), 4096, 0, w, out64.data(), 20);
  EXPECT_EQ(out32[0], 64 << 20);
  EXPECT_NEAR(out64[0], std::ldexp(16384.0 / std::sqrt((268435456.0 + 4095.0) / 4096.0), 20), 8.0);  // 1.2e-7
  EXPECT_LT(out64[0], out32[0] - 500);
}

// Random INT16 rows: a 15-bit root and the guard's truncation stay within
// 1e-4 of the largest output (the 64-bit norms: 1e-5, int_norm_test).
TEST(RegisterWidth, NormsOnRandomRowsWithinTheirPrecision) {
  std::mt19937 rng(19);
  for (bool layer : {false, true})
    for (int n : {64, 576, 4096}) {
      std::uniform_int_distribution<int32_t> d(-32767, 32767), g(1 << 22, 1 << 26);
      std::vector<int32_t> x(n), gamma(n), beta(n, 0), out(n);
      for (int32_t& v : x) v = d(rng);
      for (int32_t& v : gamma) v = g(rng);
      NormWeights w;
      w.gamma = gamma.data();
      w.gamma_frac_bits = 24;
      w.beta = layer ? beta.data() : nullptr;
      w.eps_q40 = std::llround(std::ldexp(1e-5, 40));
      (layer ? int_layernorm_reg32 : int_rmsnorm_reg32)(x.data(), n, 10, w, out.data(), 16);
      double mean = 0, sq = 0;
      for (int32_t v : x) mean += layer ? std::ldexp(v, -10) / n : 0.0;
      for (int32_t v : x) sq += std::pow(std::ldexp(v, -10) - mean, 2) / n;
      std::vector<double> ref(n);
      double max_ref = 0;
      for (int i = 0; i < n; ++i) {
        ref[i] = (std::ldexp(x[i], -10) - mean) / std::sqrt(sq + 1e-5) * std::ldexp(gamma[i], -24);
        max_ref = std::max(max_ref, std::fabs(ref[i]));
      }
      for (int i = 0; i < n; ++i)
        ASSERT_NEAR(std::ldexp(out[i], -16), ref[i], 1e-4 * max_ref) << (layer ? "LayerNorm" : "RMSNorm") << " n " << n << " i " << i;
    }
}

// A row of 1024 scores: one at the max and 1023 whose i-exp E_s is below
// 2^11, the guard of a 1024-long row. At 32 bits they get probability 0 and
// the max (E_0 >> 11) · floor(2^(30+b) / (E_0 >> 11)) >> b, b = bit_length(E_0 >> 11);
// at 64 bits round(E_s · floor(2^62 / (E_0 + 1023 E_s)) / 2^32) > 0.
TEST(RegisterWidth, SoftmaxDropsExponentialsBelowTheGuard) {
  const int n = 1024, frac = 12, d = -43008;  // -10.5 at 12 fractional bits
  const IExpParams p = i_exp_params(frac);
  const int64_t e0 = i_exp(0, p), es = i_exp(d, p);
  ASSERT_GT(es, 0);
  ASSERT_LT(es, 1 << 11);
  std::vector<int32_t> x(n, d), out32(n), out64(n);
  x[0] = 0;
  int_softmax_reg32(x.data(), n, frac, out32.data());
  int_softmax(x.data(), n, frac, out64.data(), 30);
  const uint64_t top = static_cast<uint64_t>(e0 >> 11);
  const int b = bit_length(top);
  EXPECT_EQ(out32[0], static_cast<int32_t>((top * ((uint64_t{1} << (30 + b)) / top)) >> b));
  const int64_t inverse = (int64_t{1} << 62) / (e0 + 1023 * es);
  for (int t = 1; t < n; ++t) {
    ASSERT_EQ(out32[t], 0) << t;
    ASSERT_EQ(out64[t], round_shift(es * inverse, 32)) << t;
  }
  EXPECT_GT(out64[1], 0);
}

// The engine at 32 bits: logits close to the 64-bit engine's (relative to
// their range) but not identical; other widths are refused.
TEST(RegisterWidth, EngineAt32BitsStaysCloseAndOtherWidthsAreRefused) {
  model::Config c;
  c.vocab_size = 300, c.hidden_size = 192, c.ffn_size = 320, c.num_layers = 2, c.num_heads = 6, c.num_kv_heads = 2;
  c.head_dim = 32, c.max_positions = 64, c.rope_theta = 10000.0f, c.tie_word_embeddings = true;
  const model::Model m = make_random_model(c, 5);
  std::vector<int> calib(64), prompt(40);
  for (int i = 0; i < 64; ++i) calib[i] = (i * 37 + 3) % 300;
  for (int i = 0; i < 40; ++i) prompt[i] = (i * 53 + 1) % 300;
  IntegerOptions o;
  o.calibration_window = 32;
  auto logits_at = [&](int bits) {
    o.register_bits = bits;
    std::vector<float> logits;
    make_quantized_lm(m, o, calib, 64)->forward(prompt.data(), 40, true, logits);
    return logits;
  };
  const std::vector<float> wide = logits_at(64), narrow = logits_at(32);
  ASSERT_EQ(wide.size(), narrow.size());
  const auto [lo, hi] = std::minmax_element(wide.begin(), wide.end());
  double max_diff = 0;
  for (size_t i = 0; i < wide.size(); ++i) max_diff = std::max(max_diff, double{std::fabs(wide[i] - narrow[i])});
  EXPECT_GT(max_diff, 0.0);
  EXPECT_LT(max_diff, 0.02 * (*hi - *lo));
  o.register_bits = 48;
  EXPECT_THROW(validate(o), BadInput);
}

}  // namespace
}  // namespace ispsim::integer
