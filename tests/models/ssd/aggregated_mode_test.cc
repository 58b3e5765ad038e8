// The aggregated streaming mode (ssd.stream_model = AGGREGATED) against the
// page-accurate one, on two drives side by side in one simulation: the same
// calls must finish at exactly the same times, move the same bytes and charge
// the same energy on the closed-form cases (uncontended host reads; attention
// passes of every organisation, decode and fused-prefill shaped; a pass that
// starts during a program batch falls back to page events), and every call
// completes once on a random mix.
// Every TEST runs in its own process (SystemC elaborates once per process).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <systemc>
#include <vector>

#include "models/core/energy_ledger.h"
#include "models/link/nvme.h"
#include "models/link/pcie_link.h"
#include "models/ssd/ssd.h"

namespace ispsim::ssd {
namespace {

using sc_core::sc_time;

// OPT-1.3B's attention shape (24 layers, 32 heads of 64, MHA, FP16): a 16 KB page
// holds 64 tokens of one head.
trace::ModelShape opt13b() {
  trace::ModelShape s;
  s.set_family(trace::ARCHITECTURE_OPT);
  s.set_layers(24);
  s.set_hidden(2048);
  s.set_heads(32);
  s.set_kv_heads(32);
  s.set_head_dim(64);
  s.set_ffn_dim(8192);
  s.set_vocab(50272);
  s.set_weight_bits(16);
  s.set_kv_bits(16);
  s.set_activation_bits(16);
  return s;
}
constexpr uint64_t kContext = 2048;
constexpr uint64_t kAppended = 512;

schema::SsdParams params(schema::SsdParams::StreamModel model,
                         schema::SsdParams::Organization organization = schema::SsdParams::PER_CHANNEL,
                         schema::SsdParams::Reduction reduction = schema::SsdParams::GLOBAL_SRAM) {
  schema::SsdParams p;
  p.set_stream_model(model);
  p.set_organization(organization);
  p.set_reduction(reduction);
  return schema::resolved(p, "ssd");
}

struct Drive {
  core::EnergyLedger ledger;
  link::PcieLink pcie;
  link::Nvme nvme;
  Ssd ssd;
  std::vector<std::pair<int, uint64_t>> finished;  // (call, time ps)
  // `ssd_params` and `nand` come resolved (params(), small_drive()).
  Drive(const std::string& prefix, const schema::SsdParams& ssd_params,
        const schema::NandParams& nand = schema::resolved(schema::NandParams(), "nand"),
        const KvSpace& kv = KvSpace{opt13b(), kContext, kAppended})
      : pcie((prefix + "_pcie").c_str(), link::LinkConfig::from_params(schema::resolved(schema::LinkParams(), "link")),
             &ledger),
        nvme((prefix + "_nvme").c_str(), pcie),
        ssd(prefix.c_str(), nand, ssd_params,
            schema::resolved(schema::IspParams(), "isp"),
            schema::resolved(schema::FlashCoordinatorParams(), "flash_coordinator"),
            kv, nvme, &ledger) {}
  Ssd::Done done(int call) {
    return [this, call] { finished.emplace_back(call, sc_core::sc_time_stamp().value()); };
  }
};

// Both drives: the same completions in the same order at the same times, counters and energies.
void expect_same(Drive& accurate, Drive& aggregated) {
  EXPECT_EQ(accurate.finished, aggregated.finished);
  EXPECT_EQ(accurate.ssd.nand_pages_read(), aggregated.ssd.nand_pages_read());
  EXPECT_EQ(accurate.ssd.kv_read_bytes(), aggregated.ssd.kv_read_bytes());
  EXPECT_EQ(accurate.ssd.dram_bytes(), aggregated.ssd.dram_bytes());
  EXPECT_EQ(accurate.ssd.bus_bytes(), aggregated.ssd.bus_bytes());
  EXPECT_EQ(accurate.ssd.dram().busy_time(), aggregated.ssd.dram().busy_time());
  EXPECT_EQ(accurate.ssd.bus().requests(), aggregated.ssd.bus().requests());
  EXPECT_EQ(accurate.pcie.total_bytes(), aggregated.pcie.total_bytes());
  EXPECT_EQ(accurate.pcie.busy_time(link::Direction::DEVICE_TO_HOST),
            aggregated.pcie.busy_time(link::Direction::DEVICE_TO_HOST));
  const isp::AttentionEngine& a = accurate.ssd.engine();
  const isp::AttentionEngine& b = aggregated.ssd.engine();
  EXPECT_EQ(a.pages_read(), b.pages_read());
  EXPECT_EQ(a.pages_computed(), b.pages_computed());
  EXPECT_EQ(a.tokens_kept(), b.tokens_kept());
  EXPECT_EQ(a.macs(), b.macs());
  EXPECT_EQ(a.dram_bytes(), b.dram_bytes());
  EXPECT_EQ(a.bus_bytes(), b.bus_bytes());
  EXPECT_EQ(a.isp_compute_time(), b.isp_compute_time());
  EXPECT_EQ(a.op_time(), b.op_time());
  for (auto server : {&isp::AttentionEngine::central_simd, &isp::AttentionEngine::reduction_engine}) {
    const core::Server& x = (accurate.ssd.engine().*server)();
    const core::Server& y = (aggregated.ssd.engine().*server)();
    EXPECT_EQ(x.requests(), y.requests());
    EXPECT_EQ(x.busy_time(), y.busy_time());
  }
  for (unsigned c = 0; c < 8; ++c)
    for (unsigned d = 0; d < 4; ++d)
      EXPECT_EQ(accurate.ssd.flash().die(c, d).pages_read(), aggregated.ssd.flash().die(c, d).pages_read());
  const uint64_t end = sc_core::sc_time_stamp().value();
  const core::EnergyLedger::Summary sa = accurate.ledger.summarize(end, {});
  const core::EnergyLedger::Summary sb = aggregated.ledger.summarize(end, {});
  ASSERT_EQ(sa.dynamic_j_by_component.size(), sb.dynamic_j_by_component.size());
  for (const auto& [component, joules] : sa.dynamic_j_by_component) {
    const std::string other = "b" + component.substr(1);  // the other drive's component
    ASSERT_EQ(sb.dynamic_j_by_component.count(other), 1u) << other;
    EXPECT_NEAR(joules, sb.dynamic_j_by_component.at(other), std::abs(joules) * 1e-12 + 1e-18) << component;
  }
}

// Reads of whole layers, queued at once (the FIFO keeps the flash busy; PCIe
// is the bottleneck and its queue carries over from read to read).
TEST(AggregatedMode, HostReadsFinishAtThePageAccurateTimes) {
  Drive accurate("a", params(schema::SsdParams::PAGE_ACCURATE));
  Drive aggregated("b", params(schema::SsdParams::AGGREGATED));
  int call = 0;
  for (uint32_t layer : {0u, 5u, 23u}) {
    accurate.ssd.host_read(layer, trace::KV_REGION_PRECOMPUTED, 0, kContext, accurate.done(call));
    aggregated.ssd.host_read(layer, trace::KV_REGION_PRECOMPUTED, 0, kContext, aggregated.done(call));
    ++call;
  }
  sc_core::sc_start();
  ASSERT_EQ(accurate.finished.size(), 3u);
  expect_same(accurate, aggregated);
  EXPECT_EQ(aggregated.ssd.aggregated_reads(), 3u);
  // A layer's range spans whole rounds of the channels: channel 0 is scheduled for all.
  EXPECT_EQ(aggregated.ssd.reads_scheduled_on_one_channel(), 3u);
}

// Reads of layers 0-5 (the same pattern of pages), one every 2.2 ms: the
// flash and the bus are done with a read by then, PCIe (the bottleneck) not,
// so each read's transfers queue behind the last's from a later start of the
// link each time; from the second on, they take its times shifted: looked up.
TEST(AggregatedMode, HostReadsBehindABackloggedLinkAreLookedUpShifted) {
  Drive accurate("a", params(schema::SsdParams::PAGE_ACCURATE));
  Drive aggregated("b", params(schema::SsdParams::AGGREGATED));
  for (uint32_t layer = 0; layer < 6; ++layer) {
    for (Drive* d : {&accurate, &aggregated})
      d->ssd.host_read(layer, trace::KV_REGION_PRECOMPUTED, 0, kContext, d->done(int(layer)));
    sc_core::sc_start(sc_time(2200, sc_core::SC_US));
  }
  sc_core::sc_start();
  ASSERT_EQ(accurate.finished.size(), 6u);
  expect_same(accurate, aggregated);
  EXPECT_EQ(aggregated.ssd.aggregated_reads(), 6u);
  EXPECT_EQ(aggregated.ssd.reused_reads(), 4u);
}

// Reads one after another, each from an idle drive: layers 0-5 read the same
// pattern of pages (a layer's range begins at the same place of the
// channel/die/plane cycle), so the aggregated drive schedules layer 0's and
// looks the other five up; layer 6 reads one token less, and is scheduled;
// layer 7 two less: its pages but the last token tile's are layer 6's, and
// it goes on from where layer 6's read stood before that tile.
TEST(AggregatedMode, HostReadsAlikeAreLookedUpAndFinishAtThePageAccurateTimes) {
  Drive accurate("a", params(schema::SsdParams::PAGE_ACCURATE));
  Drive aggregated("b", params(schema::SsdParams::AGGREGATED));
  for (uint32_t layer = 0; layer < 8; ++layer) {
    const uint64_t end = layer < 6 ? kContext : kContext - (layer - 5);
    for (Drive* d : {&accurate, &aggregated})
      d->ssd.host_read(layer, trace::KV_REGION_PRECOMPUTED, 0, end, d->done(int(layer)));
    sc_core::sc_start();
  }
  ASSERT_EQ(accurate.finished.size(), 8u);
  expect_same(accurate, aggregated);
  EXPECT_EQ(aggregated.ssd.aggregated_reads(), 8u);
  EXPECT_EQ(aggregated.ssd.reused_reads(), 5u);
  EXPECT_EQ(aggregated.ssd.reads_resumed(), 1u);
  EXPECT_EQ(aggregated.ssd.reads_scheduled_on_one_channel(), 3u);
}

// A read that starts while a document's few pages are programmed: the dies
// that program suspend for it, the other channels' are free, so its channels
// do not start alike and each is scheduled; it still finishes at the
// page-accurate time.
TEST(AggregatedMode, AReadWhoseChannelsStartUnalikeIsScheduledChannelByChannel) {
  KvSpace kv{opt13b(), kContext, kAppended};
  kv.store_pages = 64;
  const schema::NandParams nand = schema::resolved(schema::NandParams(), "nand");
  Drive accurate("a", params(schema::SsdParams::PAGE_ACCURATE), nand, kv);
  Drive aggregated("b", params(schema::SsdParams::AGGREGATED), nand, kv);
  const uint64_t page_bytes = 16384;
  for (Drive* d : {&accurate, &aggregated})
    d->ssd.store_write(d->ssd.placement().total_pages(), 3, 3 * page_bytes, d->done(0));
  sc_core::sc_start(sc_time(100, sc_core::SC_US));  // the pages' data-ins are done, their programs under way
  for (Drive* d : {&accurate, &aggregated}) d->ssd.host_read(0, trace::KV_REGION_PRECOMPUTED, 0, 256, d->done(1));
  sc_core::sc_start();
  ASSERT_EQ(accurate.finished.size(), 2u);
  EXPECT_EQ(aggregated.ssd.aggregated_reads(), 1u);
  EXPECT_EQ(aggregated.ssd.reads_scheduled_on_one_channel(), 0u);
  expect_same(accurate, aggregated);
}

// A KV write-back arriving during an aggregated read crosses the bus between
// the read's pages, as page events let it, not after the read's last page (a
// GPU baseline's decode writes each layer's new entry while the next layer's
// KV is read, then reads the entry back). The read's later pages are not
// pushed back by the write in aggregated mode: the difference is at most the
// write's bus occupancy.
TEST(AggregatedMode, AWriteDuringAnAggregatedReadTakesTheBusBetweenItsPages) {
  Drive accurate("a", params(schema::SsdParams::PAGE_ACCURATE));
  Drive aggregated("b", params(schema::SsdParams::AGGREGATED));
  const uint64_t entry = 32 * 64 * 2 * 2;  // one token's K and V (a partial tile: no program)
  for (Drive* d : {&accurate, &aggregated}) d->ssd.host_read(3, trace::KV_REGION_PRECOMPUTED, 0, kContext, d->done(0));
  sc_core::sc_start(sc_time(300, sc_core::SC_US));  // the read's pages are crossing the bus
  for (Drive* d : {&accurate, &aggregated}) d->ssd.host_write(3, 0, 1, entry, d->done(1));
  sc_core::sc_start();
  ASSERT_EQ(accurate.finished.size(), 2u);
  ASSERT_EQ(aggregated.finished.size(), 2u);
  EXPECT_EQ(aggregated.ssd.aggregated_reads(), 1u);
  // 1024 pages of 16 KB take about 2 ms on the 8 GB/s bus; the write, 1 us.
  const uint64_t slack = aggregated.ssd.bus().occupancy(entry).value();
  ASSERT_EQ(accurate.finished[0].first, 1);  // the write ends first
  ASSERT_EQ(aggregated.finished[0].first, 1);
  EXPECT_LT(accurate.finished[0].second, accurate.finished[1].second - 1'000'000'000);
  EXPECT_NEAR(double(aggregated.finished[0].second), double(accurate.finished[0].second), double(slack));
  EXPECT_NEAR(double(aggregated.finished[1].second), double(accurate.finished[1].second), double(slack));
  EXPECT_EQ(accurate.ssd.bus_bytes(), aggregated.ssd.bus_bytes());
  EXPECT_EQ(accurate.ssd.bus().busy_time(), aggregated.ssd.bus().busy_time());
}

// An HKVD mask over the context with positions first, first + step, ... set.
trace::BitVector every_nth(uint64_t first, uint64_t step) {
  trace::BitVector mask;
  mask.set_bit_length(kContext);
  std::string bits(kContext / 8, '\0');
  for (uint64_t i = first; i < kContext; i += step) bits[i / 8] |= char(1u << (i % 8));
  mask.set_bits(bits);
  return mask;
}

// A decode step's op on layer 0: one row, the supplied entry; `in_flash`
// appended entries (the mask's substitutes first).
isp::AttentionWork one_row_decode(const trace::BitVector* mask, uint64_t in_flash) {
  isp::AttentionWork decode;
  decode.shape = opt13b();
  decode.context_tokens = kContext;
  decode.hkvd_mask = mask;
  decode.appended_tokens_in_flash = in_flash;
  decode.appended_tokens_supplied = 1;
  decode.query_rows = 1;
  return decode;
}

// A fused-prefill-shaped op (many rows, cascaded SIMD, several row chunks) on
// layer 3 and a decode-shaped op (1 row, 1 supplied) on layer 4, over `mask`,
// every 7th context position set (it must outlive the ops).
struct FusedAndDecode {
  isp::AttentionWork fused, decode;
};
FusedAndDecode fused_and_decode(const trace::BitVector& mask) {
  const uint64_t substitutes = (kContext + 6) / 7;
  FusedAndDecode ops;
  isp::AttentionWork& fused = ops.fused;
  fused.layer = 3;
  fused.shape = opt13b();
  fused.context_tokens = kContext;
  fused.hkvd_mask = &mask;
  fused.appended_tokens_supplied = substitutes + 20;
  fused.query_rows = substitutes + 20;
  ops.decode = fused;
  ops.decode.layer = 4;
  ops.decode.appended_tokens_supplied = substitutes + 21;
  ops.decode.query_rows = 1;
  return ops;
}

// One decode-shaped op and one fused-prefill-shaped op on each organisation.
void attention_ops(schema::SsdParams::Organization organization, schema::SsdParams::Reduction reduction) {
  Drive accurate("a", params(schema::SsdParams::PAGE_ACCURATE, organization, reduction));
  Drive aggregated("b", params(schema::SsdParams::AGGREGATED, organization, reduction));
  const trace::BitVector mask = every_nth(0, 7);
  const auto [fused, decode] = fused_and_decode(mask);
  for (Drive* d : {&accurate, &aggregated}) {
    d->ssd.attention(fused, d->done(0));
    d->ssd.attention(decode, d->done(1));
  }
  sc_core::sc_start();
  ASSERT_EQ(accurate.finished.size(), 2u);
  EXPECT_GT(aggregated.ssd.engine().aggregated_passes(), 1u);
  EXPECT_EQ(accurate.ssd.engine().aggregated_passes(), 0u);
  expect_same(accurate, aggregated);
}

TEST(AggregatedMode, PerChannelGlobalSramAttentionMatchesPageAccurate) {
  attention_ops(schema::SsdParams::PER_CHANNEL, schema::SsdParams::GLOBAL_SRAM);
}
TEST(AggregatedMode, PerChannelControllerDramAttentionMatchesPageAccurate) {
  attention_ops(schema::SsdParams::PER_CHANNEL, schema::SsdParams::CONTROLLER_DRAM);
}
TEST(AggregatedMode, CentralizedAttentionMatchesPageAccurate) {
  attention_ops(schema::SsdParams::CENTRALIZED, schema::SsdParams::CONTROLLER_DRAM);
}

// A decode step: the same op on layers 0-5 (their regions begin at the same
// place of the channel/die/plane cycle: 32 tiles x 32 heads and 8 x 32 are
// multiples of 8 channels x 4 dies x 2 planes), then one more appended entry
// on layer 6. Each op starts from the same state as the one before, so the
// aggregated drive schedules layer 0's pass and layer 6's and looks the other
// five up; every time and count still equals the page-accurate drive's.
// Layer 6 differs from layer 0 in its last NAND run alone: CENTRALIZED, its
// drain goes on from where layer 0's stood before that run's first read-back.
// `dram_gbps` > 0: a controller DRAM that slow, whose queue orders the steps.
// `fills_tile`: layer 6's entry fills its last token tile, which joins the
// run of whole tiles before it; its drain goes on from layer 0's all the same
// (the last tile's pages are the resumed ones, not the run's).
void decode_step(schema::SsdParams::Organization organization, schema::SsdParams::Reduction reduction,
                 double dram_gbps = 0, bool fills_tile = false) {
  schema::SsdParams accurate_params = params(schema::SsdParams::PAGE_ACCURATE, organization, reduction);
  schema::SsdParams aggregated_params = params(schema::SsdParams::AGGREGATED, organization, reduction);
  if (dram_gbps > 0) {
    accurate_params.set_dram_bandwidth_gbps(dram_gbps);
    aggregated_params.set_dram_bandwidth_gbps(dram_gbps);
  }
  Drive accurate("a", accurate_params);
  Drive aggregated("b", aggregated_params);
  const trace::BitVector mask = every_nth(3, 11);
  const uint64_t substitutes = (kContext - 3 + 10) / 11;
  isp::AttentionWork decode = one_row_decode(&mask, substitutes + 40);
  const uint64_t T = aggregated.ssd.placement().tokens_per_tile();
  if (fills_tile) decode.appended_tokens_in_flash = (substitutes / T + 3) * T - 1;  // two whole own tiles, then T - 1
  for (Drive* d : {&accurate, &aggregated}) {
    for (uint32_t layer = 0; layer < 7; ++layer) {
      isp::AttentionWork op = decode;
      op.layer = layer;
      if (layer == 6) ++op.appended_tokens_in_flash;
      d->ssd.attention(op, d->done(int(layer)));
    }
  }
  sc_core::sc_start();
  ASSERT_EQ(accurate.finished.size(), 7u);
  EXPECT_EQ(aggregated.ssd.engine().aggregated_passes(), 7u);
  EXPECT_EQ(aggregated.ssd.engine().passes_resumed(), organization == schema::SsdParams::CENTRALIZED ? 1u : 0u);
  if (dram_gbps > 0 || fills_tile) return expect_same(accurate, aggregated);
  EXPECT_EQ(aggregated.ssd.engine().reused_passes(), 5u);
  EXPECT_EQ(accurate.ssd.engine().reused_passes(), 0u);
  // 32 KV heads on 8 channels: every channel streams alike, and one is scheduled for all.
  EXPECT_EQ(aggregated.ssd.engine().passes_scheduled_on_one_channel(), 2u);
  expect_same(accurate, aggregated);
}

TEST(AggregatedMode, PerChannelGlobalSramDecodeStepReusesPassesAndMatchesPageAccurate) {
  decode_step(schema::SsdParams::PER_CHANNEL, schema::SsdParams::GLOBAL_SRAM);
}
TEST(AggregatedMode, PerChannelControllerDramDecodeStepReusesPassesAndMatchesPageAccurate) {
  decode_step(schema::SsdParams::PER_CHANNEL, schema::SsdParams::CONTROLLER_DRAM);
}
TEST(AggregatedMode, CentralizedDecodeStepReusesPassesAndMatchesPageAccurate) {
  decode_step(schema::SsdParams::CENTRALIZED, schema::SsdParams::CONTROLLER_DRAM);
}
// 0.05 GB/s: DRAM is the passes' bottleneck (a 16 KB page takes 328 us of it,
// a channel reads one in 7 us); Q rows, partials, pages and read-backs queue there.
TEST(AggregatedMode, PerChannelControllerDramDecodeStepOnASlowDramMatchesPageAccurate) {
  decode_step(schema::SsdParams::PER_CHANNEL, schema::SsdParams::CONTROLLER_DRAM, 0.05);
}
TEST(AggregatedMode, CentralizedDecodeStepOnASlowDramMatchesPageAccurate) {
  decode_step(schema::SsdParams::CENTRALIZED, schema::SsdParams::CONTROLLER_DRAM, 0.05);
}
// Decode steps of one layer, one entry fuller each: every step after the
// first borrows the layer's precomputed listing, whose runs' counts, key runs
// and charges (BorrowedPrefixes) the passes take as the first step made them.
// The mask substitutes every 11th position and all of [300, 420): runs of
// unlike tiles (alike in their charges, which stay pending across the runs).
void decode_steps_of_one_layer(schema::SsdParams::Organization organization,
                               schema::SsdParams::Reduction reduction) {
  Drive accurate("a", params(schema::SsdParams::PAGE_ACCURATE, organization, reduction));
  Drive aggregated("b", params(schema::SsdParams::AGGREGATED, organization, reduction));
  trace::BitVector mask = every_nth(3, 11);
  std::string bits = mask.bits();
  for (uint64_t p = 300; p < 420; ++p) bits[p / 8] |= char(1u << (p % 8));
  mask.set_bits(bits);
  uint64_t substitutes = 0;
  for (char byte : bits) substitutes += uint64_t(__builtin_popcount(uint8_t(byte)));
  isp::AttentionWork decode = one_row_decode(&mask, substitutes + 40);
  for (Drive* d : {&accurate, &aggregated}) {
    for (int step = 0; step < 4; ++step) {
      d->ssd.attention(decode, d->done(step));
      ++decode.appended_tokens_in_flash;
    }
    decode.appended_tokens_in_flash -= 4;
  }
  sc_core::sc_start();
  ASSERT_EQ(accurate.finished.size(), 4u);
  EXPECT_EQ(aggregated.ssd.engine().aggregated_passes(), 4u);
  expect_same(accurate, aggregated);
}

TEST(AggregatedMode, CentralizedDecodeStepsOfOneLayerMatchPageAccurate) {
  decode_steps_of_one_layer(schema::SsdParams::CENTRALIZED, schema::SsdParams::CONTROLLER_DRAM);
}
TEST(AggregatedMode, PerChannelDecodeStepsOfOneLayerMatchPageAccurate) {
  decode_steps_of_one_layer(schema::SsdParams::PER_CHANNEL, schema::SsdParams::GLOBAL_SRAM);
}
TEST(AggregatedMode, CentralizedDecodeStepThatFillsItsTileResumesAndMatchesPageAccurate) {
  decode_step(schema::SsdParams::CENTRALIZED, schema::SsdParams::CONTROLLER_DRAM, 0, true);
}

// The same op from another state is scheduled anew: here its stream was
// prefetched, so its command comes after the stream's start.
TEST(AggregatedMode, ThePassOfAnOpFromAnotherStateIsNotReused) {
  Drive accurate("a", params(schema::SsdParams::PAGE_ACCURATE));
  Drive aggregated("b", params(schema::SsdParams::AGGREGATED));
  const isp::AttentionWork decode = one_row_decode(nullptr, 0);
  isp::AttentionWork next = decode;
  next.layer = 1;
  for (Drive* d : {&accurate, &aggregated}) d->ssd.attention(decode, d->done(0));
  sc_core::sc_start();
  for (Drive* d : {&accurate, &aggregated}) d->ssd.prefetch_attention(next);
  sc_core::sc_start(sc_time(20, sc_core::SC_US));
  for (Drive* d : {&accurate, &aggregated}) d->ssd.attention(next, d->done(1));
  sc_core::sc_start();
  ASSERT_EQ(accurate.finished.size(), 2u);
  EXPECT_EQ(aggregated.ssd.engine().aggregated_passes(), 2u);
  EXPECT_EQ(aggregated.ssd.engine().reused_passes(), 0u);
  expect_same(accurate, aggregated);
}

// Inter-layer prefetch: the stream starts before the command (the consumers
// hold the first pages in their buffers), the command arrives while the
// channels wait (a) or while they still fill the buffers (b).
void prefetched_op(uint64_t command_after_ps) {
  Drive accurate("a", params(schema::SsdParams::PAGE_ACCURATE));
  Drive aggregated("b", params(schema::SsdParams::AGGREGATED));
  isp::AttentionWork decode;
  decode.layer = 7;
  decode.shape = opt13b();
  decode.context_tokens = kContext;
  decode.appended_tokens_supplied = 1;
  decode.query_rows = 1;
  for (Drive* d : {&accurate, &aggregated}) d->ssd.prefetch_attention(decode);
  sc_core::sc_start(sc_time::from_value(command_after_ps));
  for (Drive* d : {&accurate, &aggregated}) d->ssd.attention(decode, d->done(0));
  sc_core::sc_start();
  ASSERT_EQ(accurate.finished.size(), 1u);
  EXPECT_EQ(aggregated.ssd.engine().aggregated_passes(), 1u);
  expect_same(accurate, aggregated);
}

TEST(AggregatedMode, PrefetchedOpWhoseCommandComesLateMatchesPageAccurate) { prefetched_op(300'000'000); }
TEST(AggregatedMode, PrefetchedOpWhoseCommandComesEarlyMatchesPageAccurate) { prefetched_op(9'000'000); }

// A prefetch tiles its op once; a command that differs from the prediction (two
// supplied entries, not one) has its tiles made again, so the op ends exactly as
// when the prediction was right (same times, counters and energies).
TEST(AggregatedMode, PrefetchWithAWrongPredictionEndsAsARightOne) {
  Drive right("a", params(schema::SsdParams::PAGE_ACCURATE));
  Drive wrong("b", params(schema::SsdParams::PAGE_ACCURATE));  // expect_same() pairs "a.*" with "b.*"
  isp::AttentionWork actual;
  actual.layer = 7;
  actual.shape = opt13b();
  actual.context_tokens = kContext;
  actual.appended_tokens_supplied = 2;
  actual.query_rows = 1;
  isp::AttentionWork predicted = actual;
  predicted.appended_tokens_supplied = 1;
  right.ssd.prefetch_attention(actual);
  wrong.ssd.prefetch_attention(predicted);
  sc_core::sc_start(sc_time::from_value(9'000'000));
  for (Drive* d : {&right, &wrong}) d->ssd.attention(actual, d->done(0));
  sc_core::sc_start();
  ASSERT_EQ(right.finished.size(), 1u);
  EXPECT_EQ(right.ssd.engine().tokens_kept(), wrong.ssd.engine().tokens_kept());
  expect_same(right, wrong);
}

// A program batch under way when a read and an attention pass start. Its pages
// all issued (one per die): the streams are aggregated and suspend the programs
// as page-accurate reads do, whether only tPROG is left or the data-ins are
// still crossing the channels (the streams' data-outs queue behind them, a die
// still in its data-in suspends its program as it starts); the read and the
// pass finish at the page-accurate times. Pages still to issue (four per die):
// the data-ins would interleave with the streams' data-outs, so both streams
// fall back to page events.
void streams_over_a_program_batch(uint64_t tiles, double start_us, bool data_ins_under_way,
                                  bool aggregated_expected) {
  Drive accurate("a", params(schema::SsdParams::PAGE_ACCURATE));
  Drive aggregated("b", params(schema::SsdParams::AGGREGATED));
  isp::AttentionWork decode;
  decode.layer = 2;
  decode.shape = opt13b();
  decode.context_tokens = kContext;
  decode.appended_tokens_supplied = 1;
  decode.query_rows = 1;
  const uint64_t entry = 32 * 64 * 2 * 2;
  for (Drive* d : {&accurate, &aggregated}) d->ssd.append(1, 64 * tiles, 64 * tiles * entry, d->done(0));
  // Bus + DRAM of the batch (about 110 us per tile), then its programs.
  sc_core::sc_start(sc_time(start_us, sc_core::SC_US));
  EXPECT_EQ(!aggregated.ssd.flash().channel(0).quiet(), data_ins_under_way);
  for (Drive* d : {&accurate, &aggregated}) {
    d->ssd.host_read(0, trace::KV_REGION_PRECOMPUTED, 0, 256, d->done(1));
    d->ssd.attention(decode, d->done(2));
  }
  sc_core::sc_start();
  ASSERT_EQ(accurate.finished.size(), 3u);
  EXPECT_EQ(aggregated.ssd.engine().aggregated_passes(), aggregated_expected ? 1u : 0u);
  EXPECT_EQ(aggregated.ssd.aggregated_reads(), aggregated_expected ? 1u : 0u);
  // Every completion, the batch's included: same-instant channel requests go
  // in die order in both modes (nand::Channel).
  expect_same(accurate, aggregated);
}

TEST(AggregatedMode, StreamsOverAnIssuedProgramBatchSuspendItLikePageEvents) {
  streams_over_a_program_batch(1, 200, false, true);
}
TEST(AggregatedMode, StreamsDuringAnIssuedBatchsDataInsQueueBehindThemLikePageEvents) {
  streams_over_a_program_batch(1, 125, true, true);
}
TEST(AggregatedMode, StreamsDuringABatchStillIssuingFallBackToPageEvents) {
  streams_over_a_program_batch(4, 530, false, false);
}

// A 1 GiB drive (64 blocks of 16 pages per plane): preconditioning it takes
// a fraction of a second.
schema::NandParams small_drive() {
  schema::NandParams nand;
  nand.set_blocks_per_plane(64);
  nand.set_pages_per_block(16);
  return schema::resolved(nand, "nand");
}

// An aged drive: filled, overwritten at random until its write amplification
// settled, then the precomputed KV stored on it out of place, in fragments off
// the layout's stripe. The passes of a decode step (layers 0-6) and of a fused
// prefill are aggregated on that placement, and every time, count and energy
// equals the page-accurate drive's.
void fragmented_placement(schema::SsdParams::Organization organization, schema::SsdParams::Reduction reduction) {
  Drive accurate("a", params(schema::SsdParams::PAGE_ACCURATE, organization, reduction), small_drive());
  Drive aggregated("b", params(schema::SsdParams::AGGREGATED, organization, reduction), small_drive());
  for (Drive* d : {&accurate, &aggregated}) d->ssd.start_from(DriveStart{"", /*precondition=*/true});
  ASSERT_FALSE(aggregated.ssd.placement().ideal());
  const trace::BitVector mask = every_nth(0, 7);
  const auto [fused, decode] = fused_and_decode(mask);
  for (Drive* d : {&accurate, &aggregated}) {
    for (uint32_t layer = 0; layer < 7; ++layer) {
      isp::AttentionWork op = decode;
      op.layer = layer;
      d->ssd.attention(op, d->done(int(layer)));
    }
    d->ssd.attention(fused, d->done(7));
  }
  sc_core::sc_start();
  ASSERT_EQ(accurate.finished.size(), 8u);
  EXPECT_GE(aggregated.ssd.engine().aggregated_passes(), 8u);
  EXPECT_EQ(accurate.ssd.engine().aggregated_passes(), 0u);
  expect_same(accurate, aggregated);
}

TEST(AggregatedMode, PerChannelGlobalSramPassesOnAFragmentedPlacementMatchPageAccurate) {
  fragmented_placement(schema::SsdParams::PER_CHANNEL, schema::SsdParams::GLOBAL_SRAM);
}
TEST(AggregatedMode, PerChannelControllerDramPassesOnAFragmentedPlacementMatchPageAccurate) {
  fragmented_placement(schema::SsdParams::PER_CHANNEL, schema::SsdParams::CONTROLLER_DRAM);
}
TEST(AggregatedMode, CentralizedPassesOnAFragmentedPlacementMatchPageAccurate) {
  fragmented_placement(schema::SsdParams::CENTRALIZED, schema::SsdParams::CONTROLLER_DRAM);
}

// Host reads of the aged drive's layers: their runs are off the layout's
// stripe (a run may start on any channel), so every channel is scheduled; the
// reads finish at the page-accurate times.
TEST(AggregatedMode, HostReadsOnAFragmentedPlacementMatchPageAccurate) {
  Drive accurate("a", params(schema::SsdParams::PAGE_ACCURATE), small_drive());
  Drive aggregated("b", params(schema::SsdParams::AGGREGATED), small_drive());
  for (Drive* d : {&accurate, &aggregated}) d->ssd.start_from(DriveStart{"", /*precondition=*/true});
  ASSERT_FALSE(aggregated.ssd.placement().ideal());
  for (Drive* d : {&accurate, &aggregated}) {
    for (uint32_t layer = 0; layer < 4; ++layer)
      d->ssd.host_read(layer, trace::KV_REGION_PRECOMPUTED, 0, kContext, d->done(int(layer)));
  }
  sc_core::sc_start();
  ASSERT_EQ(accurate.finished.size(), 4u);
  EXPECT_EQ(aggregated.ssd.aggregated_reads(), 4u);
  EXPECT_EQ(aggregated.ssd.reads_scheduled_on_one_channel(), 0u);
  expect_same(accurate, aggregated);
}

// Passes beside garbage collection run on page events: on a used 1 GiB drive
// (preconditioned; it starts with the background threshold of lines free),
// the appended KV of 4 layers (512 tokens, 1,024 pages: a line) takes the
// free lines below that threshold and to GC's reserve: GC runs for the
// appends, then, the drive idle with work to come, in the background. A
// decode step's passes issued while a GC job runs are not aggregated: both
// drives finish them at the same times with the same counts and energies.
TEST(AggregatedMode, PassesBesideGarbageCollectionRunOnPageEventsAndMatchPageAccurate) {
  Drive accurate("a", params(schema::SsdParams::PAGE_ACCURATE), small_drive());
  Drive aggregated("b", params(schema::SsdParams::AGGREGATED), small_drive());
  sc_core::sc_event work_to_come;
  work_to_come.notify(sc_time(10, sc_core::SC_SEC));
  const uint64_t token_bytes = 32 * 64 * 2 * 2;
  for (Drive* d : {&accurate, &aggregated}) {
    d->ssd.start_from(DriveStart{"", /*precondition=*/true});
    for (uint32_t layer = 0; layer < 4; ++layer) d->ssd.append(layer, kAppended, kAppended * token_bytes, nullptr);
  }
  // Until a GC job runs with no call under way.
  const auto collecting = [](Drive& d) { return d.ssd.outstanding() == 0 && !d.ssd.jobs().idle(); };
  for (int ms = 0; ms < 1000 && !collecting(aggregated); ++ms) sc_core::sc_start(sc_time(1, sc_core::SC_MS));
  ASSERT_TRUE(collecting(aggregated));
  ASSERT_TRUE(collecting(accurate));
  const trace::BitVector mask = every_nth(0, 7);
  const isp::AttentionWork decode = fused_and_decode(mask).decode;
  for (Drive* d : {&accurate, &aggregated}) {
    for (uint32_t layer = 0; layer < 7; ++layer) {
      isp::AttentionWork op = decode;
      op.layer = layer;
      d->ssd.attention(op, d->done(int(layer)));
    }
  }
  sc_core::sc_start();
  ASSERT_EQ(accurate.finished.size(), 7u);
  EXPECT_GT(aggregated.ssd.gc_background_lines(), 0u);
  EXPECT_EQ(aggregated.ssd.engine().aggregated_passes(), 0u);
  expect_same(accurate, aggregated);
}

// A random mix of reads, writes, appends and attention ops: every call
// completes once and bytes are conserved. Program batches are frequent here,
// which is where the modes differ by construction: page-accurate reads suspend
// programs under way (100 us each), an aggregated stream bars programs on its
// channels until its last page there is out instead. The last completion is printed
// and bounded (10 %), not claimed to agree.
TEST(AggregatedMode, RandomMixCompletesEachCallOnceAndConservesBytes) {
  Drive accurate("a", params(schema::SsdParams::PAGE_ACCURATE));
  Drive aggregated("b", params(schema::SsdParams::AGGREGATED));
  std::mt19937 random(99);
  const uint64_t entry = 32 * 64 * 2 * 2;
  uint64_t requested = 0;
  isp::AttentionWork work;
  work.shape = opt13b();
  work.query_rows = 1;
  work.appended_tokens_supplied = 1;
  for (int call = 0; call < 30; ++call) {
    const uint32_t kind = random() % 4, layer = random() % 24;
    const uint64_t a = random() % kContext, b = random() % kContext;
    const uint64_t begin = std::min(a, b) / 64 * 64, end = std::min<uint64_t>((std::max(a, b) / 64 + 1) * 64, kContext);
    const uint64_t tokens = 1 + random() % 50;
    if (kind == 0) requested += (end - begin) * entry;
    work.layer = layer;
    work.context_tokens = 64 * (1 + random() % 32);
    for (Drive* d : {&accurate, &aggregated}) {
      if (kind == 0) d->ssd.host_read(layer, trace::KV_REGION_PRECOMPUTED, begin, end, d->done(call));
      if (kind == 1) d->ssd.host_write(layer, 0, tokens, tokens * entry, d->done(call));
      if (kind == 2) d->ssd.append(layer, tokens, tokens * entry, d->done(call));
      if (kind == 3) d->ssd.attention(work, d->done(call));
    }
  }
  sc_core::sc_start();
  for (Drive* d : {&accurate, &aggregated}) {
    ASSERT_EQ(d->finished.size(), 30u);
    std::vector<int> seen(30, 0);
    for (const auto& [call, at] : d->finished) ++seen[call];
    for (int call = 0; call < 30; ++call) EXPECT_EQ(seen[call], 1) << call;
    EXPECT_EQ(d->ssd.kv_read_bytes(), requested);
    EXPECT_EQ(d->pcie.bytes(link::Direction::DEVICE_TO_HOST, link::Purpose::KV_READ), requested);
    EXPECT_EQ(d->ssd.engine().bytes_read(), d->ssd.engine().bytes_consumed());
    EXPECT_EQ(d->ssd.outstanding(), 0u);
  }
  EXPECT_GT(aggregated.ssd.engine().aggregated_passes(), 0u);
  EXPECT_EQ(accurate.ssd.nand_pages_read(), aggregated.ssd.nand_pages_read());
  EXPECT_EQ(accurate.ssd.nand_pages_programmed(), aggregated.ssd.nand_pages_programmed());
  EXPECT_EQ(accurate.ssd.engine().macs(), aggregated.ssd.engine().macs());
  const double last_a = double(accurate.finished.back().second), last_b = double(aggregated.finished.back().second);
  std::printf("random mix: page-accurate ends at %.3f ms, aggregated at %.3f ms (%+.2f %%)\n", last_a * 1e-9,
              last_b * 1e-9, (last_b - last_a) / last_a * 100);
  EXPECT_NEAR(last_b, last_a, last_a * 0.10);
}

}  // namespace
}  // namespace ispsim::ssd
