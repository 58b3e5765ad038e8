// The Elastic-SIMD without Stream Filter (elastic_no_filter): padded tiles and
// recomputed entries staged through the global SRAM, against closed forms;
// the same power budget as the Elastic-SIMD; inside the engine, the same
// functional counts and bytes as elastic_simd, more MACs.
#include <gtest/gtest.h>

#include "models/isp/elastic_no_filter.h"
#include "models/isp/register_all.h"
#include "tests/models/isp/engine_rig.h"

namespace ispsim::isp {
namespace {

using sc_core::sc_time;
using sc_core::SC_NS;
using namespace ispsim::isp::testing;

const TileShape kDecodeGqa{4, 128, 16, 16};  // n = 4 row-heads, d = 128, FP16

TEST(ElasticNoFilter, ATileIsComputedWholeAndItsSubstitutesAreStaged) {
  const ElasticNoFilter accel = accelerator_from<ElasticNoFilter>();
  const ElasticSimd simd{IspConfig::defaults()};
  // A precomputed page: 32 entries, 12 invisible (dropped), 3 of the 20 visible substituted.
  FilterResult f;
  f.kept = 20;
  f.dropped = 12;
  f.substituted = 3;
  f.cycles = 32;
  const TileCost c = accel.tile_cost(ElasticSimd::kBroadsideMode, f, 32, kDecodeGqa);
  EXPECT_EQ(c.compute_cycles, 2u * 4 * 32 + 18);     // all 32 entries, broadside
  EXPECT_EQ(c.sram_io_cycles, 3u * 512 / 32);        // 3 entries of 512 B at 32 B/cycle; no filter pass
  EXPECT_EQ(c.cycles, 274u + 48u);
  EXPECT_EQ(c.macs, 2u * 4 * 32 * 128);
  EXPECT_EQ(c.computed_tokens, 32u);
  const PageCost padded = simd.page_cost(SimdMode::kBroadside, 32, 4, 128, 16, 16);
  EXPECT_EQ(c.scratchpad_bytes, padded.scratchpad_bytes + 2u * 3 * 512);
  EXPECT_DOUBLE_EQ(c.energy_pj, padded.energy_pj + 3 * 512 * (12.5 + 2.5));

  // An appended page whose 10 first entries are substitutes: staged into SRAM,
  // and padded in this page's computation.
  FilterResult a;
  a.kept = 22;
  a.forwarded = 10;
  const TileCost ca = accel.tile_cost(ElasticSimd::kBroadsideMode, a, 32, kDecodeGqa);
  EXPECT_EQ(ca.sram_io_cycles, 10u * 512 / 32);
  EXPECT_EQ(ca.computed_tokens, 32u);

  // Only substitutes: nothing computed, all staged.
  FilterResult s;
  s.forwarded = 32;
  const TileCost cs = accel.tile_cost(ElasticSimd::kCascadedMode, s, 32, kDecodeGqa);
  EXPECT_EQ(cs.compute_cycles, 0u);
  EXPECT_EQ(cs.macs, 0u);
  EXPECT_EQ(cs.cycles, 32u * 512 / 32);

  // A wider staging port: ceil(3 * 512 / 100) = 16 cycles.
  schema::IspParams wide;
  wide.mutable_staging()->set_bytes_per_cycle(100);
  EXPECT_EQ(accelerator_from<ElasticNoFilter>(wide).tile_cost(ElasticSimd::kBroadsideMode, f, 32, kDecodeGqa).sram_io_cycles, 16u);
}

TEST(ElasticNoFilter, SamePowerBudgetModesAndPolicyAsTheElasticSimd) {
  const ElasticNoFilter accel = accelerator_from<ElasticNoFilter>();
  const ElasticSimd simd{IspConfig::defaults()};
  EXPECT_DOUBLE_EQ(accel.peak_power_w(), simd.peak_power_w());
  EXPECT_DOUBLE_EQ(accel.static_power_w(), simd.static_power_w());
  ASSERT_EQ(accel.modes().size(), 2u);
  EXPECT_EQ(accel.modes()[0].name, "broadside");
  for (uint64_t n : {1, 4, 33, 34, 256})
    EXPECT_EQ(accel.choose_mode(32, TileShape{n, 128, 16, 16}), simd.choose_mode(32, TileShape{n, 128, 16, 16})) << n;
  EXPECT_EQ(accel.cycles_to_ps(7), 7000u);
  schema::IspParams bad;
  bad.mutable_staging()->set_bytes_per_cycle(0);
  EXPECT_THROW(accelerator_from<ElasticNoFilter>(bad), BadInput);
  register_all();
  EXPECT_TRUE(accelerators().contains("elastic_no_filter"));
}

TEST(ElasticNoFilter, WithoutSubstitutesAPageCostsTheSimdAloneNoFilterPass) {
  // 1 channel x 4 dies, 6 precomputed + 2 appended pages, 64 rows, one head:
  // cascaded, tC = 2 * (32 * 128 + 63) + 18 = 8336 ns > tOut: the slow-consumer
  // closed form tR + tOut + 8 tC + the last merge (64 + 8 cycles).
  const trace::ModelShape s = one_layer(1, 1);
  EngineRig rig("nofilter", 1, 4, s, 6 * 32, 64, std::make_unique<ElasticNoFilter>(accelerator_from<ElasticNoFilter>()));
  const AttentionWork w = op(s, 64, 6 * 32, 64);
  ASSERT_EQ(rig.engine.plan(w).mode, ElasticSimd::kCascadedMode);
  const sc_time tc(2 * (32 * 128 + 63) + 18, SC_NS);
  EXPECT_EQ(rig.run(w), kTr + kTout + 8 * tc + sc_time(72, SC_NS));
  EXPECT_EQ(rig.engine.sram_io_cycles(), 0u);
  EXPECT_EQ(rig.engine.bytes_read(), rig.engine.bytes_consumed());
}

TEST(ElasticNoFilter, InTheEngineSubstitutesCostStagingInEveryPageThatHoldsThem) {
  // 1 channel x 4 dies; context 64 (2 pages on dies 0 and 1) with HKVD bits
  // {1, 2, 3, 40, 41, 42}; a fused op whose 6 substitutes + 26 query tokens came
  // with the command (32 rows, n = 32 < 34: broadside). The 26 own tokens are a
  // supplied tile, computed first (done long before tR). Each page: t = 32,
  // 2 * 32 * 32 + 18 = 2066 cycles, plus staging 3 substitutes (3 * 512 / 32 =
  // 48 cycles) without the filter, or the filter's 32-cycle pass with it. Both
  // pages are faster than tOut: tR + 2 tOut + the last page + its merge (32 + 8).
  const trace::ModelShape s = one_layer(1, 1);
  const trace::BitVector mask = mask_of(64, {1, 2, 3, 40, 41, 42});
  AttentionWork w = op(s, 32, 64, 0, &mask);
  w.appended_tokens_supplied = 32;
  EngineRig plain("nofilter", 1, 4, s, 64, 32, std::make_unique<ElasticNoFilter>(accelerator_from<ElasticNoFilter>()));
  EngineRig filtered("filtered", 1, 4, s, 64, 32, std::make_unique<ElasticSimd>(IspConfig::defaults()));
  const AttentionPlan plan = plain.engine.plan(w);
  ASSERT_EQ(plan.mode, ElasticSimd::kBroadsideMode);
  EXPECT_EQ(plan.sram_io_cycles, 48u + 48);
  EXPECT_EQ(plain.run(w), kTr + 2 * kTout + sc_time(2066 + 48 + 40, SC_NS));
  EXPECT_EQ(filtered.run(w), kTr + 2 * kTout + sc_time(32 + 2066 + 40, SC_NS));
  EXPECT_EQ(plain.engine.sram_io_cycles(), 96u);
  // Invariants: the same tokens seen and bytes read; nothing is invisible here,
  // so padding adds no MACs.
  EXPECT_EQ(plain.engine.tokens_kept(), 64u + 26);
  EXPECT_EQ(plain.engine.tokens_kept(), filtered.engine.tokens_kept());
  EXPECT_EQ(plain.engine.tokens_substituted(), 6u);
  EXPECT_EQ(plain.engine.bytes_read(), filtered.engine.bytes_read());
  EXPECT_EQ(plain.engine.bytes_consumed(), plain.engine.bytes_read());
  EXPECT_EQ(plain.engine.macs(), filtered.engine.macs());
}

TEST(ElasticNoFilter, InvisibleTokensOfARecomputationPassArePadded) {
  // Unfused recomputation: the rows are the 4 substitutes (positions <= 41), so
  // the filter drops positions 42..63 of page 1; without it they are computed.
  const trace::ModelShape s = one_layer(1, 1);
  const trace::BitVector mask = mask_of(64, {1, 2, 40, 41});
  AttentionWork w = op(s, 4, 64, 0, &mask);
  w.appended_tokens_supplied = 4;
  EngineRig plain("nofilter", 1, 4, s, 64, 4, std::make_unique<ElasticNoFilter>(accelerator_from<ElasticNoFilter>()));
  EngineRig filtered("filtered", 1, 4, s, 64, 4, std::make_unique<ElasticSimd>(IspConfig::defaults()));
  plain.run(w);
  filtered.run(w);
  EXPECT_EQ(filtered.engine.tokens_dropped(), 22u);
  EXPECT_EQ(plain.engine.tokens_dropped(), 22u);  // what the attention sees is the same
  EXPECT_EQ(filtered.engine.macs(), 2u * 4 * (32 + 10) * 128);
  EXPECT_EQ(plain.engine.macs(), 2u * 4 * (32 + 32) * 128);
}

}  // namespace
}  // namespace ispsim::isp
