// CacheBlend on a small random model: recomputing everything reproduces the
// full prefill (FP32 within 1e-5, integer bit-exact), the stored KV path is
// exact where it must be, HKVD selection follows the ratio, bad inputs throw.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "common/error.h"
#include "kernels/int/random_model.h"
#include "kernels/rag/blend.h"
#include "tests/kernels/rag/rag_test_models.h"

namespace ispsim::rag {
namespace {

using testing::rag_config;
using testing::rag_documents;
using testing::random_tokens;

const std::vector<std::string> kDocs = {"alpha", "beta", "gamma"};

struct Fixture {
  model::Model model = integer::make_random_model(rag_config(), 42);
  std::vector<int> calibration = random_tokens(512, 300, 1);
  RagModel fp32 = RagModel::fp32(model);
  RagModel int16 = RagModel::integer(model, calibration);
  std::vector<int> query = random_tokens(9, 300, 77);
};

// max |a - b| relative to the logits' scale max(1, max |b|): random-weight
// logits reach ~100, where FP32 values are 7.6e-6 apart, so an absolute 1e-5
// would demand bit-exactness from two different (equally valid) summation orders.
float relative_diff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  float diff = 0, scale = 1;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    diff = std::max(diff, std::fabs(a[i] - b[i]));
    scale = std::max(scale, std::fabs(b[i]));
  }
  return diff / scale;
}

void expect_layout(const BlendOutput& out, int layers, int answer_tokens) {
  ASSERT_EQ(out.context_tokens.size(), 205u);
  ASSERT_EQ(out.doc_token_counts, (std::vector<uint64_t>{70, 45, 90}));
  ASSERT_EQ(out.hkvd_masks.size(), static_cast<size_t>(layers));
  EXPECT_TRUE(out.hkvd_masks[0].empty());
  for (int l = 1; l < layers; ++l) EXPECT_EQ(out.hkvd_masks[l].size(), 205u);
  ASSERT_EQ(out.logits.size(), static_cast<size_t>(answer_tokens));
  ASSERT_EQ(out.answer.size(), static_cast<size_t>(answer_tokens));
}

TEST(Blend, FullRatioReproducesFullPrefillFp32) {
  Fixture f;
  KvStore store = precompute(f.fp32, rag_documents(300));
  BlendOptions o;
  o.ratio = 1.0;
  o.answer_tokens = 5;
  BlendOutput blended = blend(f.fp32, store, kDocs, f.query, o);
  BlendOutput full = full_prefill(f.fp32, store, kDocs, f.query, o);
  expect_layout(blended, 3, 5);
  expect_layout(full, 3, 5);
  EXPECT_EQ(blended.hkvd_count(), 205);
  EXPECT_EQ(blended.answer, full.answer);
  for (int i = 0; i < 5; ++i) EXPECT_LE(relative_diff(blended.logits[i], full.logits[i]), 1e-5f) << "row " << i;
}

TEST(Blend, FullRatioReproducesFullPrefillIntegerBitExact) {
  Fixture f;
  KvStore store = precompute(f.int16, rag_documents(300));
  BlendOptions o;
  o.ratio = 1.0;
  o.answer_tokens = 5;
  o.integer = true;
  BlendOutput blended = blend(f.int16, store, kDocs, f.query, o);
  BlendOutput full = full_prefill(f.int16, store, kDocs, f.query, o);
  expect_layout(blended, 3, 5);
  EXPECT_EQ(blended.answer, full.answer);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(blended.logits[i], full.logits[i]) << "row " << i;
}

// One document at ratio 0: its stored KV is exactly the KV a full prefill
// computes for the same tokens at the same positions, so nothing changes.
TEST(Blend, SingleDocumentAtRatioZeroEqualsFullPrefill) {
  Fixture f;
  for (const RagModel* engine : {&f.fp32, &f.int16}) {
    KvStore store = precompute(*engine, rag_documents(300));
    BlendOptions o;
    o.ratio = 0.0;
    o.answer_tokens = 3;
    o.integer = engine->is_integer();
    BlendOutput blended = blend(*engine, store, {"gamma"}, f.query, o);
    BlendOutput full = full_prefill(*engine, store, {"gamma"}, f.query, o);
    EXPECT_EQ(blended.hkvd_count(), 0);
    for (double d : blended.deviation) EXPECT_EQ(d, 0.0);
    EXPECT_EQ(blended.answer, full.answer) << engine->engine_name();
    for (int i = 0; i < 3; ++i) EXPECT_LE(relative_diff(blended.logits[i], full.logits[i]), 1e-5f) << engine->engine_name();
  }
}

// The first document sits where it was precomputed: zero layer-1 deviation.
// Later documents moved and lost their cross-attention: positive deviation.
TEST(Blend, DeviationIsZeroForTheFirstDocumentOnly) {
  Fixture f;
  for (const RagModel* engine : {&f.fp32, &f.int16}) {
    KvStore store = precompute(*engine, rag_documents(300));
    BlendOptions o;
    o.integer = engine->is_integer();
    BlendOutput out = blend(*engine, store, kDocs, f.query, o);
    ASSERT_EQ(out.deviation.size(), 205u);
    for (int t = 0; t < 70; ++t) EXPECT_EQ(out.deviation[t], 0.0) << engine->engine_name() << " token " << t;
    for (int t = 70; t < 205; ++t) EXPECT_GT(out.deviation[t], 0.0) << engine->engine_name() << " token " << t;
  }
}

TEST(Blend, HkvdAreTheLargestDeviationsAtTheRatio) {
  Fixture f;
  KvStore store = precompute(f.fp32, rag_documents(300));
  for (double ratio : {0.0, 0.05, 0.15, 0.25, 1.0}) {
    BlendOptions o;
    o.ratio = ratio;
    o.answer_tokens = 2;
    BlendOutput out = blend(f.fp32, store, kDocs, f.query, o);
    const int expected = static_cast<int>(std::llround(ratio * 205));
    EXPECT_EQ(out.hkvd_count(), expected) << ratio;
    for (int l = 2; l < 3; ++l) EXPECT_EQ(out.hkvd_masks[l], out.hkvd_masks[1]);
    // Every selected token deviates at least as much as every unselected one.
    double min_in = INFINITY, max_out = 0;
    for (int t = 0; t < 205; ++t)
      (out.hkvd_masks[1][t] ? min_in : max_out) =
          out.hkvd_masks[1][t] ? std::min(min_in, out.deviation[t]) : std::max(max_out, out.deviation[t]);
    if (expected > 0 && expected < 205) { EXPECT_GE(min_in, max_out) << ratio; }
  }
}

TEST(Blend, StoreOfAnotherModelIsRejected) {
  Fixture f;
  model::Model other_model = integer::make_random_model(rag_config(), 43);
  RagModel other = RagModel::fp32(other_model);
  KvStore store = precompute(other, rag_documents(300));
  EXPECT_THROW(blend(f.fp32, store, kDocs, f.query, {}), BadInput);
  EXPECT_THROW(full_prefill(f.fp32, store, kDocs, f.query, {}), BadInput);
  // The integer engine's store does not fit the FP32 engine either.
  KvStore int_store = precompute(f.int16, rag_documents(300));
  EXPECT_THROW(blend(f.fp32, int_store, kDocs, f.query, {}), BadInput);
}

TEST(Blend, BadInputsAreRejected) {
  Fixture f;
  KvStore store = precompute(f.fp32, rag_documents(300));
  EXPECT_THROW(blend(f.fp32, store, {"alpha", "delta"}, f.query, {}), BadInput);  // missing id
  BlendOptions long_answer;
  long_answer.answer_tokens = 256 - 205 - 9 + 2;  // one token past the 256-token context
  EXPECT_THROW(blend(f.fp32, store, kDocs, f.query, long_answer), BadInput);
  long_answer.answer_tokens -= 1;                 // exactly fits
  EXPECT_NO_THROW(blend(f.fp32, store, kDocs, f.query, long_answer));
  EXPECT_THROW(blend(f.fp32, store, kDocs, random_tokens(52, 300, 3), {}), BadInput);  // 205 + 52 > 256
  EXPECT_THROW(blend(f.fp32, store, kDocs, {}, {}), BadInput);                        // empty query
  BlendOptions bad;
  bad.ratio = 1.5;
  EXPECT_THROW(blend(f.fp32, store, kDocs, f.query, bad), BadInput);
  bad.ratio = 0.15;
  bad.integer = true;  // FP32 engine
  EXPECT_THROW(blend(f.fp32, store, kDocs, f.query, bad), BadInput);
  EXPECT_THROW(compute_document_kv(f.fp32, {"long", random_tokens(257, 300, 4)}), BadInput);
}

}  // namespace
}  // namespace ispsim::rag
