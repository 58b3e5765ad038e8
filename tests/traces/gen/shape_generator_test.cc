// Shape generator: requests from presets + profiles + seed, synthetic masks
// (H fixed, documented churn between layers), determinism.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "common/error.h"
#include "tests/support/files.h"
#include "tests/traces/gen/tracegen_test_util.h"
#include "traces/gen/model_presets.h"
#include "traces/gen/shape_generator.h"

using namespace ispsim;
using namespace ispsim::tracegen;
using namespace ispsim::tracegen::testing;

namespace {

ShapeOptions small_options() {
  ShapeOptions o;
  o.model = "SmolLM2-135M";
  o.dataset = "wik";
  o.context_tokens = 200;
  o.answer_tokens = 4;
  return o;
}

uint64_t overlap(const std::vector<bool>& a, const std::vector<bool>& b) {
  uint64_t n = 0;
  for (size_t i = 0; i < a.size(); ++i) n += a[i] && b[i];
  return n;
}

std::string bad_input(const ShapeOptions& o) {
  try {
    make_shape_request(o);
  } catch (const BadInput& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST(ShapeGenerator, MasksKeepHAndChangeTheDocumentedFractionPerLayer) {
  // C = 1000, H = round(0.15 * 1000) = 150, swaps per layer = round(0.10 * 150) = 15.
  const auto masks = synthetic_hkvd_masks(30, 1000, 150, 0.10, 99);
  ASSERT_EQ(masks.size(), 30u);
  EXPECT_TRUE(masks[0].empty());
  for (uint32_t l = 1; l < 30; ++l) {
    ASSERT_EQ(masks[l].size(), 1000u);
    EXPECT_EQ(popcount(masks[l]), 150u) << l;
    if (l > 1) {
      EXPECT_EQ(overlap(masks[l - 1], masks[l]), 135u) << l;
    }
  }
  // Edge cases: nothing selected, everything selected (no unselected token to swap in).
  for (const auto& m : synthetic_hkvd_masks(4, 10, 0, 0.5, 1)) EXPECT_EQ(popcount(m), 0u);
  const auto all = synthetic_hkvd_masks(4, 10, 10, 0.5, 1);
  for (uint32_t l = 1; l < 4; ++l) EXPECT_EQ(popcount(all[l]), 10u);
}

TEST(ShapeGenerator, RequestFromOptions) {
  const BlendRequest r = make_shape_request(small_options());
  EXPECT_EQ(r.model.name(), "SmolLM2-135M");
  EXPECT_EQ(r.doc_tokens, std::vector<uint64_t>(5, 200));
  EXPECT_EQ(r.answer_tokens, 4u);
  const DatasetProfile& wik = find_dataset_profile("wik");
  EXPECT_GE(r.query_tokens, wik.query_min_tokens);
  EXPECT_LE(r.query_tokens, wik.query_max_tokens);
  EXPECT_DOUBLE_EQ(r.recompute_ratio, 0.15);
  ASSERT_EQ(r.hkvd_masks.size(), 30u);
  for (uint32_t l = 1; l < 30; ++l) EXPECT_EQ(popcount(r.hkvd_masks[l]), 150u);
  check_blend_request(r, all_programs());

  ShapeOptions o = small_options();
  o.docs = 3;
  o.context_tokens.reset();
  o.query_tokens = 9;
  o.answer_tokens.reset();
  o.recompute_ratio = 0.05;
  o.dataset = "cad";
  const BlendRequest drawn = make_shape_request(o);
  const DatasetProfile& cad = find_dataset_profile("cad");
  ASSERT_EQ(drawn.doc_tokens.size(), 3u);
  uint64_t context = 0;
  for (uint64_t d : drawn.doc_tokens) {
    EXPECT_GE(d, cad.doc_min_tokens);
    EXPECT_LE(d, cad.doc_max_tokens);
    context += d;
  }
  EXPECT_EQ(drawn.query_tokens, 9u);
  EXPECT_GE(drawn.answer_tokens, cad.answer_min_tokens);
  EXPECT_LE(drawn.answer_tokens, cad.answer_max_tokens);
  EXPECT_EQ(popcount(drawn.hkvd_masks[1]), uint64_t(std::llround(0.05 * double(context))));
}

// The caps of the acceptance grid: drawn documents scaled down together, a drawn
// answer cut; given lengths untouched; both recorded in the producer settings.
TEST(ShapeGenerator, ContextAndAnswerCaps) {
  ShapeOptions o;
  o.model = "SmolLM2-135M";
  o.dataset = "cad";
  o.seed = 3;
  const BlendRequest free = make_shape_request(o);
  uint64_t drawn = 0;
  for (uint64_t d : free.doc_tokens) drawn += d;
  ASSERT_GT(drawn, 4000u);
  ASSERT_GT(free.answer_tokens, 40u);
  o.max_context_tokens = 4000;
  o.max_answer_tokens = 40;
  const BlendRequest capped = make_shape_request(o);
  ASSERT_EQ(capped.doc_tokens.size(), free.doc_tokens.size());
  uint64_t total = 0;
  for (size_t i = 0; i < capped.doc_tokens.size(); ++i) {
    EXPECT_EQ(capped.doc_tokens[i], std::max<uint64_t>(1, free.doc_tokens[i] * 4000 / drawn)) << i;
    total += capped.doc_tokens[i];
  }
  EXPECT_LE(total, 4000u);
  EXPECT_GT(total, 4000u - capped.doc_tokens.size());
  EXPECT_EQ(capped.answer_tokens, 40u);
  EXPECT_EQ(capped.query_tokens, free.query_tokens);
  EXPECT_EQ(popcount(capped.hkvd_masks[1]), uint64_t(std::llround(0.15 * double(total))));
  // Under the caps nothing changes; given lengths are not capped.
  o.max_context_tokens = drawn;
  o.max_answer_tokens = free.answer_tokens;
  EXPECT_EQ(make_shape_request(o).doc_tokens, free.doc_tokens);
  o.context_tokens = 3000;
  o.answer_tokens = 100;
  o.max_context_tokens = 10;
  o.max_answer_tokens = 1;
  const BlendRequest given = make_shape_request(o);
  EXPECT_EQ(given.doc_tokens, std::vector<uint64_t>(5, 3000));
  EXPECT_EQ(given.answer_tokens, 100u);
  bool recorded = false;
  const trace::Producer producer = shape_producer(o);
  for (const trace::Setting& setting : producer.settings())
    recorded = recorded || (setting.key() == "max_context_tokens" && setting.value() == "10");
  EXPECT_TRUE(recorded);
}

TEST(ShapeGenerator, SameSeedSameBytesDifferentSeedDifferentMasks) {
  const ShapeOptions o = small_options();
  generate_shape_trace(o, scratch_path("a.trace"));
  generate_shape_trace(o, scratch_path("b.trace"));
  const std::string a = ispsim::testing::read_text(scratch_path("a.trace"));
  ASSERT_GT(a.size(), 1000u);
  EXPECT_EQ(a, ispsim::testing::read_text(scratch_path("b.trace")));

  ShapeOptions other = o;
  other.seed = 2;
  const BlendRequest r1 = make_shape_request(o), r2 = make_shape_request(other);
  EXPECT_EQ(r1.doc_tokens, r2.doc_tokens);  // given explicitly
  EXPECT_NE(r1.hkvd_masks[1], r2.hkvd_masks[1]);
  generate_shape_trace(other, scratch_path("c.trace"));
  EXPECT_NE(a, ispsim::testing::read_text(scratch_path("c.trace")));

  // The masks in the file are the request's.
  const trace::TraceText t = trace::read_trace(scratch_path("a.trace"));
  for (const trace::Op& op : t.op())
    if (op.has_hkvd_select()) {
      std::vector<bool> bits(op.hkvd_select().mask().bit_length());
      for (size_t i = 0; i < bits.size(); ++i)
        bits[i] = (static_cast<unsigned char>(op.hkvd_select().mask().bits()[i / 8]) >> (i % 8)) & 1;
      EXPECT_EQ(bits, r1.hkvd_masks[1]);
    }
  EXPECT_EQ(t.header().producer().kind(), trace::PRODUCER_SHAPE_GENERATOR);
  EXPECT_EQ(t.header().request().dataset(), "wik");
}

TEST(ShapeGenerator, EveryPresetAndProfileGenerates) {
  // Small contexts keep this quick; each (model, dataset) pair must build and validate.
  for (const trace::ModelShape& m : model_presets())
    for (const DatasetProfile& p : dataset_profiles()) {
      ShapeOptions o;
      o.model = m.name();
      o.dataset = p.key;
      o.context_tokens = 64;
      o.answer_tokens = 1;
      o.query_tokens = 4;
      const BlendRequest r = make_shape_request(o);
      EXPECT_NO_THROW(check_blend_request(r, all_programs())) << m.name() << " " << p.key;
    }
  ShapeOptions o = small_options();
  o.model = "OPT-350M";
  o.dataset = "hpt";
  EXPECT_NO_THROW(generate_shape_trace(o, scratch_path("opt.trace")));
}

TEST(ShapeGenerator, BadOptions) {
  ShapeOptions o = small_options();
  o.recompute_ratio = -0.1;
  EXPECT_EQ(bad_input(o), "--ratio: -0.1 is not within 0..1");
  o = small_options();
  o.docs = 0;
  EXPECT_EQ(bad_input(o), "--docs: 0 is out of range 1..1024");
  o = small_options();
  o.context_tokens = 0;
  EXPECT_EQ(bad_input(o), "--context-tokens: 0 is out of range 1..1048576");
  o = small_options();
  o.docs = 1000;
  o.context_tokens = 2000;
  EXPECT_NE(bad_input(o).find("exceeds the generator's 1048576-token limit"), std::string::npos) << bad_input(o);
  o = small_options();
  o.query_tokens = 0;
  EXPECT_EQ(bad_input(o), "--query-tokens: 0 is out of range 1..65536");
  o = small_options();
  o.answer_tokens = 4097;
  EXPECT_EQ(bad_input(o), "--answer-tokens: 4097 is out of range 0..4096");
  // SmolLM2-135M: ceil(2^20 / 8) B x 29 layers x (5 + 2 x 400) masks = 3 059 875 840 B > 2 GiB.
  EXPECT_EQ(estimated_mask_bytes(30, 1u << 20, 400), 131072ull * 29 * 805);
  o = small_options();
  o.docs = 1024;
  o.context_tokens = 1024;
  o.answer_tokens = 400;
  EXPECT_EQ(bad_input(o), "ispsim trace gen: 1048576 context tokens and 400 answer tokens on SmolLM2-135M would "
                          "write 2918 MiB of HKVD masks (limit 2048 MiB); use a shorter context or fewer answer tokens");
  o = small_options();
  o.model = "nope";
  EXPECT_NE(bad_input(o).find("unknown model 'nope'"), std::string::npos);
  o = small_options();
  o.dataset = "nope";
  EXPECT_NE(bad_input(o).find("unknown dataset 'nope'"), std::string::npos);
}
