// The PageCompute role: the Elastic-SIMD as a role implementation, the
// registry of accelerators, and the attention engine driven by an accelerator
// it knows nothing about (its modes name the statistics and the waveform, its
// cost sets the page time, its static power goes to the ledger).
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <systemc>

#include "common/error.h"
#include "models/core/energy_ledger.h"
#include "models/core/server.h"
#include "models/core/stats.h"
#include "models/isp/attention_engine.h"
#include "models/isp/elastic_simd.h"
#include "models/isp/register_all.h"
#include "schema/options.pb.h"
#include "tests/support/vcd_check.h"
#include "models/nand/bus_protocol.h"

namespace ispsim::isp {
namespace {

using sc_core::sc_time;
using sc_core::SC_NS;
using sc_core::SC_US;

TEST(ElasticSimdRole, ATileIsTheFilterPassThenTheKeptTokens) {
  const ElasticSimd simd{IspConfig::defaults()};
  FilterResult filter;
  filter.kept = 20;
  filter.dropped = 12;
  filter.cycles = 32;
  const TileShape shape{4, 128, 16, 16};
  const TileCost c = simd.tile_cost(ElasticSimd::kBroadsideMode, filter, 32, shape);
  const PageCost page = simd.page_cost(SimdMode::kBroadside, 20, 4, 128, 16, 16);
  EXPECT_EQ(c.compute_cycles, page.cycles);
  EXPECT_EQ(c.compute_cycles, 2u * 4 * 20 + 18);  // broadside, d = P
  EXPECT_EQ(c.sram_io_cycles, 32u);              // the filter reads all 32 entries
  EXPECT_EQ(c.cycles, 32u + 2 * 4 * 20 + 18);
  EXPECT_EQ(c.macs, 2u * 4 * 20 * 128);
  EXPECT_EQ(c.computed_tokens, 20u);
  EXPECT_EQ(c.scratchpad_bytes, page.scratchpad_bytes);
  EXPECT_DOUBLE_EQ(c.energy_pj, page.energy_pj);
  // Nothing kept: only the filter's pass.
  filter.kept = 0;
  const TileCost empty = simd.tile_cost(ElasticSimd::kCascadedMode, filter, 32, shape);
  EXPECT_EQ(empty.cycles, 32u);
  EXPECT_EQ(empty.macs, 0u);
  EXPECT_EQ(empty.energy_pj, 0.0);
  // Modes and the policy, through the role.
  ASSERT_EQ(simd.modes().size(), 2u);
  EXPECT_EQ(simd.modes()[ElasticSimd::kBroadsideMode].name, "broadside");
  EXPECT_EQ(simd.modes()[ElasticSimd::kCascadedMode].name, "cascaded");
  EXPECT_EQ(simd.choose_mode(32, TileShape{1, 128, 16, 16}), ElasticSimd::kBroadsideMode);
  EXPECT_EQ(simd.choose_mode(32, TileShape{256, 128, 16, 16}), ElasticSimd::kCascadedMode);
  // 1 ns per cycle at 1 GHz; peak = 0.1 W static + 128 MACs x 1 GHz x 1.5 pJ.
  EXPECT_EQ(simd.cycles_to_ps(82), 82000u);
  EXPECT_DOUBLE_EQ(simd.static_power_w(), 0.1);
  EXPECT_DOUBLE_EQ(simd.peak_power_w(), 0.1 + 128 * 1e9 * 1.5e-12);
}

// Each accelerator's parameters come from the IspParams fields' read_by option:
// the engine's scratchpad fields and the shared ones for all, the rest as named.
TEST(Accelerators, EachReadsTheFieldsItsReadByOptionsName) {
  register_all();
  EXPECT_EQ(parameters_read_by("elastic_simd"),
            (std::vector<std::string>{"pes", "clock_ghz", "macs_per_pe_per_cycle", "scratchpad_bytes",
                                      "precomputed_page_buffers", "out_of_place_page_buffers",
                                      "stream_filter_tokens_per_cycle", "exp_lut_latency_cycles", "mode_policy",
                                      "mac_pj", "vector_op_pj", "exp_pj", "scratchpad_pj_per_byte", "static_power_w"}));
  EXPECT_EQ(parameters_read_by("systolic_pair"),
            (std::vector<std::string>{"clock_ghz", "scratchpad_bytes", "precomputed_page_buffers",
                                      "out_of_place_page_buffers", "exp_lut_latency_cycles", "mac_pj", "vector_op_pj",
                                      "exp_pj", "scratchpad_pj_per_byte", "static_power_w", "staging",
                                      "systolic_pair"}));
  // Every name a read_by option gives is a registered accelerator (a typo would
  // make its field unreadable by every accelerator).
  const google::protobuf::Descriptor& params = *schema::IspParams::descriptor();
  for (int i = 0; i < params.field_count(); ++i) {
    const google::protobuf::FieldOptions& options = params.field(i)->options();
    for (int r = 0; r < options.ExtensionSize(schema::read_by); ++r)
      EXPECT_TRUE(accelerators().contains(options.GetExtension(schema::read_by, r))) << params.field(i)->name();
  }
}

TEST(Accelerators, RegisteredByNameAndUnknownNamesListTheKnownOnes) {
  register_all();
  register_all();  // idempotent
  EXPECT_TRUE(accelerators().contains("elastic_simd"));
  const schema::IspParams defaults = schema::resolved(schema::IspParams{}, "isp");
  const IspConfig config = IspConfig::from_params(defaults, "isp");
  const std::unique_ptr<PageCompute> simd = accelerators().create("elastic_simd", config, defaults, "isp");
  EXPECT_EQ(simd->modes().size(), 2u);
  EXPECT_DOUBLE_EQ(simd->static_power_w(), 0.1);  // the schema default
  try {
    accelerators().create("tensor_core", config, defaults, "isp");
    FAIL() << "no BadInput";
  } catch (const BadInput& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("modules.isp_accelerator"), std::string::npos) << what;
    EXPECT_NE(what.find("'tensor_core'"), std::string::npos) << what;
    for (const std::string& name : accelerators().names()) EXPECT_NE(what.find(name), std::string::npos) << what;
  }
  // Parameters are checked by the schema before they are converted into the
  // config an implementation gets; the conversion refuses a message that
  // skipped the check (a programming error).
  schema::IspParams bad;
  bad.set_pes(0);
  EXPECT_THROW(schema::resolved(bad, "isp"), BadInput);
  EXPECT_THROW(IspConfig::from_params(bad, "isp"), std::logic_error);
}

// An accelerator the engine has never heard of: three modes, a fixed time per
// tile with a kept token, the mode from the row-heads.
class FixedTimeCompute : public PageCompute {
 public:
  const std::vector<ModeInfo>& modes() const override {
    static const std::vector<ModeInfo> m{{"alpha", "time in alpha"}, {"beta", "time in beta"}, {"gamma", "time in gamma"}};
    return m;
  }
  ComputeMode choose_mode(uint64_t tokens, const TileShape& shape) const override {
    return shape.row_heads > 4 ? 2 : 1;
  }
  TileCost tile_cost(ComputeMode, const FilterResult& filter, uint32_t, const TileShape& shape) const override {
    TileCost c;
    if (filter.kept == 0) return c;
    c.compute_cycles = 7000;
    c.sram_io_cycles = 2000;
    c.cycles = 9000;
    c.macs = 1;
    c.energy_pj = 1000;
    return c;
  }
  uint64_t cycles_to_ps(uint64_t cycles) const override { return cycles * 1000; }  // 1 GHz
  double static_power_w() const override { return 0.25; }
  double peak_power_w() const override { return 1.0; }
};

const sc_time kTout = sc_time::from_value(std::llround(16384 * 1e12 / 2.4e9));
const sc_time kTr(5, SC_US);

trace::ModelShape one_head() {
  trace::ModelShape s;
  s.set_layers(1);
  s.set_heads(1);
  s.set_kv_heads(1);
  s.set_head_dim(128);
  s.set_kv_bits(16);
  s.set_activation_bits(16);
  return s;
}

double stat(const std::string& name) {
  for (const stats::Entry* e : stats::Registry::global().sorted())
    if (e->name == name) return e->read();
  ADD_FAILURE() << "no statistic " << name;
  return -1;
}

TEST(AttentionEngineRole, AnyAcceleratorSetsThePageTimeTheStatisticsAndTheWaveform) {
  schema::NandParams p;
  p.set_channels(1);
  p.set_dies_per_channel(4);
  p.set_blocks_per_plane(4);
  p.set_pages_per_block(8);
  nand::FlashArray flash("nand", nand::FlashConfig::from_params(schema::resolved(nand::data_only_bus(p), "nand")));
  const trace::ModelShape s = one_head();
  const KvPlacement placement(flash.config(), s, 6 * 32, 64);
  core::Server dram("dram", 16.0, sc_core::SC_ZERO_TIME), bus("bus", 8.0, sc_core::SC_ZERO_TIME);
  core::EnergyLedger ledger;
  AttentionEngine engine("isp", flash, placement, IspConfig::defaults(), std::make_unique<FixedTimeCompute>(),
                         CoordinatorConfig::defaults(), Organization::PER_CHANNEL, Reduction::GLOBAL_SRAM, dram, bus, &ledger);
  const std::string vcd_path = ::testing::TempDir() + "isp_role.vcd";
  vcd::Options options;
  options.path = vcd_path;
  options.filters = {"isp.*"};
  vcd::Writer writer(options);
  engine.trace(writer);

  AttentionWork w;
  w.query_rows = 64;
  w.shape = s;
  w.context_tokens = 6 * 32;
  w.appended_tokens_in_flash = 64;
  const AttentionPlan plan = engine.plan(w);
  EXPECT_EQ(plan.mode, 2u);  // 64 row-heads
  EXPECT_EQ(plan.simd_cycles, 8u * 9000);
  EXPECT_EQ(plan.sram_io_cycles, 8u * 2000);
  sc_time finished;
  engine.run(w, [&] { finished = sc_core::sc_time_stamp(); });
  sc_core::sc_start();
  writer.close();
  // 9 us per page > tOut: tR + tOut + 8 x 9 us + the last merge (64 + 8 cycles).
  EXPECT_EQ(finished, kTr + kTout + 8 * sc_time(9, SC_US) + sc_time(72, SC_NS));
  EXPECT_EQ(engine.simd_busy(2), 8 * sc_time(9, SC_US));
  EXPECT_EQ(engine.simd_busy(0), sc_core::SC_ZERO_TIME);
  EXPECT_EQ(engine.sram_io_cycles(), 8u * 2000);
  EXPECT_EQ(engine.isp_compute_time(), 8 * sc_time(9, SC_US));  // one channel: all its tiles
  EXPECT_EQ(engine.isp_sram_io_time(), 8 * sc_time(2, SC_US));
  EXPECT_EQ(stat("isp.isp_sram_io_time"), 16000.0);
  EXPECT_EQ(engine.macs(), 8u);
  EXPECT_EQ(stat("isp.simd_busy_gamma"), 72000.0);
  EXPECT_EQ(stat("isp.simd_busy_alpha"), 0.0);
  // Static: one accelerator's 0.25 W + the coordinator's 0.3 W.
  EXPECT_DOUBLE_EQ(ledger.static_power_w(), 0.55);
  // The waveform: values 0..3 need 2 bits; the mode's value is 1 + its index.
  const vcd::Encoding encoding = AttentionEngine::simd_mode_encoding(engine.compute());
  EXPECT_EQ(encoding.name_of(0), "idle");
  EXPECT_EQ(encoding.name_of(3), "gamma");
  const auto content = ispsim::testing::parse_vcd_file(vcd_path);
  EXPECT_EQ(content.widths.at("isp.ch0.simd_mode"), 2u);
  EXPECT_EQ(content.values.at(0).at("isp.ch0.simd_mode"), "11");
  ispsim::testing::expect_vcd_valid(vcd_path);
}

}  // namespace
}  // namespace ispsim::isp
