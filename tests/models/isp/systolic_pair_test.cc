// The decoupled SIMD + systolic-array pair (systolic_pair): tile costs in both
// modes against closed forms, the mode choice, the power budget it shares with
// the Elastic-SIMD, staging, and one op in the engine.
#include <gtest/gtest.h>

#include "models/isp/register_all.h"
#include "models/isp/systolic_pair.h"
#include "tests/models/isp/engine_rig.h"

namespace ispsim::isp {
namespace {

using sc_core::sc_time;
using sc_core::SC_NS;
using namespace ispsim::isp::testing;

FilterResult kept(uint32_t tokens) {
  FilterResult f;
  f.kept = tokens;
  f.cycles = tokens;  // a filter pass the pair does not have
  return f;
}

TEST(SystolicPair, SystolicModeIsTwoArrayGemmsAroundTheSimdSoftmaxPlusTheExchange) {
  const SystolicPair pair = accelerator_from<SystolicPair>();
  // 8 x 8 array: (M x K) x (K x N) = ceil(M/8) * ceil(N/8) * K + 14.
  EXPECT_EQ(pair.gemm_cycles(128, 128, 32), 16u * 4 * 128 + 14);
  // n = 128 row-heads, t = 32, d = 128, FP16: Q.K^T 8206 + softmax
  // 2 * ceil(4096 / 64) + (2 * 6 + 4) = 144 + P.V 16 * 16 * 32 + 14 = 8206.
  const TileShape thin{128, 128, 16, 16};
  const TileCost c = pair.tile_cost(SystolicPair::kSystolicMode, kept(32), 32, thin);
  EXPECT_EQ(c.compute_cycles, 8206u + 144 + 8206);
  // Exchange: A and P (4096 FP16 each) each written and read: 32768 B at 128 B per cycle.
  EXPECT_EQ(c.sram_io_cycles, 4u * 4096 * 2 / 128);
  EXPECT_EQ(c.cycles, 16556u + 256);
  EXPECT_EQ(c.macs, 2u * 128 * 32 * 128);
  // K and V once per block row (16), Q once per block column (4), plus the exchange.
  const uint64_t operands = 2u * 16 * 32 * 128 * 2 + 4u * 128 * 128 * 2;
  EXPECT_EQ(c.scratchpad_bytes, operands + 32768);
  EXPECT_DOUBLE_EQ(c.energy_pj, 1048576 * 1.5 + 4096 * 2.0 + 8192 * 0.4 + double(operands + 32768) * 2.5);
  // 130 row-heads: 17 block rows; softmax 2 * ceil(4160 / 64) + 16.
  const TileCost c130 = pair.tile_cost(SystolicPair::kSystolicMode, kept(32), 32, TileShape{130, 128, 16, 16});
  EXPECT_EQ(c130.compute_cycles, (17u * 4 * 128 + 14) + (2 * 65 + 16) + (17u * 16 * 32 + 14));
  EXPECT_EQ(c130.sram_io_cycles, 4u * 130 * 32 * 2 / 128);
}

TEST(SystolicPair, VectorModeIsTheSimdUnitAloneInBroadside) {
  const SystolicPair pair = accelerator_from<SystolicPair>();
  // d = 128 on 64 lanes: two cycles per (row-head, token) pair and phase:
  // 2 * 32 * 2 + 16 for one decode row.
  const TileCost c = pair.tile_cost(SystolicPair::kVectorMode, kept(32), 32, TileShape{1, 128, 16, 16});
  EXPECT_EQ(c.compute_cycles, 2u * 32 * 2 + 16);
  EXPECT_EQ(c.sram_io_cycles, 0u);  // no exchange, no filter pass, nothing staged
  EXPECT_EQ(c.macs, 2u * 32 * 128);
  // GQA n = 4: 2 * 128 * 2 + 16.
  EXPECT_EQ(pair.tile_cost(SystolicPair::kVectorMode, kept(32), 32, TileShape{4, 128, 16, 16}).cycles, 528u);
  // Nothing to compute: nothing at all (no filter pass either).
  EXPECT_EQ(pair.tile_cost(SystolicPair::kVectorMode, kept(0), 32, TileShape{4, 128, 16, 16}).cycles, 0u);
}

TEST(SystolicPair, PadsAndStagesLikeEveryDesignWithoutAFilter) {
  const SystolicPair pair = accelerator_from<SystolicPair>();
  FilterResult f = kept(20);
  f.dropped = 12;
  f.substituted = 2;
  const TileCost c = pair.tile_cost(SystolicPair::kVectorMode, f, 32, TileShape{1, 128, 16, 16});
  EXPECT_EQ(c.computed_tokens, 32u);                 // padded
  EXPECT_EQ(c.compute_cycles, 2u * 32 * 2 + 16);
  EXPECT_EQ(c.sram_io_cycles, 2u * 512 / 32);        // two entries staged at 32 B/cycle
}

TEST(SystolicPair, ModeChoiceAndTheSharedPowerBudget) {
  const SystolicPair pair = accelerator_from<SystolicPair>();
  EXPECT_EQ(pair.choose_mode(32, TileShape{1, 128, 16, 16}), SystolicPair::kVectorMode);      // decode GEMV
  EXPECT_EQ(pair.choose_mode(32, TileShape{128, 128, 16, 16}), SystolicPair::kSystolicMode);  // thin GEMM
  ASSERT_EQ(pair.modes().size(), 2u);
  EXPECT_EQ(pair.modes()[SystolicPair::kVectorMode].name, "vector");
  EXPECT_EQ(pair.modes()[SystolicPair::kSystolicMode].name, "systolic");
  // 8 x 8 + 64 MAC units = the Elastic-SIMD's 128: the same peak and static power.
  const ElasticSimd simd{IspConfig::defaults()};
  EXPECT_DOUBLE_EQ(pair.peak_power_w(), simd.peak_power_w());
  EXPECT_DOUBLE_EQ(pair.static_power_w(), simd.static_power_w());
  EXPECT_EQ(pair.cycles_to_ps(3), 3000u);
  schema::IspParams bigger;
  bigger.mutable_systolic_pair()->set_systolic_rows(16);
  EXPECT_GT(accelerator_from<SystolicPair>(bigger).peak_power_w(), simd.peak_power_w());
  schema::IspParams bad;
  bad.mutable_systolic_pair()->set_simd_lanes(0);
  EXPECT_THROW(accelerator_from<SystolicPair>(bad), BadInput);
  register_all();
  EXPECT_TRUE(accelerators().contains("systolic_pair"));
}

TEST(SystolicPair, InTheEngineAThinGemmOpIsComputeBound) {
  // 1 channel x 4 dies, 6 precomputed + 2 appended pages, 64 rows, one head,
  // no mask: systolic mode, per page Q.K^T 8 * 4 * 128 + 14 = 4110, softmax
  // 2 * 32 + 16 = 80, P.V 8 * 16 * 32 + 14 = 4110, exchange 16384 B / 128 = 128:
  // 8428 ns > tOut, so tR + tOut + 8 x 8428 ns + the last merge (64 + 8 cycles).
  const trace::ModelShape s = one_layer(1, 1);
  EngineRig pair("pair", 1, 4, s, 6 * 32, 64, std::make_unique<SystolicPair>(accelerator_from<SystolicPair>()));
  EngineRig simd("simd", 1, 4, s, 6 * 32, 64, std::make_unique<ElasticSimd>(IspConfig::defaults()));
  const AttentionWork w = op(s, 64, 6 * 32, 64);
  ASSERT_EQ(pair.engine.plan(w).mode, SystolicPair::kSystolicMode);
  EXPECT_EQ(pair.run(w), kTr + kTout + 8 * sc_time(8428, SC_NS) + sc_time(72, SC_NS));
  EXPECT_EQ(pair.engine.simd_busy(SystolicPair::kSystolicMode), 8 * sc_time(8428, SC_NS));
  EXPECT_EQ(pair.engine.sram_io_cycles(), 8u * 128);
  EXPECT_EQ(pair.engine.isp_sram_io_time(), 8 * sc_time(128, SC_NS));
  // Invariants against the Elastic-SIMD on the same op: the same tokens, bytes and MACs.
  simd.run(w);
  EXPECT_EQ(pair.engine.tokens_kept(), simd.engine.tokens_kept());
  EXPECT_EQ(pair.engine.bytes_read(), simd.engine.bytes_read());
  EXPECT_EQ(pair.engine.bytes_consumed(), pair.engine.bytes_read());
  EXPECT_EQ(pair.engine.macs(), simd.engine.macs());
}

}  // namespace
}  // namespace ispsim::isp
