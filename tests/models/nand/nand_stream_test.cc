// The default flash against MemLLM's reported bandwidths, stream invariants,
// the NandStreamSystem facade, bad input, statistics and waveforms.
#include <gtest/gtest.h>

#include <algorithm>
#include <bitset>
#include <cmath>
#include <cstdio>
#include <string>
#include <systemc>
#include <vector>

#include "common/error.h"
#include "models/core/stats.h"
#include "models/core/vcd.h"
#include "models/nand/appender.h"
#include "models/nand/flash_array.h"
#include "models/nand/layout.h"
#include "models/nand/nand_stream_system.h"
#include "models/nand/stream_reader.h"
#include "tests/support/vcd_check.h"
#include "tests/models/nand/bus_times.h"

namespace ispsim::nand {
namespace {

using sc_core::sc_time;
using sc_core::SC_NS;
using sc_core::SC_US;

// Default flash: tOut = 16384 B / (2400 MT/s * 8 bit / 8), to the nearest picosecond.
const sc_time kTout = sc_time::from_value(std::llround(16384 * 1e12 / (2400e6 * 8 / 8)));
const sc_time kTr(5, SC_US);
const sc_time kTc(64, SC_NS);  // default consumer time per page
const sc_time kTprog(500, SC_US);
// With the bus protocol (bus_times.h): a sense's first page, the other page of
// a two-plane sense, a program's data-in.
const sc_time kPage1 = kTout + testing::kFirstPageExtra;
const sc_time kPage2 = kTout + testing::kOtherPageExtra;
const sc_time kIn = kTout + testing::kProgramExtra;

schema::NandStreamParams mode(schema::NandStreamParams::ReadMode m) {
  schema::NandStreamParams s;
  s.set_read_mode(m);
  return s;
}

double gbps(uint64_t pages, const sc_time& t) { return pages * 16384.0 / t.to_seconds() / 1e9; }

// The first `count` pages of the default layout (every channel, die and plane used evenly).
std::vector<PageAddress> striped(const FlashArray& flash, uint64_t count) {
  Layout layout(flash.config());
  std::vector<PageAddress> pages;
  for (uint64_t i = 0; i < count; ++i) pages.push_back(layout.address(i));
  return pages;
}

struct DefaultRig {
  FlashArray flash{"nand", schema::resolved(schema::NandParams(), "nand")};
  StreamReader reader;
  std::vector<std::pair<uint32_t, sc_time>> consumed;  // (index, done_at) in callback order
  std::vector<uint32_t> channel_of;                      // channel of each callback
  std::vector<sc_time> called_at;                        // simulated time of each callback
  explicit DefaultRig(schema::NandStreamParams::ReadMode m)
      : reader("reader", flash, StreamConfig::from_params(schema::resolved(mode(m), "stream"))) {
    reader.set_delivery([this](const PageAddress& page, uint32_t i, const sc_time& done_at) {
      consumed.emplace_back(i, done_at);
      channel_of.push_back(page.channel);
      called_at.push_back(sc_core::sc_time_stamp());
    });
  }
  sc_time run(std::vector<PageAddress> pages) {
    reader.start(std::move(pages));
    sc_core::sc_start();
    return reader.finished_at() - reader.started_at();
  }
};

const uint64_t kPages = 8 * 4 * 2 * 64;  // channels * dies * planes * 64

// MemLLM reports 11 and 19 GB/s without command or status cycles; with them
// the default flash gives 10.47 and 17.32 GB/s (within 15 % of MemLLM's).
TEST(NandBandwidth, DefaultSequentialExposesTrAndTheBusCyclesOnEveryPage) {
  DefaultRig rig(schema::NandStreamParams::SEQUENTIAL);
  const sc_time t = rig.run(striped(rig.flash, kPages));
  // Each channel reads its kPages / 8 pages one at a time, each its own sense.
  EXPECT_EQ(t, (kPages / 8) * (kTr + kPage1 + kTc));
  const double bw = gbps(kPages, t);
  EXPECT_NEAR(bw, 11.0, 11.0 * 0.15) << bw << " GB/s";
  std::printf("sequential: %.3f GB/s\n", bw);
}

TEST(NandBandwidth, DefaultPipelinedIsChannelBound) {
  DefaultRig rig(schema::NandStreamParams::PIPELINED);
  const sc_time t = rig.run(striped(rig.flash, kPages));
  // Channel-bound: one tR to fill the pipeline, then data-outs back to back
  // (two-plane senses: a first and a second page each), then one consume.
  EXPECT_EQ(t, kTr + (kPages / 16) * (kPage1 + kPage2) + kTc);
  const double bw = gbps(kPages, t);
  EXPECT_NEAR(bw, 19.0, 19.0 * 0.15) << bw << " GB/s";
  std::printf("pipelined: %.3f GB/s\n", bw);
}

// A deterministic shuffle of distinct pages spread over the whole flash.
std::vector<PageAddress> shuffled_pages(const FlashArray& flash, uint64_t count) {
  Layout layout(flash.config());
  std::vector<uint64_t> index(count);
  uint64_t x = 12345;
  for (uint64_t i = 0; i < count; ++i) index[i] = i * 7919 % layout.capacity_pages();
  for (uint64_t i = count - 1; i > 0; --i) {  // Fisher-Yates with a fixed LCG
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    std::swap(index[i], index[(x >> 33) % (i + 1)]);
  }
  std::vector<PageAddress> pages;
  for (uint64_t i : index) pages.push_back(layout.address(i));
  return pages;
}

void check_invariants(schema::NandStreamParams::ReadMode m) {
  DefaultRig rig(m);
  const uint64_t n = 3000;
  rig.run(shuffled_pages(rig.flash, n));
  ASSERT_EQ(rig.consumed.size(), n);
  std::vector<int> seen(n, 0);
  std::vector<sc_time> last_done(rig.flash.config().channels, sc_core::SC_ZERO_TIME);
  for (size_t k = 0; k < rig.consumed.size(); ++k) {
    ++seen[rig.consumed[k].first];
    // Simulated time never goes back; a page is reported at or after it is finished,
    // and each channel's pages finish in the order they are reported.
    if (k > 0) {
      EXPECT_LE(rig.called_at[k - 1], rig.called_at[k]) << "time went back";
    }
    EXPECT_LE(rig.consumed[k].second, rig.called_at[k]);
    EXPECT_LE(last_done[rig.channel_of[k]], rig.consumed[k].second) << "channel order";
    last_done[rig.channel_of[k]] = rig.consumed[k].second;
  }
  // The stream ends when its last page is finished.
  EXPECT_EQ(rig.reader.finished_at(), *std::max_element(last_done.begin(), last_done.end()));
  for (uint64_t i = 0; i < n; ++i) EXPECT_EQ(seen[i], 1) << "page " << i;
  // Bytes read out of the dies == bytes over the channels == bytes consumed.
  const FlashConfig& c = rig.flash.config();
  uint64_t die_pages = 0, consumer_pages = 0;
  for (unsigned ch = 0; ch < c.channels; ++ch) {
    for (unsigned d = 0; d < c.dies_per_channel; ++d) die_pages += rig.flash.die(ch, d).pages_read();
    consumer_pages += rig.reader.consumer(ch).pages_consumed();
    EXPECT_LE(rig.reader.consumer(ch).max_occupancy(), 2u);
  }
  EXPECT_EQ(die_pages, n);
  EXPECT_EQ(consumer_pages, n);
  EXPECT_EQ(rig.reader.pages_delivered(), n);
}

TEST(NandInvariants, PipelinedDeliversEachPageOnceInTimeOrder) {
  check_invariants(schema::NandStreamParams::PIPELINED);
}

TEST(NandInvariants, SequentialDeliversEachPageOnceInTimeOrder) {
  check_invariants(schema::NandStreamParams::SEQUENTIAL);
}

TEST(NandInvariants, SameStreamTwiceGivesSameTimesAndOrder) {
  DefaultRig rig(schema::NandStreamParams::PIPELINED);
  const std::vector<PageAddress> pages = shuffled_pages(rig.flash, 500);
  const sc_time first = rig.run(pages);
  const sc_time offset = rig.reader.finished_at();
  auto a = rig.consumed;
  rig.consumed.clear();
  const sc_time second = rig.run(pages);
  EXPECT_EQ(first, second);
  ASSERT_EQ(a.size(), rig.consumed.size());
  for (size_t k = 0; k < a.size(); ++k) {
    EXPECT_EQ(a[k].first, rig.consumed[k].first);
    EXPECT_EQ(a[k].second + offset, rig.consumed[k].second);
  }
}

TEST(NandInvariants, StatisticsCountPagesBytesAndBusyTime) {
  DefaultRig rig(schema::NandStreamParams::PIPELINED);
  const uint64_t n = 8 * 4 * 2 * 4;
  const sc_time t = rig.run(striped(rig.flash, n));
  std::map<std::string, double> v;
  for (const stats::Entry* e : stats::Registry::global().sorted()) v[e->name] = e->read();
  EXPECT_EQ(v.at("nand.ch0.die0.pages_read"), double(n / 32));
  EXPECT_EQ(v.at("nand.ch0.die0.bytes_read"), double(n / 32 * 16384));
  EXPECT_EQ(v.at("nand.ch3.transfers_out"), double(n / 8));
  EXPECT_EQ(v.at("nand.ch3.busy_time"), double((n / 16) * (kPage1 + kPage2).value()) * 1e-3);
  EXPECT_EQ(v.at("nand.ch3.command_time"),
            double((n / 16) * (testing::kFirstPageExtra + testing::kOtherPageExtra).value()) * 1e-3);
  EXPECT_EQ(v.at("reader.pages_delivered"), double(n));
  EXPECT_EQ(v.at("reader.bytes_delivered"), double(n * 16384));
  EXPECT_EQ(v.at("reader.stream_time"), double(t.value()) * 1e-3);
  EXPECT_DOUBLE_EQ(v.at("reader.bandwidth"), gbps(n, t));
  EXPECT_EQ(v.at("reader.consumer5.pages_consumed"), double(n / 8));
}

TEST(NandFacade, LoadsAppendsAndFlush) {
  NandStreamSystem system("system", schema::resolved(schema::NandParams(), "nand"), schema::resolved(schema::NandStreamParams(), "stream"));
  // 512 B of KV per token and layer: 32 tokens per 16 KB page, 256 tokens = 8 pages,
  // one on each channel. Layer 1 follows layer 0 (stride 8 pages) on die 1.
  std::vector<KvOp> ops(4);
  ops[0] = KvOp{KvOp::kLoad, 0, 0, 256, 256 * 512};
  ops[1] = KvOp{KvOp::kLoad, 1, 0, 256, 256 * 512};
  ops[2] = KvOp{KvOp::kAppend, 0, 0, 0, 1000};   // less than a page: waits
  ops[3] = KvOp{KvOp::kAppend, 0, 0, 0, 16384};  // fills one page, 1000 B left for the flush
  const KvRunResult r = system.run(ops);
  EXPECT_EQ(r.pages_read, 16u);
  EXPECT_EQ(r.bytes_read, 16u * 16384);
  EXPECT_EQ(r.pages_programmed, 2u);
  EXPECT_EQ(r.bytes_requested, 2u * 256 * 512 + 1000 + 16384);
  EXPECT_EQ(r.read_time, 2 * (kTr + kPage1 + kTc));
  EXPECT_EQ(r.append_time, 2 * (kIn + kTprog));
  EXPECT_EQ(r.total_time, 2 * (kTr + kPage1 + kTc) + 2 * (kIn + kTprog));
  ASSERT_EQ(r.steps.size(), 5u);
  EXPECT_EQ(r.steps[2].pages, 0u);
  EXPECT_EQ(r.steps[4].what, "flush");
  EXPECT_DOUBLE_EQ(r.read_gbps, 16 * 16384.0 / r.read_time.to_seconds() / 1e9);
  // Appended pages sit after the KV region (16 pages): die 2 of channels 0 and 1.
  EXPECT_EQ(system.flash().die(0, 2).pages_programmed(), 1u);
  EXPECT_EQ(system.flash().die(1, 2).pages_programmed(), 1u);
}

TEST(NandFacade, PartialTilesReadWholePages) {
  NandStreamSystem system("system", schema::resolved(schema::NandParams(), "nand"), schema::resolved(schema::NandStreamParams(), "stream"));
  // Tokens [40, 70) at 32 tokens per page touch tiles 1 and 2.
  const KvRunResult r = system.run({KvOp{KvOp::kLoad, 0, 40, 70, 30 * 512}});
  EXPECT_EQ(r.pages_read, 2u);
}

TEST(NandBadInput, ParametersOutOfRange) {
  schema::NandParams p;
  p.set_channels(0);
  try {
    FlashConfig::from_params(schema::resolved(p, "nand"));
    FAIL() << "channels = 0 accepted";
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("channels"), std::string::npos) << e.what();
  }
  schema::NandParams q;
  q.set_t_read_us(-1);
  EXPECT_THROW(FlashConfig::from_params(schema::resolved(q, "nand")), BadInput);
  schema::NandStreamParams s;
  s.set_scratchpad_buffers_per_channel(0);
  EXPECT_THROW(StreamConfig::from_params(schema::resolved(s, "stream")), BadInput);
  schema::NandParams w;
  w.set_channel_width_bits(12);
  try {
    FlashConfig::from_params(schema::resolved(w, "nand"));
    FAIL() << "12-bit channel accepted";
  } catch (const BadInput& e) {
    EXPECT_EQ(std::string(e.what()), "nand: channel_width_bits = 12 bits is not a whole number of bytes");
  }
}

// The models convert resolved parameters only: a message that skipped the
// loader (or schema::resolved) is a programming error, not a silent zero.
TEST(NandBadInput, UnresolvedParametersAreAProgrammingError) {
  schema::NandParams p;
  p.set_channels(2);
  EXPECT_THROW(FlashConfig::from_params(p), std::logic_error);
  EXPECT_THROW(StreamConfig::from_params(schema::NandStreamParams()), std::logic_error);
  EXPECT_EQ(FlashConfig::from_params(schema::resolved(p, "nand")).channels, 2u);
}

TEST(NandBadInput, PageOutsideTheFlash) {
  DefaultRig rig(schema::NandStreamParams::PIPELINED);
  std::vector<PageAddress> pages(2);
  pages[1].channel = 8;
  try {
    rig.reader.start(pages);
    FAIL() << "channel 8 accepted";
  } catch (const BadInput& e) {
    EXPECT_EQ(std::string(e.what()), "stream: page 1: channel 8 does not exist (8 channels)");
  }
}

TEST(NandBadInput, FacadeRejectsBadOps) {
  NandStreamSystem system("system", schema::resolved(schema::NandParams(), "nand"), schema::resolved(schema::NandStreamParams(), "stream"));
  EXPECT_THROW(system.run({KvOp{KvOp::kLoad, 0, 10, 10, 512}}), BadInput);
  EXPECT_THROW(system.run({KvOp{KvOp::kLoad, 0, 0, 3, 1000}}), BadInput);  // 1000 B / 3 tokens
  EXPECT_THROW(system.run({KvOp{KvOp::kAppend, 0, 0, 0, 0}}), BadInput);
  // 2^40 tokens of 512 B exceed 512 GiB.
  EXPECT_THROW(system.run({KvOp{KvOp::kLoad, 0, 0, uint64_t(1) << 40, (uint64_t(1) << 40) * 512}}),
               BadInput);
}

TEST(NandWaveform, DieChannelAndBufferStatesAreValidVcd) {
  DefaultRig rig(schema::NandStreamParams::PIPELINED);
  const std::string path = ::testing::TempDir() + "nand_stream.vcd";
  vcd::Writer writer(vcd::Options{path, {}, 0, UINT64_MAX, {}});
  rig.flash.trace(writer);
  rig.reader.trace(writer);
  rig.run(striped(rig.flash, 64));
  writer.close();
  ispsim::testing::expect_vcd_valid(path);
  const auto content = ispsim::testing::parse_vcd_file(path);
  EXPECT_EQ(content.widths.at("nand.ch0.die0.state"), 4u);
  EXPECT_EQ(content.widths.at("nand.ch0.busy"), 1u);
  EXPECT_EQ(content.widths.at("reader.consumer0.occupancy"), 7u);
  // At tR die 0 of channel 0 has sensed; the channel starts its first data-out.
  EXPECT_EQ(content.values.at(kTr.value()).at("nand.ch0.busy"), "1");
}

TEST(NandWaveform, SequentialSenseStartsWhenTheConsumerIsDone) {
  // Channel 0 reads page 0 on die 0, then page 8 on die 1. Die 1 is reserved when
  // page 0 arrives (tR + tPage1) but senses only from tR + tPage1 + tC.
  DefaultRig rig(schema::NandStreamParams::SEQUENTIAL);
  const std::string path = ::testing::TempDir() + "nand_sequential.vcd";
  vcd::Writer writer(vcd::Options{path, {"nand.ch0.*"}, 0, UINT64_MAX, {}});
  rig.flash.trace(writer);
  const sc_time t = rig.run(striped(rig.flash, 16));
  writer.close();
  EXPECT_EQ(t, 2 * (kTr + kPage1 + kTc));
  ispsim::testing::expect_vcd_valid(path);
  const auto content = ispsim::testing::parse_vcd_file(path);
  EXPECT_EQ(content.values.at((kTr + kPage1).value()).at("nand.ch0.die0.state"), "0");
  EXPECT_EQ(content.values.at((kTr + kPage1 + kTc).value()).at("nand.ch0.die1.state"), "1");
  EXPECT_EQ(content.values.at((2 * kTr + kPage1 + kTc).value()).at("nand.ch0.die1.state"), "10");
}

TEST(NandWaveform, GarbageCollectionWorkIsNamedOnTheDieState) {
  // Die 0 programs a page for GC, die 1 one for the host, both issued at 0:
  // die 0's data-in [0, tIn'], tPROG to tIn' + tPROG; die 1's data-in follows
  // on the channel [tIn', 2 tIn'] (tIn' = tIn and the program's cycles).
  FlashArray flash{"nand", schema::resolved(schema::NandParams(), "nand")};
  Appender gc("gc", flash), host("host", flash);
  const std::string path = ::testing::TempDir() + "nand_gc_states.vcd";
  vcd::Writer writer(vcd::Options{path, {"nand.ch0.die0.*", "nand.ch0.die1.*"}, 0, UINT64_MAX, {}});
  flash.trace(writer);
  PageAddress on_die1;
  on_die1.die = 1;
  gc.start({PageAddress{}}, "gc", /*garbage_collection=*/true);
  host.start({on_die1});
  sc_core::sc_start();
  writer.close();
  ispsim::testing::expect_vcd_valid(path);
  const auto v = ispsim::testing::parse_vcd_file(path).values;
  const auto state = [](Die::State s) { return std::bitset<4>(s).to_string().substr(std::bitset<4>(s).to_string().find('1')); };
  EXPECT_EQ(v.at(0).at("nand.ch0.die0.state"), state(Die::kGcTransfer));
  EXPECT_EQ(v.at(kIn.value()).at("nand.ch0.die0.state"), state(Die::kGcProgram));
  EXPECT_EQ(v.at(kIn.value()).at("nand.ch0.die1.state"), state(Die::kTransfer));
  EXPECT_EQ(v.at((2 * kIn).value()).at("nand.ch0.die1.state"), state(Die::kProgram));
  EXPECT_EQ(v.at((kIn + kTprog).value()).at("nand.ch0.die0.state"), "0");
}

}  // namespace
}  // namespace ispsim::nand
