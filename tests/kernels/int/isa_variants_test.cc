// Every kernel variant the machine supports against the scalar reference:
// INT8 GEMM bit-exact (AVX2 maddubs, AVX-512 VNNI on packed weights), FP32
// linear within FP32 rounding; batched prefill bit-exact with token-at-a-time
// decode; identical results at 1, 2 and 3 threads. A variant the machine
// lacks is skipped with the one-line reason from cpu_isa.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <tuple>
#include <random>
#include <vector>

#include "common/error.h"
#include "kernels/int/gemv_int8.h"
#include "kernels/int/int_activation.h"
#include "kernels/int/int_exp.h"
#include "kernels/int/int_norm.h"
#include "kernels/int/quantized_lm.h"
#include "kernels/int/random_model.h"
#include "kernels/int/requant.h"
#include "kernels/model/attention_simd.h"
#include "kernels/model/cpu_isa.h"
#include "kernels/model/fp32_lm.h"
#include "kernels/model/ops.h"
#include "kernels/model/parallel.h"
#include "tests/kernels/int/gemm_case.h"

namespace ispsim::integer {
namespace {

using model::Isa;

// Restores the process-wide ISA level and thread count after each test.
class IsaVariants : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!model::isa_supported(GetParam()))
      GTEST_SKIP() << model::isa_name(GetParam()) << ": " << model::isa_unsupported_reason(GetParam());
  }
  void TearDown() override {
    model::set_active_isa(model::best_isa());
    model::set_engine_threads(1);
  }
};

TEST_P(IsaVariants, Int8GemmIsBitExactWithScalarAtEveryShapeAndThreadCount) {
  std::mt19937 rng(21);
  const std::vector<std::array<int, 4>> shapes = {
      {1, 1, 4, 4},     {1, 17, 576, 128}, {3, 42, 300, 128}, {7, 33, 1000, 128}, {13, 16, 576, 64},
      {2, 50, 100, 32}, {6, 31, 250, 256}, {5, 20, 130, 128}, {9, 64, 1536, 128}, {4, 18, 70, 36}};
  for (const auto& s : shapes) {
    const GemmCase c = make_case(s[0], s[1], s[2], s[3], rng);
    const PackedS8 packed = pack_s8(c.W.data(), c.rows, c.cols, c.group, c.wsc.data());
    if (GetParam() >= Isa::kAvx512) { ASSERT_FALSE(packed.empty()) << "the VNNI kernel would not run"; }
    model::set_active_isa(Isa::kScalar);
    const std::vector<int32_t> reference = run_gemm(c, nullptr);
    model::set_active_isa(GetParam());
    for (int threads : {1, 2, 3}) {
      model::set_engine_threads(threads);
      EXPECT_EQ(run_gemm(c, &packed), reference)
          << model::isa_name(GetParam()) << " " << s[0] << "x" << s[1] << "x" << s[2] << " g" << s[3] << ", "
          << threads << " threads";
    }
    model::set_engine_threads(1);
    // One token at a time gives the same rows as the batch.
    for (int t = 0; t < c.tokens; ++t) {
      std::vector<int32_t> y(c.rows);
      gemm_s8_grouped(c.W.data(), c.X.data() + static_cast<size_t>(t) * c.cols, 1, c.rows, c.cols, c.group,
                      c.act.data() + static_cast<size_t>(t) * c.groups(), c.wsc.data(), y.data(), &packed);
      ASSERT_EQ(std::vector<int32_t>(reference.begin() + static_cast<long>(t) * c.rows,
                                     reference.begin() + static_cast<long>(t + 1) * c.rows),
                y);
    }
  }
}

TEST_P(IsaVariants, Int8ExtremesDoNotSaturate) {
  // 4096 products of ±127·±127 in one group of 256 and beyond: exact partial sums.
  for (int8_t sign : {int8_t{1}, int8_t{-1}}) {
    const int cols = 4096, group = 256, groups = cols / group;
    std::vector<int8_t> W(cols, static_cast<int8_t>(127 * sign)), x(cols, 127);
    std::vector<Dyadic> act(groups, Dyadic{1, 1}), wsc(groups, Dyadic{1, 1});  // · 2^-2 per group
    const PackedS8 packed = pack_s8(W.data(), 1, cols, group, wsc.data());
    model::set_active_isa(GetParam());
    int32_t y = 0;
    gemm_s8_grouped(W.data(), x.data(), 1, 1, cols, group, act.data(), wsc.data(), &y, &packed);
    EXPECT_EQ(y, sign * groups * ((256 * 127 * 127 + 2) >> 2));
  }
}

TEST_P(IsaVariants, Fp32LinearAgreesWithScalarAndIsBatchAndThreadInvariant) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  for (auto [tokens, in, out] : {std::tuple{1, 576, 100}, {9, 577, 67}, {5, 15, 33}, {4, 1536, 40}}) {
    std::vector<float> x(static_cast<size_t>(tokens) * in), w(static_cast<size_t>(out) * in), b(out);
    for (float& v : x) v = d(rng);
    for (float& v : w) v = d(rng);
    for (float& v : b) v = d(rng);
    std::vector<float> ref(static_cast<size_t>(tokens) * out), got(ref.size());
    model::set_active_isa(Isa::kScalar);
    model::linear(x.data(), tokens, in, w.data(), b.data(), out, ref.data());
    model::set_active_isa(GetParam());
    model::linear(x.data(), tokens, in, w.data(), b.data(), out, got.data());
    for (size_t i = 0; i < ref.size(); ++i) ASSERT_NEAR(got[i], ref[i], 1e-5 * std::sqrt(in) + 1e-6) << i;
    for (int threads : {2, 3}) {
      model::set_engine_threads(threads);
      std::vector<float> again(ref.size());
      model::linear(x.data(), tokens, in, w.data(), b.data(), out, again.data());
      EXPECT_EQ(again, got) << threads << " threads";
    }
    model::set_engine_threads(1);
    for (int t = 0; t < tokens; ++t) {
      std::vector<float> row(out);
      model::linear(x.data() + static_cast<size_t>(t) * in, 1, in, w.data(), b.data(), out, row.data());
      ASSERT_EQ(row, std::vector<float>(got.begin() + static_cast<long>(t) * out, got.begin() + static_cast<long>(t + 1) * out));
    }
  }
}

model::Config small_config() {
  model::Config c;
  c.vocab_size = 300;
  c.hidden_size = 192;  // one full group of 128 and a ragged one of 64
  c.ffn_size = 320;
  c.num_layers = 2;
  c.num_heads = 6;
  c.num_kv_heads = 2;
  c.head_dim = 32;
  c.max_positions = 64;
  c.rope_theta = 10000.0f;
  c.tie_word_embeddings = true;
  return c;
}

// The integer engine end to end: one batched prefill of the whole prompt, the
// same prompt one token at a time, at 1 and 3 threads, at this level: the
// last logits are identical to the scalar engine's.
TEST_P(IsaVariants, IntegerEnginePrefillIsBitExactWithTokenAtATimeScalar) {
  const model::Model m = make_random_model(small_config(), 11);
  std::mt19937 rng(2);
  std::uniform_int_distribution<int> tok(0, 299);
  std::vector<int> calib(64), prompt(40);
  for (int& t : calib) t = tok(rng);
  for (int& t : prompt) t = tok(rng);
  IntegerOptions o;
  o.stage = QuantStage::kInt16;
  o.calibration_window = 32;
  auto logits_of = [&](model::CausalLm& lm, bool batched) {
    std::vector<float> logits;
    lm.reset();
    if (batched) {
      lm.forward(prompt.data(), static_cast<int>(prompt.size()), false, logits);
    } else {
      for (int t : prompt) lm.forward(&t, 1, false, logits);
    }
    return logits;
  };
  // The reference model is built and run at the scalar level; the tested one
  // is built at this level too (calibration must pin the scalar FP32 kernels).
  model::set_active_isa(Isa::kScalar);
  auto reference_lm = make_quantized_lm(m, o, calib, 64);
  const std::vector<float> reference = logits_of(*reference_lm, false);
  model::set_active_isa(GetParam());
  auto lm = make_quantized_lm(m, o, calib, 64);
  for (int threads : {1, 3}) {
    model::set_engine_threads(threads);
    EXPECT_EQ(logits_of(*lm, true), reference) << "batched, " << threads << " threads";
    EXPECT_EQ(logits_of(*lm, false), reference) << "token at a time, " << threads << " threads";
  }
}

TEST_P(IsaVariants, Fp32EnginePrefillEqualsTokenAtATimeAndAnyThreadCount) {
  const model::Model m = make_random_model(small_config(), 12);
  std::vector<int> prompt(30);
  for (int i = 0; i < 30; ++i) prompt[i] = (i * 37 + 5) % 300;
  model::set_active_isa(GetParam());
  model::Fp32Lm lm(m, 64);
  std::vector<float> batched, single;
  lm.forward(prompt.data(), 30, false, batched);
  model::set_engine_threads(2);
  lm.reset();
  for (int t : prompt) lm.forward(&t, 1, false, single);
  EXPECT_EQ(batched, single);
}

// Group-wise INT8 quantization of activations: every level gives the scalar
// quantizer's bytes and scales (ragged groups, zero groups, int32 extremes).
TEST_P(IsaVariants, Int8ActivationQuantizationIsBitExactWithScalar) {
  std::mt19937 rng(23);
  for (auto [n, group] : {std::pair{576, 128}, {1536, 128}, {100, 32}, {70, 36}, {13, 4}}) {
    for (int32_t range : {1, 100, 70000, 1 << 24, INT32_MAX}) {
      std::vector<int32_t> x(n);
      std::uniform_int_distribution<int32_t> d(-range, range);
      for (int32_t& v : x) v = d(rng);
      if (n > 2 * group) std::fill(x.begin() + group, x.begin() + 2 * group, 0);  // an all-zero group
      if (range == INT32_MAX) x[0] = INT32_MIN;
      const int groups = (n + group - 1) / group;
      std::vector<int8_t> want(n), got(n);
      std::vector<Dyadic> want_s(groups), got_s(groups);
      model::set_active_isa(Isa::kScalar);
      quantize_groups_int8(x.data(), n, group, want.data(), want_s.data());
      model::set_active_isa(GetParam());
      quantize_groups_int8(x.data(), n, group, got.data(), got_s.data());
      ASSERT_EQ(got, want) << n << " g" << group << " range " << range;
      for (int g = 0; g < groups; ++g)
        ASSERT_TRUE(got_s[g].mult == want_s[g].mult && got_s[g].shift == want_s[g].shift) << g;
    }
  }
}

// Integer Softmax (i-exp, the quotient by ln 2, the reciprocal of the sum):
// every level gives the scalar probabilities, for input scales below, inside
// and above i-exp's working range, rows of any length and int32 extremes.
TEST_P(IsaVariants, IntSoftmaxIsBitExactWithScalar) {
  std::mt19937 rng(29);
  for (int frac : {0, 5, 12, 14, 20, 40, 70})
    for (int n : {1, 7, 8, 17, 100, 1000})
      for (int32_t range : {3, 5000, 1 << 20, INT32_MAX}) {
        std::vector<int32_t> x(n);
        std::uniform_int_distribution<int32_t> d(-range, range);
        for (int32_t& v : x) v = d(rng);
        if (range == INT32_MAX && n > 1) x[0] = INT32_MIN, x[1] = INT32_MAX;
        std::vector<int32_t> want(n), got(n);
        model::set_active_isa(Isa::kScalar);
        int_softmax(x.data(), n, frac, want.data(), 30);
        model::set_active_isa(GetParam());
        int_softmax(x.data(), n, frac, got.data(), 30);
        ASSERT_EQ(got, want) << "frac " << frac << ", n " << n << ", range " << range;
      }
}

// SwiGLU (i-exp of −|gate|, the per-element quotient of the sigmoid, SiLU and
// the product with up): every level gives the scalar outputs, in place too,
// for gate scales below, inside and above i-exp's working range, out shifts
// inside and outside the vector kernel's [1, 62], and int32 extremes.
TEST_P(IsaVariants, SwigluIsBitExactWithScalar) {
  std::mt19937 rng(31);
  for (int gate_frac : {0, 5, 12, 14, 20, 30})
    for (int out_shift : {-2, 1, 17, 40, 62, 63})
      for (int n : {1, 7, 8, 17, 1000})
        for (int32_t range : {3, 70000, 1 << 24, INT32_MAX}) {
          std::vector<int32_t> gate(n), up(n);
          std::uniform_int_distribution<int32_t> d(-range, range);
          for (int i = 0; i < n; ++i) gate[i] = d(rng), up[i] = d(rng);
          if (range == INT32_MAX && n > 2) gate[0] = INT32_MIN, gate[1] = INT32_MAX, up[0] = up[1] = INT32_MIN;
          const int up_frac = 16, out_frac = gate_frac + up_frac - out_shift;
          std::vector<int32_t> want(n), got = gate;
          model::set_active_isa(Isa::kScalar);
          int_swiglu(gate.data(), gate_frac, up.data(), up_frac, n, want.data(), out_frac);
          model::set_active_isa(GetParam());
          int_swiglu(got.data(), gate_frac, up.data(), up_frac, n, got.data(), out_frac);  // in place
          ASSERT_EQ(got, want) << "gate frac " << gate_frac << ", shift " << out_shift << ", n " << n << ", range " << range;
        }
}

// Token-wise requantization of int32 rows (the norms' inputs): every level
// gives the scalar shift and outputs, in place too, for rows that are shifted
// left, not at all and right (up to int32 extremes), all-zero rows and
// lengths around the vector widths.
TEST_P(IsaVariants, RequantizeTokenIsBitExactWithScalar) {
  std::mt19937 rng(41);
  for (int bits : {8, 16})
    for (int n : {1, 7, 8, 9, 17, 576, 1001})
      for (int32_t range : {0, 1, 100, 32767, 32768, 1 << 20, INT32_MAX}) {
        std::vector<int32_t> x(n);
        std::uniform_int_distribution<int32_t> d(-range, range);
        for (int32_t& v : x) v = d(rng);
        if (range == INT32_MAX && n > 1) x[0] = INT32_MIN, x[n - 1] = INT32_MAX;
        std::vector<int32_t> want(n), got = x;
        model::set_active_isa(Isa::kScalar);
        const int want_shift = requantize_token(x.data(), n, bits, want.data());
        model::set_active_isa(GetParam());
        ASSERT_EQ(requantize_token(got.data(), n, bits, got.data()), want_shift) << bits << " bits, n " << n << ", range " << range;
        ASSERT_EQ(got, want) << bits << " bits, n " << n << ", range " << range;
      }
}

// One norm row: input in [-range, range] (or a single ±range outlier in a
// zero row), gamma anywhere in int32 or small, beta present or not.
struct NormRow {
  std::vector<int32_t> x, gamma, beta;
  NormWeights weights() const {
    NormWeights w;
    w.gamma = gamma.data();
    w.beta = beta.empty() ? nullptr : beta.data();
    return w;
  }
};

NormRow norm_row(int n, int32_t range, bool outlier, bool wide_gamma, bool with_beta, std::mt19937& rng) {
  NormRow r;
  std::uniform_int_distribution<int32_t> x(-range, range), any(INT32_MIN, INT32_MAX), small(-(1 << 16), 1 << 16);
  r.x.resize(n);
  for (int32_t& v : r.x) v = outlier ? 0 : x(rng);
  if (outlier) r.x[n - 1] = n % 2 ? range : -range;  // last: the ragged end of the AVX2 rows
  r.gamma.resize(n);
  for (int32_t& g : r.gamma) g = wide_gamma ? any(rng) : small(rng);
  if (with_beta) {
    r.beta.resize(n);
    for (int32_t& b : r.beta) b = any(rng);
  }
  return r;
}

// RMSNorm and LayerNorm, in 64-bit and 32-bit registers: every level gives the
// scalar outputs, in place too, for rows of every length modulo the vector
// widths (and 2^15, where a lone outlier's x / rms passes 2^31 and the vector
// lanes must give way to the scalar products), inputs at each operator's
// limit (LayerNorm's wide rows need the split product of norm_scale_*), eps at
// and below resolution, output shifts inside and outside [1, 62], int32
// gammas (saturating outputs) and biases.
TEST_P(IsaVariants, NormsAreBitExactWithScalar) {
  using Norm = void (*)(const int32_t*, int, int, const NormWeights&, int32_t*, int);
  struct Op { const char* name; Norm norm; int32_t limit; int max_n; };  // |x| <= limit, n <= max_n
  const Op ops[] = {{"rmsnorm", int_rmsnorm, (1 << 20) - 1, 1 << 15},
                    {"layernorm", int_layernorm, (1 << 16) - 1, 1 << 14},
                    {"rmsnorm_reg32", int_rmsnorm_reg32, (1 << 16) - 1, 1 << 14},
                    {"layernorm_reg32", int_layernorm_reg32, (1 << 16) - 1, 1 << 14}};
  std::mt19937 rng(37);
  int cases = 0;
  for (const Op& op : ops)
    for (int n : {1, 3, 8, 13, 17, 576, 1001, 1 << 14, 1 << 15})
      for (int32_t range : {0, 127, 32767, op.limit})
        for (bool outlier : {false, true})
          for (int frac : {0, 12, 26})
            for (int out_shift : {-1, 1, 20, 62, 63}) {
              if (n > op.max_n) continue;
              const bool wide = (cases & 1) != 0, with_beta = (cases & 2) != 0;
              NormRow row = norm_row(n, range, outlier, wide, with_beta, rng);
              NormWeights w = row.weights();
              w.gamma_frac_bits = 14;
              w.eps_q40 = (cases & 4) ? 10995116 : 0;  // 1e-5 · 2^40, or none
              const int out_frac = 24 + w.gamma_frac_bits - out_shift;
              std::vector<int32_t> want(n), got = row.x;
              model::set_active_isa(Isa::kScalar);
              op.norm(row.x.data(), n, frac, w, want.data(), out_frac);
              model::set_active_isa(GetParam());
              op.norm(got.data(), n, frac, w, got.data(), out_frac);  // in place
              ASSERT_EQ(got, want) << op.name << " n " << n << ", range " << range << (outlier ? " (outlier)" : "")
                                   << ", frac " << frac << ", out shift " << out_shift << ", case " << cases;
              ++cases;
            }
}

// The integer attention's blocked weighted values equal per-pair int64
// arithmetic exactly at every level: ragged head sizes, any number of
// queries, and operands at the int32 / Q30 extremes (the score tiles:
// int_attention_test.cc).
TEST_P(IsaVariants, IntWeightedValuesAreExact) {
  model::set_active_isa(GetParam());
  std::mt19937 rng(17);
  std::uniform_int_distribution<int32_t> any(INT32_MIN, INT32_MAX), prob(0, (1 << 30) - 1);
  for (auto [nq, n, nk] : {std::tuple{1, 64, 5}, {3, 17, 9}, {9, 80, 33}, {5, 33, 1}, {12, 64, 40}}) {
    const int ld = n + 5;
    std::vector<int32_t> v(static_cast<size_t>(nk) * ld), p(static_cast<size_t>(nq) * nk);
    for (int32_t& e : v) e = any(rng);
    for (int32_t& e : p) e = prob(rng) / nk;  // probabilities summing to at most 1 (Q30)
    v[0] = INT32_MIN;
    std::vector<int64_t> acc(static_cast<size_t>(nq) * n);
    weighted_sum_s32(p.data(), nk, nq, v.data(), ld, nk, n, acc.data(), n);
    for (int j = 0; j < nq; ++j) {
      for (int i = 0; i < n; ++i) {
        int64_t want = 0;
        for (int t = 0; t < nk; ++t) want += int64_t{p[static_cast<size_t>(j) * nk + t]} * v[static_cast<size_t>(t) * ld + i];
        ASSERT_EQ(acc[static_cast<size_t>(j) * n + i], want) << nq << "x" << n << "x" << nk << " j " << j << " i " << i;
      }
    }
  }
}

// The FP32 attention kernels against double-precision references: Softmax
// (vector exp, ragged tails, underflowing scores) within a few FP32 ulps, and
// the probability-weighted values within FP32 rounding; a block of queries
// gives each query's row bit for bit as a block of one.
TEST_P(IsaVariants, Fp32AttentionKernelsAgreeWithDoubleReference) {
  model::set_active_isa(GetParam());
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> d(-30.0f, 30.0f);
  for (int n : {1, 7, 16, 33, 100}) {
    std::vector<float> x(n);
    for (float& v : x) v = d(rng);
    if (n > 2) x[1] = x[0] - 200.0f;  // exp underflows to 0
    // The reference takes the same FP32 arguments x·scale − max (their
    // rounding is FP32's, not the kernel's), then exp and the sum in double.
    const float scale = 0.7f;
    float max = -1e30f;
    for (float v : x) max = std::max(max, v * scale);
    double sum = 0;
    for (float v : x) sum += std::exp(double{v * scale - max});
    std::vector<float> got = x;
    model::scaled_softmax_isa(GetParam(), got.data(), n, scale);
    for (int i = 0; i < n; ++i) {
      const double want = std::exp(double{x[i] * scale - max}) / sum;
      ASSERT_NEAR(got[i], want, 4e-7 * want + 1e-37) << "n " << n << ", i " << i;
    }
  }
  for (auto [nq, hd, keys] : {std::tuple{5, 64, 40}, {3, 20, 17}, {9, 80, 25}, {1, 128, 3}}) {
    std::vector<float> p(static_cast<size_t>(nq) * keys), v(static_cast<size_t>(keys) * (hd + 3));
    std::uniform_real_distribution<float> u(0.0f, 1.0f), w(-2.0f, 2.0f);
    for (float& e : p) e = u(rng);
    for (float& e : v) e = w(rng);
    std::vector<int> len(nq);
    for (int j = 0; j < nq; ++j) len[j] = keys - nq + 1 + j;  // a causal block: one more key per query
    std::vector<float> o(static_cast<size_t>(nq) * hd);
    model::weighted_values_isa(GetParam(), p.data(), keys, nq, len.data(), v.data(), hd + 3, hd, o.data(), hd);
    for (int j = 0; j < nq; ++j) {
      std::vector<float> alone(hd);
      model::weighted_values_isa(GetParam(), &p[static_cast<size_t>(j) * keys], keys, 1, &len[j], v.data(), hd + 3, hd,
                                 alone.data(), hd);
      ASSERT_EQ(alone, std::vector<float>(o.begin() + static_cast<long>(j) * hd, o.begin() + static_cast<long>(j + 1) * hd));
      for (int i = 0; i < hd; ++i) {
        double want = 0, magnitude = 0;
        for (int t = 0; t < len[j]; ++t) {
          want += double{p[static_cast<size_t>(j) * keys + t]} * v[static_cast<size_t>(t) * (hd + 3) + i];
          magnitude += std::abs(double{p[static_cast<size_t>(j) * keys + t]} * v[static_cast<size_t>(t) * (hd + 3) + i]);
        }
        ASSERT_NEAR(o[static_cast<size_t>(j) * hd + i], want, 1e-6 * magnitude) << nq << "x" << hd << " j " << j << " i " << i;
      }
    }
  }
}

// The FP32 engine at this level against the scalar level (the original code):
// the same logits within FP32 rounding of the whole forward pass.
TEST_P(IsaVariants, Fp32EngineAgreesWithScalarLevel) {
  const model::Model m = make_random_model(small_config(), 13);
  std::vector<int> prompt(50);
  for (int i = 0; i < 50; ++i) prompt[i] = (i * 53 + 7) % 300;
  auto logits_at = [&](Isa isa) {
    model::set_active_isa(isa);
    model::Fp32Lm lm(m, 64);
    std::vector<float> logits;
    lm.forward(prompt.data(), 50, true, logits);
    return logits;
  };
  const std::vector<float> reference = logits_at(Isa::kScalar), got = logits_at(GetParam());
  ASSERT_EQ(got.size(), reference.size());
  const auto [lo, hi] = std::minmax_element(reference.begin(), reference.end());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], reference[i], 1e-4 * (*hi - *lo)) << i;
}

INSTANTIATE_TEST_SUITE_P(, IsaVariants, ::testing::Values(Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kAmx),
                         [](const ::testing::TestParamInfo<Isa>& info) { return std::string(model::isa_name(info.param)); });

TEST(IsaDispatch, NamesParseAndBestIsSupported) {
  EXPECT_TRUE(model::isa_supported(model::best_isa()));
  EXPECT_TRUE(model::isa_supported(Isa::kScalar));
  for (Isa isa : model::supported_isas()) EXPECT_EQ(model::parse_isa(model::isa_name(isa), "--isa"), isa);
  EXPECT_THROW(model::parse_isa("sse9", "--isa"), BadInput);
  EXPECT_THROW(model::set_engine_threads(0), BadInput);
}

}  // namespace
}  // namespace ispsim::integer
