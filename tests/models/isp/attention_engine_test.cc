// One attention op on a tiny flash, against closed forms written out here:
// the die-pipelined stream with a slow consumer (scratchpad stalls), a
// channel-bound decode with FCFS partial merges, the centralized path through
// the internal bus and controller DRAM; conservation of bytes; row chunks;
// energy; bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <memory>
#include <string>
#include <systemc>
#include <tuple>

#include "common/error.h"
#include "models/core/energy_ledger.h"
#include "models/core/server.h"
#include "models/core/stats.h"
#include "models/isp/attention_engine.h"
#include "models/isp/elastic_simd.h"
#include "tests/models/isp/engine_rig.h"
#include "tests/support/vcd_check.h"

namespace ispsim::isp {
namespace {

using sc_core::sc_time;
using sc_core::SC_NS;
using sc_core::SC_US;

using testing::kTout;  // 6826667 ps
using testing::kTr;

nand::FlashConfig flash_config(unsigned channels, unsigned dies) { return testing::small_flash(channels, dies); }
trace::ModelShape shape(uint32_t heads, uint32_t kv_heads) { return testing::one_layer(heads, kv_heads); }

// The engine with the Elastic-SIMD on a small flash (engine_rig.h), run from time 0.
struct Rig : testing::EngineRig {
  Rig(unsigned channels, unsigned dies, const trace::ModelShape& s, uint64_t context, uint64_t appended,
      Organization organization, Reduction reduction, const CoordinatorConfig& coordinator = CoordinatorConfig::defaults())
      : EngineRig("isp", channels, dies, s, context, appended, std::make_unique<ElasticSimd>(IspConfig::defaults()),
                  organization, reduction, coordinator) {}
};

AttentionWork work(const trace::ModelShape& s, uint64_t rows, uint64_t context, uint64_t in_flash,
                   uint64_t supplied) {
  AttentionWork w;
  w.layer = 0;
  w.query_rows = rows;
  w.shape = s;
  w.context_tokens = context;
  w.appended_tokens_in_flash = in_flash;
  w.appended_tokens_supplied = supplied;
  w.causal = true;
  return w;
}

double stat(const std::string& name) {
  for (const stats::Entry* e : stats::Registry::global().sorted()) {
    if (e->name == name) return e->read();
  }
  ADD_FAILURE() << "no statistic " << name;
  return -1;
}

TEST(AttentionEngine, ConsumerSlowerThanTheChannelGivesTrPlusToutPlusNTimesTc) {
  // 1 channel x 4 dies; 6 precomputed + 2 appended pages of 32 tokens, 64 query
  // rows (the appended tokens), one head: n = 64 row-heads per page -> cascaded.
  const trace::ModelShape s = shape(1, 1);
  Rig rig(1, 4, s, 6 * 32, 64, Organization::PER_CHANNEL, Reduction::GLOBAL_SRAM);
  const AttentionWork w = work(s, 64, 6 * 32, 64, 0);
  const AttentionPlan plan = rig.engine.plan(w);
  ASSERT_EQ(plan.mode, ElasticSimd::kCascadedMode);
  EXPECT_EQ(plan.pages_per_pass, 8u);
  EXPECT_EQ(plan.passes, 1u);
  // tC = filter 32 + 2 * (32 * 128 + 63) + 18 = 8368 ns > tOut (6826.667 ns).
  const sc_time tc(32 + 2 * (32 * 128 + 63) + 18, SC_NS);
  // Last merge: 64 row-heads x ceil(128 / 128) = 64 cycles + 8 pipeline cycles.
  const sc_time merge(64 + 8, SC_NS);
  EXPECT_EQ(rig.run(w), kTr + kTout + 8 * tc + merge);
  EXPECT_EQ(rig.engine.pages_read(), 8u);
  EXPECT_EQ(rig.engine.bytes_read(), rig.engine.bytes_consumed());
  EXPECT_EQ(rig.engine.tokens_kept(), 8u * 32);
  EXPECT_EQ(rig.engine.reader().consumer(0).max_occupancy(), 2u);  // both scratchpad buffers used
  EXPECT_EQ(rig.engine.simd_busy(ElasticSimd::kCascadedMode), 8 * tc);
  EXPECT_EQ(rig.engine.reduction_engine().requests(), 8u);
  EXPECT_EQ(rig.engine.dram_bytes(), 0u);  // DRAM-less
  EXPECT_EQ(rig.dram.bytes(), 0u);
}

// Inter-layer prefetch of the op above (consumer-bound: tC > tOut). The stream
// starts at 0 with the accelerator held; the command comes at `command`.
// - Late (after the two scratchpad buffers filled at tR + 2 tOut): the first
//   two pages wait in the buffers and the next ones arrive within each page's
//   tC, so the op takes 8 tC + merge from its command: tR + tOut hidden.
// - Early (before the first page arrived at tR + tOut): the op ends when it
//   would have had it started at 0, so it takes tR + tOut + 8 tC + merge - command.
sc_time prefetched_op_time(const sc_time& command) {
  const trace::ModelShape s = shape(1, 1);
  Rig rig(1, 4, s, 6 * 32, 64, Organization::PER_CHANNEL, Reduction::GLOBAL_SRAM);
  const AttentionWork w = work(s, 64, 6 * 32, 64, 0);
  rig.engine.prefetch(w);
  EXPECT_TRUE(rig.engine.prefetched());
  sc_core::sc_start(command);
  EXPECT_EQ(rig.engine.reader().consumer(0).pages_consumed(), 0u);  // held: nothing computed before the command
  const sc_time took = rig.run(w);
  EXPECT_EQ(rig.engine.pages_read(), 8u);  // the prefetched pages are not read again
  EXPECT_EQ(rig.engine.bytes_read(), rig.engine.bytes_consumed());
  EXPECT_EQ(rig.engine.reader().consumer(0).max_occupancy(), 2u);
  return took;
}

TEST(AttentionEngine, PrefetchWithALateCommandHidesTheFirstPagesReadAndTransfer) {
  const sc_time tc(32 + 2 * (32 * 128 + 63) + 18, SC_NS), merge(64 + 8, SC_NS);
  EXPECT_EQ(prefetched_op_time(sc_time(100, SC_US)), 8 * tc + merge);
}

TEST(AttentionEngine, PrefetchWithAnEarlyCommandEndsWhenAnOpStartedAtZeroWould) {
  const sc_time tc(32 + 2 * (32 * 128 + 63) + 18, SC_NS), merge(64 + 8, SC_NS);
  const sc_time command(2, SC_US);  // tR + tOut = 11.83 us
  EXPECT_EQ(prefetched_op_time(command), kTr + kTout + 8 * tc + merge - command);
}

TEST(AttentionEngine, DecodeIsChannelBoundAndPartialsMergeFirstComeFirstServed) {
  // 2 channels x 4 dies, 8 precomputed pages (4 per channel, one per die), GQA g = 2,
  // one decode row; the new token's KV came with the command (channel 0 computes it first).
  const trace::ModelShape s = shape(2, 1);
  Rig rig(2, 4, s, 8 * 32, 1, Organization::PER_CHANNEL, Reduction::GLOBAL_SRAM);
  const AttentionWork w = work(s, 1, 8 * 32, 0, 1);
  const AttentionPlan plan = rig.engine.plan(w);
  ASSERT_EQ(plan.mode, ElasticSimd::kBroadsideMode);
  EXPECT_EQ(plan.supplied_tiles, 1u);
  EXPECT_EQ(plan.partials, 9u);
  // tC = filter 32 + 2 * (2 * 32) + 18 = 178 ns; both channels finish their last page
  // at tR + 4 tOut + tC; the two merges (2 cycles each, 8 latency) queue: + 2 + 2 + 8.
  EXPECT_EQ(rig.run(w), kTr + 4 * kTout + sc_time(178 + 12, SC_NS));
  EXPECT_EQ(rig.engine.tokens_kept(), 8u * 32 + 1);
  EXPECT_EQ(rig.engine.macs(), plan.macs);
  EXPECT_EQ(rig.engine.macs(), 2u * 2 * (8 * 32 + 1) * 128);
  EXPECT_EQ(rig.engine.simd_busy(ElasticSimd::kBroadsideMode), sc_time(8 * 178 + 23, SC_NS));
  EXPECT_EQ(rig.engine.reduction_engine().requests(), 9u);
}

TEST(AttentionEngine, CentralizedPagesCrossTheBusAndControllerDram) {
  // 1 channel, 4 pages; bus 8 B/ns, DRAM 16 B/ns. Per page: bus 2048 ns, DRAM write
  // 1024 ns, DRAM read of page + Q (512 B) + running state read and written
  // (2 x 2 x (128 x 2 + 8) B) = 17952 B = 1122 ns, central SIMD 178 ns.
  const trace::ModelShape s = shape(2, 1);
  Rig rig(1, 4, s, 4 * 32, 1, Organization::CENTRALIZED, Reduction::CONTROLLER_DRAM);
  const AttentionWork w = work(s, 1, 4 * 32, 0, 1);
  EXPECT_EQ(rig.run(w), kTr + 4 * kTout + sc_time(2048 + 1024 + 1122 + 178, SC_NS));
  EXPECT_EQ(rig.engine.bus_bytes(), 4u * 16384);
  // Supplied tile (in DRAM by DMA): 512 B of KV + 512 B of Q + 1056 B of state.
  EXPECT_EQ(rig.engine.dram_bytes(), 4u * (2 * 16384 + 512 + 1056) + 2080);
  EXPECT_EQ(rig.dram.bytes(), rig.engine.dram_bytes());
  EXPECT_EQ(rig.bus.bytes(), rig.engine.bus_bytes());
  EXPECT_EQ(rig.engine.plan(w).dram_bytes, rig.engine.dram_bytes());
  EXPECT_EQ(rig.engine.central_simd().requests(), 5u);
  EXPECT_EQ(rig.engine.bytes_read(), rig.engine.bytes_consumed());
}

TEST(AttentionEngine, CentralizedWithGlobalSramKeepsQAndStateOutOfDram) {
  // As above, but Q rows and the running state live in the coordinator's SRAM:
  // the DRAM read is the page alone (1024 ns).
  const trace::ModelShape s = shape(2, 1);
  Rig rig(1, 4, s, 4 * 32, 1, Organization::CENTRALIZED, Reduction::GLOBAL_SRAM);
  const AttentionWork w = work(s, 1, 4 * 32, 0, 1);
  EXPECT_EQ(rig.run(w), kTr + 4 * kTout + sc_time(2048 + 1024 + 1024 + 178, SC_NS));
  EXPECT_EQ(rig.engine.dram_bytes(), 4u * 2 * 16384 + 512);
  EXPECT_EQ(rig.dram.bytes(), rig.engine.dram_bytes());
  EXPECT_EQ(rig.engine.reduction_engine().requests(), 0u);
}

TEST(AttentionEngine, PerChannelWithControllerDramCountsQAndPartialTraffic) {
  const trace::ModelShape s = shape(2, 1);
  Rig rig(2, 4, s, 8 * 32, 1, Organization::PER_CHANNEL, Reduction::CONTROLLER_DRAM);
  const AttentionWork w = work(s, 1, 8 * 32, 0, 1);
  const AttentionPlan plan = rig.engine.plan(w);
  rig.run(w);
  // 9 partials: Q in (512 B) + the partial written and read back (2 x 264 B each way).
  EXPECT_EQ(rig.engine.dram_bytes(), 9u * (512 + 2 * 528));
  EXPECT_EQ(plan.dram_bytes, rig.engine.dram_bytes());
  EXPECT_EQ(rig.dram.bytes(), rig.engine.dram_bytes());
}

TEST(AttentionEngine, BytesReadFromNandEqualBytesConsumedOverRowChunks) {
  // A Q buffer of 4 rows (4 x 2 heads x 128 x 2 B = 2 KiB) splits 10 rows into 3 passes.
  const trace::ModelShape s = shape(2, 1);
  CoordinatorConfig small = CoordinatorConfig::defaults();
  small.global_sram_bytes = 1 << 20;
  small.q_buffer_bytes = 2048;
  Rig rig(2, 2, s, 5 * 32, 10, Organization::PER_CHANNEL, Reduction::GLOBAL_SRAM, small);
  const AttentionWork w = work(s, 10, 5 * 32, 10, 0);
  const AttentionPlan plan = rig.engine.plan(w);
  EXPECT_EQ(plan.rows_per_pass, 4u);
  EXPECT_EQ(plan.passes, 3u);
  EXPECT_EQ(plan.pages_per_pass, 6u);  // 5 precomputed + 1 appended
  rig.run(w);
  EXPECT_EQ(rig.engine.pages_read(), 18u);
  EXPECT_EQ(rig.engine.bytes_read(), 18u * 16384);
  EXPECT_EQ(rig.engine.bytes_consumed(), rig.engine.bytes_read());
  EXPECT_EQ(stat("isp.reader.bytes_delivered"), double(rig.engine.bytes_read()));
  EXPECT_EQ(stat("isp.reader.consumer0.bytes_consumed") + stat("isp.reader.consumer1.bytes_consumed"),
            double(rig.engine.bytes_read()));
  EXPECT_EQ(rig.engine.tokens_kept(), plan.tokens_kept);
  EXPECT_EQ(rig.engine.macs(), plan.macs);
  EXPECT_EQ(stat("isp.pages_read"), 18.0);
}

TEST(AttentionEngine, EnergyOfAnOpGoesToTheLedgerOnce) {
  const trace::ModelShape s = shape(2, 1);
  Rig rig(2, 4, s, 8 * 32, 1, Organization::PER_CHANNEL, Reduction::GLOBAL_SRAM);
  const AttentionWork w = work(s, 1, 8 * 32, 0, 1);
  const AttentionPlan plan = rig.engine.plan(w);
  const sc_time end = rig.run(w);
  const core::EnergyLedger::Summary sum = rig.ledger.summarize(end.value(), {});
  double dynamic = 0;
  for (const auto& [component, joules] : sum.dynamic_j_by_component) {
    EXPECT_GT(joules, 0.0) << component;
    dynamic += joules;
  }
  EXPECT_NEAR(dynamic, plan.energy_pj * 1e-12, plan.energy_pj * 1e-24 * 1e3);
  EXPECT_EQ(sum.dynamic_j_by_component.count("isp.ch0"), 1u);
  EXPECT_EQ(sum.dynamic_j_by_component.count("isp.reduction"), 1u);
  // Static: 2 channels x 0.1 W + coordinator 0.3 W.
  EXPECT_DOUBLE_EQ(rig.ledger.static_power_w(), 0.5);
}

TEST(AttentionEngine, AnOpMayBeIssuedFromTheDoneCallbackOfThePreviousOne) {
  const trace::ModelShape s = shape(2, 1);
  Rig rig(2, 4, s, 8 * 32, 2, Organization::PER_CHANNEL, Reduction::GLOBAL_SRAM);
  const AttentionWork first = work(s, 1, 8 * 32, 0, 1);
  const AttentionWork second = work(s, 1, 8 * 32, 1, 1);
  sc_time first_done, second_done;
  rig.engine.run(first, [&] {
    first_done = sc_core::sc_time_stamp();
    rig.engine.run(second, [&] { second_done = sc_core::sc_time_stamp(); });
  });
  sc_core::sc_start();
  EXPECT_EQ(first_done, kTr + 4 * kTout + sc_time(190, SC_NS));
  EXPECT_GT(second_done, first_done);
  EXPECT_EQ(rig.engine.ops(), 2u);
  EXPECT_EQ(rig.engine.pages_read(), 8u + 9u);  // the second op also reads the appended page
}

TEST(AttentionEngine, PageBuffersLargerThanTheScratchpadAreBadInput) {
  nand::FlashArray flash("nand", flash_config(1, 1));
  const KvPlacement placement(flash.config(), shape(1, 1), 32, 32);
  core::Server dram("dram", 16.0, sc_core::SC_ZERO_TIME), bus("bus", 8.0, sc_core::SC_ZERO_TIME);
  IspConfig isp = IspConfig::defaults();
  isp.scratchpad_bytes = 16384;  // one 16 KiB page, two buffers wanted
  EXPECT_THROW(AttentionEngine("isp", flash, placement, isp, std::make_unique<ElasticSimd>(isp), CoordinatorConfig::defaults(), Organization::PER_CHANNEL,
                               Reduction::GLOBAL_SRAM, dram, bus, nullptr),
               BadInput);
}

TEST(AttentionEngine, InconsistentOpsAreBadInput) {
  const trace::ModelShape s = shape(2, 1);
  Rig rig(2, 4, s, 8 * 32, 4, Organization::PER_CHANNEL, Reduction::GLOBAL_SRAM);
  AttentionWork w = work(s, 2, 8 * 32, 0, 1);  // 2 rows, 1 appended entry
  EXPECT_THROW(rig.engine.run(w, [] {}), BadInput);
  w = work(s, 1, 9 * 32, 0, 1);  // more context than placed
  EXPECT_THROW(rig.engine.plan(w), BadInput);
  w = work(s, 1, 8 * 32, 5, 1);  // more appended entries in flash than placed
  EXPECT_THROW(rig.engine.plan(w), BadInput);
  trace::BitVector mask;
  mask.set_bit_length(10);
  mask.set_bits(std::string(2, '\0'));
  w = work(s, 1, 8 * 32, 0, 1);
  w.hkvd_mask = &mask;  // 10 bits for 256 context tokens
  EXPECT_THROW(rig.engine.plan(w), BadInput);
  w = work(shape(4, 1), 1, 8 * 32, 0, 1);  // not the placement's shape
  EXPECT_THROW(rig.engine.plan(w), BadInput);
  w = work(s, 0, 8 * 32, 0, 1);
  EXPECT_THROW(rig.engine.plan(w), BadInput);
  w = work(s, 1, 8 * 32, 0, 1);
  w.layer = 1;
  EXPECT_THROW(rig.engine.plan(w), BadInput);
  EXPECT_FALSE(rig.engine.busy());
}

// check() is an op's one check: its result carries the shape and a copy of the
// HKVD mask, so run() and plan() take it without the caller's mask and without
// checking again, and it runs exactly as the unchecked work does.
// An unlisted pass's tiles against a planner that never listed the layer.
void expect_same_tiles(const PassTiles& got, const PassTiles& fresh) {
  ASSERT_EQ(got.runs.size(), fresh.runs.size());
  ASSERT_EQ(got.tiles.size(), fresh.tiles.size());
  for (size_t r = 0; r < got.runs.size(); ++r) {
    EXPECT_EQ(got.runs[r].first, fresh.runs[r].first);
    EXPECT_EQ(got.runs[r].count, fresh.runs[r].count);
  }
  for (size_t i = 0; i < got.tiles.size(); ++i) {
    const PlannedTile& a = got.tiles[i];
    const PlannedTile& b = fresh.tiles[i];
    EXPECT_EQ(a.address, b.address) << i;
    EXPECT_EQ(std::tie(a.in_flash, a.region, a.channel, a.first_entry, a.entries),
              std::tie(b.in_flash, b.region, b.channel, b.first_entry, b.entries)) << i;
    EXPECT_EQ(std::tie(a.filter.kept, a.filter.substituted, a.filter.dropped, a.filter.cycles),
              std::tie(b.filter.kept, b.filter.substituted, b.filter.dropped, b.filter.cycles)) << i;
    EXPECT_EQ(std::tie(a.cost.cycles, a.cost.macs, a.cost.energy_pj), std::tie(b.cost.cycles, b.cost.macs, b.cost.energy_pj)) << i;
  }
}

// Decode steps share their layer's filter: the second step's pass takes the
// first's precomputed tiles, and they equal a fresh listing's. Passes over the
// same mask whose rows do not see the whole context (one row inside the last
// tile, a prefill's rows) list their own.
TEST(AttentionPlanner, AKeptPrecomputedListingEqualsAFreshOne) {
  const trace::ModelShape s = shape(2, 1);
  auto rig = [&](const std::string& name) {
    return std::make_unique<testing::EngineRig>(name, 2, 4, s, 8 * 32, 64,
                                                std::make_unique<ElasticSimd>(IspConfig::defaults()));
  };
  const auto kept = rig("kept");
  const trace::BitVector mask = testing::mask_of(8 * 32, {3, 40, 41, 77, 250});
  AttentionWork step = work(s, 1, 8 * 32, 10, 1);
  step.hkvd_mask = &mask;
  AttentionWork next = step;
  ++next.appended_tokens_in_flash;
  AttentionWork prefill = work(s, 5, 8 * 32, 0, 5);
  prefill.hkvd_mask = &mask;
  // One row, as a decode step's, at position 250: the last tile's positions after it are dropped.
  AttentionWork last_recomputed = work(s, 1, 8 * 32, 4, 1);
  last_recomputed.hkvd_mask = &mask;
  const AttentionPlanner& planner = kept->engine.planner();
  planner.pass_tiles(planner.check(step), 0, false, false);  // lists the layer and keeps it
  int n = 0;
  for (const AttentionWork& w : {next, last_recomputed, prefill, next}) {
    const CheckedAttention op = planner.check(w);
    const PassTiles got = planner.pass_tiles(op, 0, false, false);
    const auto fresh_rig = rig("fresh" + std::to_string(n++));
    const AttentionPlanner& fresh = fresh_rig->engine.planner();
    expect_same_tiles(got, fresh.pass_tiles(fresh.check(w), 0, false, false));
  }
}

// The layout's pages in runs of `length`, the runs in reverse order: no page
// follows the one before it across a run's end. change() records a change of
// the map's pages [first, end), the runs' length after it.
class ReversedRuns : public PageMap {
 public:
  ReversedRuns(const nand::Layout& layout, uint64_t pages, uint64_t length)
      : layout_(layout), pages_(pages), length_(length) {}
  Run run(uint64_t index) const override {
    const uint64_t run = index / length_, offset = index % length_;
    return {layout_.address((pages_ / length_ - 1 - run) * length_ + offset, "reversed runs"), length_ - offset};
  }
  bool ideal() const override { return false; }
  uint64_t version() const override { return changes_.size(); }
  bool unchanged_since(uint64_t version, uint64_t first, uint64_t end) const override {
    for (uint64_t v = version; v < changes_.size(); ++v)
      if (changes_[v].first < end && first < changes_[v].second) return false;
    return true;
  }
  void change(uint64_t first, uint64_t end, uint64_t length) {
    changes_.push_back({first, end});
    length_ = length;
  }

 private:
  const nand::Layout& layout_;
  const uint64_t pages_;
  uint64_t length_;
  std::vector<std::pair<uint64_t, uint64_t>> changes_;
};

// A pass that keeps only its runs' first tiles has the runs of the pass that
// lists them all, on the layout's addresses and through a page map whose runs
// end every 3 pages: substituted, forwarded (whole tiles of them too), dropped
// and supplied entries.
TEST(AttentionPlanner, AnUnlistedPassHasTheRunsOfTheListedPass) {
  const trace::ModelShape s = shape(2, 2);
  const trace::BitVector mask = testing::mask_of(8 * 32, {3, 100, 101, 200});
  AttentionWork decode = work(s, 1, 8 * 32, 4 + 3 * 32 + 5, 1);  // 4 substitutes, then own entries
  decode.hkvd_mask = &mask;
  AttentionWork recompute = work(s, 3, 8 * 32, 4, 0);  // rows at 100, 101 and 200: the last tile dropped
  recompute.hkvd_mask = &mask;
  AttentionWork whole = decode;
  whole.hkvd_mask = nullptr;
  whole.appended_tokens_in_flash = 3 * 32 + 5;
  AttentionWork non_causal = recompute;
  non_causal.causal = false;
  std::vector<uint64_t> every_third;
  for (uint64_t p = 1; p < 8 * 32; p += 3) every_third.push_back(p);
  const trace::BitVector many = testing::mask_of(8 * 32, every_third);  // 85: tiles 0-1 forwarded, 2 partly
  AttentionWork forwarded = work(s, 1, 8 * 32, 85 + 40, 1);
  forwarded.hkvd_mask = &many;
  size_t ideal_runs = 0, mapped_runs = 0;
  for (bool mapped : {false, true}) {
    testing::EngineRig rig(mapped ? "mapped" : "ideal", 2, 2, s, 8 * 32, 4 * 32,
                           std::make_unique<ElasticSimd>(IspConfig::defaults()));
    const ReversedRuns map(rig.placement.layout(), rig.placement.total_pages(), 3);
    if (mapped) rig.placement.set_page_map(&map);
    const AttentionPlanner& planner = rig.engine.planner();
    for (const AttentionWork& w : {decode, recompute, whole, non_causal, forwarded}) {
      const CheckedAttention op = planner.check(w);
      const PassTiles listed = planner.pass_tiles(op, 0, false, true);
      const PassTiles firsts = planner.pass_tiles(op, 0, false, false);
      ASSERT_EQ(firsts.runs.size(), listed.runs.size());
      (mapped ? mapped_runs : ideal_runs) += listed.runs.size();
      for (size_t r = 0; r < listed.runs.size(); ++r) {
        EXPECT_EQ(firsts.runs[r].count, listed.runs[r].count) << "run " << r;
        const PlannedTile& a = firsts.tiles[firsts.runs[r].first];
        const PlannedTile& b = listed.tiles[listed.runs[r].first];
        EXPECT_EQ(a.address, b.address) << "run " << r;
        EXPECT_EQ(std::tie(a.in_flash, a.region, a.channel, a.kv_head, a.entries),
                  std::tie(b.in_flash, b.region, b.channel, b.kv_head, b.entries)) << "run " << r;
        EXPECT_EQ(std::tie(a.filter.kept, a.filter.substituted, a.filter.dropped, a.filter.forwarded),
                  std::tie(b.filter.kept, b.filter.substituted, b.filter.dropped, b.filter.forwarded)) << "run " << r;
        EXPECT_EQ(std::tie(a.cost.cycles, a.cost.macs, a.cost.energy_pj),
                  std::tie(b.cost.cycles, b.cost.macs, b.cost.energy_pj)) << "run " << r;
      }
    }
  }
  EXPECT_GT(mapped_runs, ideal_runs);  // the map's runs cut the alike tiles' runs
}

// Through a page map, a decode step's pass takes the precomputed tiles of the
// step before while the map has not moved their pages (an append elsewhere
// changed it), and lists them anew once it has: either way as a fresh listing.
TEST(AttentionPlanner, AKeptListingThroughAMapHoldsUntilItsPagesMove) {
  const trace::ModelShape s = shape(2, 1);
  const trace::BitVector mask = testing::mask_of(8 * 32, {3, 40, 41, 77, 250});
  AttentionWork step = work(s, 1, 8 * 32, 10, 1);
  step.hkvd_mask = &mask;
  AttentionWork next = step;
  ++next.appended_tokens_in_flash;
  testing::EngineRig kept("kept", 2, 4, s, 8 * 32, 64, std::make_unique<ElasticSimd>(IspConfig::defaults()));
  testing::EngineRig fresh("fresh", 2, 4, s, 8 * 32, 64, std::make_unique<ElasticSimd>(IspConfig::defaults()));
  const uint64_t pages = kept.placement.total_pages();
  ReversedRuns map(kept.placement.layout(), pages, 3), fresh_map(fresh.placement.layout(), pages, 3);
  kept.placement.set_page_map(&map);
  fresh.placement.set_page_map(&fresh_map);
  const AttentionPlanner& planner = kept.engine.planner();
  auto expect_fresh = [&](bool borrowed) {
    PassTiles got = planner.pass_tiles(planner.check(next), 0, false, false);
    EXPECT_EQ(got.borrowed_listing != 0, borrowed);
    expect_same_tiles(got, fresh.engine.planner().pass_tiles(fresh.engine.planner().check(next), 0, false, false));
    planner.recycle(got);
  };
  PassTiles first = planner.pass_tiles(planner.check(step), 0, false, false);  // lists the layer and keeps it
  planner.recycle(first);
  const uint64_t appended = kept.placement.tile_index(0, trace::KV_REGION_APPENDED, 0, 0);
  map.change(appended, pages, 3);
  expect_fresh(true);
  map.change(0, pages, 5);
  fresh_map.change(0, pages, 5);
  expect_fresh(false);
  expect_fresh(true);  // kept again, with the map's new runs
}

// Row chunks of one row each see more of the context pass by pass: each pass
// takes the tiles its chunk before saw whole, lists the rest, and equals a
// fresh listing, on the layout's addresses and through maps whose runs end at
// or inside the kept prefixes' ends (runs of 1, 2 and 3 pages). One substitute
// in each of tiles 0, 1, 2, 4 and 7: alike tiles meet at the seams.
TEST(AttentionPlanner, RowChunksExtendTheKeptListingAsAFreshOne) {
  const trace::ModelShape s = shape(2, 1);
  CoordinatorConfig one_row = CoordinatorConfig::defaults();
  one_row.q_buffer_bytes = s.heads() * s.head_dim() * s.activation_bits() / 8;
  const trace::BitVector mask = testing::mask_of(8 * 32, {3, 40, 77, 130, 250});
  AttentionWork recompute = work(s, 5, 8 * 32, 5, 0);  // rows at the five positions, ascending
  recompute.hkvd_mask = &mask;
  for (uint64_t run_length : {0, 1, 2, 3}) {
    auto rig = [&](const std::string& name) {
      return std::make_unique<testing::EngineRig>(name, 2, 4, s, 8 * 32, 64,
                                                  std::make_unique<ElasticSimd>(IspConfig::defaults()),
                                                  Organization::PER_CHANNEL, Reduction::GLOBAL_SRAM, one_row);
    };
    const auto kept = rig("kept" + std::to_string(run_length));
    const uint64_t pages = kept->placement.total_pages();
    const ReversedRuns map(kept->placement.layout(), pages, std::max<uint64_t>(run_length, 1));
    if (run_length > 0) kept->placement.set_page_map(&map);
    const AttentionPlanner& planner = kept->engine.planner();
    const CheckedAttention op = planner.check(recompute);
    ASSERT_EQ(op.shape().passes, 5u);
    int borrowed = 0;
    for (uint64_t pass = 0; pass < 5; ++pass) {
      PassTiles got = planner.pass_tiles(op, pass, false, false);
      borrowed += got.borrowed_listing != 0;
      const auto fresh = rig("fresh" + std::to_string(run_length) + "_" + std::to_string(pass));
      const ReversedRuns fresh_map(fresh->placement.layout(), pages, std::max<uint64_t>(run_length, 1));
      if (run_length > 0) fresh->placement.set_page_map(&fresh_map);
      const AttentionPlanner& other = fresh->engine.planner();
      SCOPED_TRACE("pass " + std::to_string(pass) + ", map runs of " + std::to_string(run_length));
      expect_same_tiles(got, other.pass_tiles(other.check(recompute), pass, false, false));
      planner.recycle(got);
    }
    EXPECT_EQ(borrowed, 3);  // pass 1 keeps [0, 32); passes 2-4 extend it
  }
}

TEST(AttentionEngine, ACheckedOpCarriesItsShapeAndItsOwnMask) {
  const trace::ModelShape s = shape(2, 1);
  testing::EngineRig checked_rig("checked", 2, 4, s, 8 * 32, 4, std::make_unique<ElasticSimd>(IspConfig::defaults()));
  testing::EngineRig work_rig("work", 2, 4, s, 8 * 32, 4, std::make_unique<ElasticSimd>(IspConfig::defaults()));
  auto mask = std::make_unique<trace::BitVector>();
  mask->set_bit_length(8 * 32);
  std::string bits(32, '\0');
  bits[0] = '\x21';  // two HKVD tokens, substituted by the two supplied entries
  mask->set_bits(bits);
  AttentionWork w = work(s, 1, 8 * 32, 0, 2);
  w.hkvd_mask = mask.get();
  const CheckedAttention op = checked_rig.engine.check(w);
  const AttentionPlan plan = checked_rig.engine.plan(op);
  EXPECT_EQ(op.shape().passes, plan.passes);
  EXPECT_EQ(op.shape().substitutes, 2u);
  const trace::BitVector kept_copy = *mask;
  mask.reset();  // the caller's mask is gone; the checked op has its own
  ASSERT_NE(op.work().hkvd_mask, nullptr);
  sc_time checked_time;
  AttentionTraffic traffic;
  checked_rig.engine.run(op, [&](const AttentionTraffic& t) {
    checked_time = sc_core::sc_time_stamp();
    traffic = t;
  });
  sc_core::sc_start();
  // The op's traffic, counted where the bytes moved, is all the engine moved.
  EXPECT_EQ(traffic.pages_read, checked_rig.engine.pages_read());
  EXPECT_EQ(traffic.dram_bytes, checked_rig.engine.dram_bytes());
  EXPECT_EQ(traffic.bus_bytes, checked_rig.engine.bus_bytes());
  EXPECT_EQ(traffic.pages_read, plan.pages_per_pass * plan.passes);
  EXPECT_EQ(traffic.dram_bytes, plan.dram_bytes);
  w.hkvd_mask = &kept_copy;
  EXPECT_EQ(checked_time, work_rig.run(w));
  EXPECT_EQ(checked_rig.engine.tokens_substituted(), plan.tokens_substituted);
  EXPECT_EQ(checked_rig.engine.tokens_kept(), work_rig.engine.tokens_kept());
  EXPECT_EQ(checked_rig.engine.macs(), plan.macs);
}

}  // namespace
}  // namespace ispsim::isp

namespace ispsim::isp {
namespace {

TEST(AttentionWaveform, SimdModeScratchpadOccupancyAndReductionAreValidVcd) {
  const trace::ModelShape s = shape(2, 1);
  Rig rig(2, 4, s, 8 * 32, 1, Organization::PER_CHANNEL, Reduction::GLOBAL_SRAM);
  const std::string path = ::testing::TempDir() + "isp_attention.vcd";
  vcd::Writer writer(vcd::Options{path, {"isp.*"}, 0, UINT64_MAX, {}});
  rig.engine.trace(writer);
  const sc_time end = rig.run(work(s, 1, 8 * 32, 0, 1));
  writer.close();
  ispsim::testing::expect_vcd_valid(path);
  const auto content = ispsim::testing::parse_vcd_file(path);
  EXPECT_EQ(content.widths.at("isp.ch0.simd_mode"), 2u);
  EXPECT_EQ(content.widths.at("isp.ch1.simd_mode"), 2u);
  EXPECT_EQ(content.widths.at("isp.reader.consumer0.occupancy"), 7u);
  EXPECT_TRUE(content.widths.count("isp.reduction.outstanding"));
  // Broadside (1) from the start; idle (0) when the channel's last page is done.
  EXPECT_EQ(content.values.at(0).at("isp.ch1.simd_mode"), "1");
  const sc_time last_page = kTr + 4 * kTout + sc_time(178, SC_NS);
  EXPECT_EQ(content.values.at(last_page.value()).at("isp.ch1.simd_mode"), "0");
  EXPECT_EQ(content.values.at(last_page.value()).at("isp.reduction.outstanding"), "10");  // two merges
  EXPECT_EQ(content.values.at(end.value()).at("isp.reduction.outstanding"), "0");
}

// The MemLLM ablation ladder for one layer of SmolLM2-360M (15 heads / 5 KV
// heads, d = 64) on MemLLM's default flash: 2000 context tokens, 15 % HKVD,
// 32 query tokens. Controller DRAM 12.8 GB/s (LPDDR4-3200 x32) and an 8 GB/s
// internal bus are this test's assumptions (the SSD model owns the real ones).
// Prints the figures; asserts what the architecture guarantees.
TEST(AttentionLadder, FusedPerChannelAndDramLessStepsOnOneLayer) {
  trace::ModelShape s;
  s.set_layers(32);
  s.set_heads(15);
  s.set_kv_heads(5);
  s.set_head_dim(64);
  s.set_kv_bits(16);
  s.set_activation_bits(16);
  const uint64_t C = 2000, Qn = 32;
  trace::BitVector mask;
  std::string bits((C + 7) / 8, '\0');
  uint64_t H = 0;
  for (uint64_t i = 0; i < C; ++i) {
    if (i % 20 < 3) {
      bits[i / 8] = char(uint8_t(bits[i / 8]) | (1u << (i % 8)));
      ++H;
    }
  }
  mask.set_bits(bits);
  mask.set_bit_length(C);
  ASSERT_EQ(H, 300u);

  struct Config {
    std::string name;
    Organization organization;
    Reduction reduction;
    bool fused;
  };
  const std::vector<Config> configs = {{"base", Organization::CENTRALIZED, Reduction::CONTROLLER_DRAM, false},
                                       {"fused", Organization::CENTRALIZED, Reduction::CONTROLLER_DRAM, true},
                                       {"perch", Organization::PER_CHANNEL, Reduction::CONTROLLER_DRAM, true},
                                       {"memllm", Organization::PER_CHANNEL, Reduction::GLOBAL_SRAM, true}};
  const nand::FlashConfig flash = nand::FlashConfig::from_params(schema::resolved(schema::NandParams{}, "nand"));
  const KvPlacement placement(flash, s, C, H + Qn + 16);
  struct System {
    std::unique_ptr<nand::FlashArray> flash;
    std::unique_ptr<core::Server> dram, bus;
    std::unique_ptr<AttentionEngine> engine;
    sc_time done;
  };
  std::vector<System> systems(configs.size());
  auto make_work = [&](uint64_t rows, uint64_t in_flash, uint64_t supplied) {
    AttentionWork w;
    w.layer = 1;
    w.query_rows = rows;
    w.shape = s;
    w.context_tokens = C;
    w.hkvd_mask = &mask;
    w.appended_tokens_in_flash = in_flash;
    w.appended_tokens_supplied = supplied;
    return w;
  };
  for (size_t i = 0; i < configs.size(); ++i) {
    System& sys = systems[i];
    const std::string n = configs[i].name;
    sys.flash = std::make_unique<nand::FlashArray>((n + "_nand").c_str(), flash);
    sys.dram = std::make_unique<core::Server>((n + "_dram").c_str(), 12.8, sc_core::SC_ZERO_TIME);
    sys.bus = std::make_unique<core::Server>((n + "_bus").c_str(), 8.0, sc_core::SC_ZERO_TIME);
    sys.engine = std::make_unique<AttentionEngine>((n + "_isp").c_str(), *sys.flash, placement, IspConfig::defaults(),
                                                   std::make_unique<ElasticSimd>(IspConfig::defaults()), CoordinatorConfig::defaults(), configs[i].organization,
                                                   configs[i].reduction, *sys.dram, *sys.bus, nullptr);
    if (configs[i].fused) {
      sys.engine->run(make_work(H + Qn, 0, H + Qn), [&sys] { sys.done = sc_core::sc_time_stamp(); });
    } else {
      // Unfused: recomputation (rows = H), then the query prefill re-reads the KV.
      sys.engine->run(make_work(H, 0, H), [&sys, &make_work, H, Qn] {
        sys.engine->run(make_work(Qn, H, Qn), [&sys] { sys.done = sc_core::sc_time_stamp(); });
      });
    }
  }
  sc_core::sc_start();
  for (size_t i = 0; i < configs.size(); ++i) {
    const AttentionEngine& e = *systems[i].engine;
    const double energy_uj =
        (configs[i].fused ? e.plan(make_work(H + Qn, 0, H + Qn)).energy_pj
                          : e.plan(make_work(H, 0, H)).energy_pj + e.plan(make_work(Qn, H, Qn)).energy_pj) *
        1e-6;
    std::cout << configs[i].name << ": " << systems[i].done.to_seconds() * 1e6 << " us, " << energy_uj
              << " uJ accelerator + reduction (dynamic), NAND "
              << e.bytes_read() << " B, DRAM " << e.dram_bytes() << " B, bus " << e.bus_bytes() << " B, MACs "
              << e.macs() << ", cascaded busy " << e.simd_busy(ElasticSimd::kCascadedMode).to_seconds() * 1e6
              << " us\n";
    ::testing::Test::RecordProperty(configs[i].name + "_us", std::to_string(systems[i].done.to_seconds() * 1e6));
  }
  // Fusing about halves the NAND reads: the unfused pair reads the context twice
  // (and the query prefill also reads the recomputed HKVD KV from the appended
  // region), except that the recomputation pass skips the pages past the last
  // HKVD row (position 1982), which none of its rows can see: 31 of 32 pages.
  EXPECT_EQ(systems[0].engine->bytes_read(),
            systems[1].engine->bytes_read() + pages_for_tokens(1983, 64, 5) * flash.page_bytes +
                pages_for_tokens(H, 64, 5) * flash.page_bytes);
  EXPECT_EQ(pages_for_tokens(1983, 64, 5) + 5, pages_for_tokens(C, 64, 5));
  EXPECT_LT(systems[1].done, systems[0].done);
  // Eight per-channel SIMDs beat one central SIMD behind the bus and DRAM.
  EXPECT_LT(systems[2].done, systems[1].done);
  // DRAM-less: no controller DRAM traffic at all, which is what bounds PerCh here
  // (its Q rows and partials cross DRAM for every page).
  EXPECT_LT(systems[3].done, systems[2].done);
  EXPECT_EQ(systems[3].engine->dram_bytes(), 0u);
  EXPECT_GT(systems[2].engine->dram_bytes(), 0u);
}

// A pass's tiles come in runs alike in all but their place: here 4 token tiles
// of 2 KV heads, the second holding the one substitute, then the supplied own
// token's tile.
TEST(AttentionEngine, PassTilesComeInRunsOfAlikeTilesOnConsecutiveChannels) {
  const trace::ModelShape s = shape(2, 2);
  Rig rig(2, 2, s, 4 * 32, 4, Organization::PER_CHANNEL, Reduction::GLOBAL_SRAM);
  const trace::BitVector mask = testing::mask_of(4 * 32, {40});
  AttentionWork w = work(s, 1, 4 * 32, 0, 2);
  w.hkvd_mask = &mask;
  const PassTiles pass = rig.engine.pass_tiles(w, 0);
  ASSERT_EQ(pass.tiles.size(), 10u);
  ASSERT_EQ(pass.runs.size(), 4u);
  const std::vector<std::pair<size_t, uint64_t>> want = {{0, 2}, {2, 2}, {4, 4}, {8, 2}};
  for (size_t r = 0; r < want.size(); ++r) {
    EXPECT_EQ(pass.runs[r].first, want[r].first) << "run " << r;
    EXPECT_EQ(pass.runs[r].count, want[r].second) << "run " << r;
    const PlannedTile& first = pass.tiles[pass.runs[r].first];
    for (uint64_t k = 0; k < pass.runs[r].count; ++k) {
      const PlannedTile& tile = pass.tiles[pass.runs[r].first + k];
      EXPECT_EQ(tile.in_flash, first.in_flash);
      EXPECT_EQ(tile.filter.kept, first.filter.kept);
      EXPECT_EQ(tile.filter.substituted, first.filter.substituted);
      EXPECT_EQ(tile.cost.cycles, first.cost.cycles);
      EXPECT_EQ(tile.cost.energy_pj, first.cost.energy_pj);
      EXPECT_EQ(tile.channel, (first.channel + k) % 2) << "run " << r << " tile " << k;
    }
  }
  EXPECT_EQ(pass.tiles[2].filter.substituted, 1u);
  EXPECT_EQ(pass.tiles[0].filter.substituted, 0u);
  EXPECT_FALSE(pass.tiles[8].in_flash);
}

// An op of the request in slot 1 of a two-slot appended region reads that
// slot's pages: on the channel, die and plane of slot 0's, on other pages.
TEST(AttentionEngine, AnOpReadsTheAppendedPagesOfItsSlot) {
  const trace::ModelShape s = shape(2, 2);
  testing::EngineRig rig("isp", 2, 2, s, 4 * 32, 3 * 32, std::make_unique<ElasticSimd>(IspConfig::defaults()),
                         Organization::PER_CHANNEL, Reduction::GLOBAL_SRAM, CoordinatorConfig::defaults(), 2);
  AttentionWork first = work(s, 1, 4 * 32, 2 * 32, 1), second = first;
  second.appended_base = rig.placement.slot_entries();
  ASSERT_EQ(second.appended_base, 3u * 32);
  const PassTiles a = rig.engine.pass_tiles(first, 0), b = rig.engine.pass_tiles(second, 0);
  ASSERT_EQ(a.tiles.size(), b.tiles.size());
  uint64_t appended = 0;
  for (size_t i = 0; i < a.tiles.size(); ++i) {
    const PlannedTile &x = a.tiles[i], &y = b.tiles[i];
    if (!x.in_flash || x.region != trace::KV_REGION_APPENDED) {
      EXPECT_EQ(x.address, y.address) << "tile " << i;
      continue;
    }
    ++appended;
    EXPECT_EQ(x.first_entry, y.first_entry);
    EXPECT_EQ(y.address, rig.placement.address(0, trace::KV_REGION_APPENDED, 3 + x.first_entry / 32, x.kv_head));
    EXPECT_EQ(std::tie(x.address.channel, x.address.die, x.address.plane),
              std::tie(y.address.channel, y.address.die, y.address.plane));
    EXPECT_NE(x.address, y.address);
  }
  EXPECT_EQ(appended, 2u * 2);  // 2 token tiles x 2 KV heads in flash
}

// The firmware knows a pass's visible range: with HKVD rows at positions 10 and
// 40 of a 128-token context (4 token tiles of 32, 2 KV heads), the pass reads
// and filters the tiles of positions 0-63 only, whatever the accelerator; a
// non-causal pass reads all of them.
TEST(AttentionEngine, APassReadsNoPageThatNoneOfItsRowsCanSee) {
  const trace::ModelShape s = shape(2, 2);
  Rig rig(2, 2, s, 4 * 32, 4, Organization::PER_CHANNEL, Reduction::GLOBAL_SRAM);
  const trace::BitVector mask = testing::mask_of(4 * 32, {10, 40});
  AttentionWork w = work(s, 2, 4 * 32, 0, 2);
  w.hkvd_mask = &mask;
  const auto in_flash_tiles = [&](const AttentionWork& op) {
    const PassTiles pass = rig.engine.pass_tiles(op, 0);
    uint64_t n = 0;
    for (const PlannedTile& tile : pass.tiles) {
      if (!tile.in_flash) continue;
      ++n;
      if (op.causal) {
        EXPECT_LT(tile.first_entry, 64u);
      }
    }
    return n;
  };
  EXPECT_EQ(in_flash_tiles(w), 2u * 2);
  EXPECT_EQ(rig.engine.plan(w).pages_read, 2u * 2);
  w.causal = false;
  EXPECT_EQ(in_flash_tiles(w), 4u * 2);
  EXPECT_EQ(rig.engine.plan(w).pages_read, 4u * 2);
}

}  // namespace
}  // namespace ispsim::isp
