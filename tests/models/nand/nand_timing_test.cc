// Exact simulated times of NAND reads, the die-level pipeline, channel
// contention and appends, against closed-form expressions written out here.
// Every TEST runs in its own process (SystemC elaborates once per process).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <systemc>
#include <vector>

#include "models/core/stats.h"
#include "models/nand/appender.h"
#include "models/nand/eraser.h"
#include "models/nand/flash_array.h"
#include "models/nand/layout.h"
#include "models/nand/stream_reader.h"
#include "models/nand/bus_protocol.h"
#include "tests/models/nand/bus_times.h"

namespace ispsim::nand {
namespace {

using sc_core::sc_time;
using sc_core::SC_NS;
using sc_core::SC_US;

// tOut = page_bytes / (rate * 1e6 * width / 8), rounded to the nearest picosecond.
sc_time transfer_time(double page_bytes, double rate_mtps, double width_bits) {
  return sc_time::from_value(std::llround(page_bytes * 1e12 / (rate_mtps * 1e6 * width_bits / 8)));
}

schema::NandParams flash(unsigned channels, unsigned dies, unsigned planes, double t_read_us,
                         bool cache_read) {
  schema::NandParams p;
  p.set_channels(channels);
  p.set_dies_per_channel(dies);
  p.set_planes_per_die(planes);
  p.set_t_read_us(t_read_us);
  p.set_cache_read(cache_read);
  p.set_page_bytes(16384);
  p.set_channel_rate_mtps(2400);
  p.set_channel_width_bits(8);
  p.set_t_prog_us(500);
  // The bus protocol's own closed forms: NandBus below.
  return data_only_bus(p);
}

schema::NandStreamParams stream(schema::NandStreamParams::ReadMode mode, double consume_ns,
                                unsigned buffers) {
  schema::NandStreamParams s;
  s.set_read_mode(mode);
  s.set_consumer_ns_per_page(consume_ns);
  s.set_scratchpad_buffers_per_channel(buffers);
  return s;
}

const auto kSequential = schema::NandStreamParams::SEQUENTIAL;
const auto kPipelined = schema::NandStreamParams::PIPELINED;
const sc_time kTout = transfer_time(16384, 2400, 8);  // 6826667 ps

// A flash with a stream reader that records when each page was consumed.
struct Rig {
  FlashArray flash;
  StreamReader reader;
  std::vector<std::pair<uint32_t, sc_time>> consumed;

  Rig(const schema::NandParams& n, const schema::NandStreamParams& s, const std::string& prefix = "")
      : flash((prefix + "nand").c_str(), FlashConfig::from_params(schema::resolved(n, "nand"))),
        reader((prefix + "reader").c_str(), flash, StreamConfig::from_params(schema::resolved(s, "stream"))) {
    reader.set_delivery([this](const PageAddress&, uint32_t index, const sc_time& done_at) {
      EXPECT_LE(done_at, sc_core::sc_time_stamp());
      consumed.emplace_back(index, done_at);
    });
  }
  // Reads `pages` and returns the time from start to the last page consumed.
  sc_time run(std::vector<PageAddress> pages) {
    reader.start(std::move(pages));
    sc_core::sc_start();
    EXPECT_TRUE(reader.done());
    return reader.finished_at() - reader.started_at();
  }
};

// `count` pages of channel 0 placed round-robin over `dies` dies, plane 0.
std::vector<PageAddress> pages_on_channel0(unsigned count, unsigned dies) {
  std::vector<PageAddress> pages;
  for (unsigned i = 0; i < count; ++i) {
    PageAddress p;
    p.die = i % dies;
    p.page = i / dies;
    pages.push_back(p);
  }
  return pages;
}

TEST(NandTiming, TransferTimeOfDefaultPageIs6827ns) {
  const FlashConfig c = FlashConfig::from_params(schema::resolved(schema::NandParams(), "nand"));
  EXPECT_EQ(c.t_page_transfer, kTout);
  EXPECT_EQ(kTout, sc_time::from_value(6826667));
  EXPECT_EQ(c.t_read, sc_time(5, SC_US));
  EXPECT_EQ(c.channels, 8u);
  EXPECT_EQ(c.page_bytes, 16384u);
}

TEST(NandTiming, OnePageOnOneDie) {
  const sc_time tR(5, SC_US), tC(100, SC_NS);
  Rig rig(flash(1, 1, 1, 5, false), stream(kPipelined, 100, 2));
  // sense, data-out, consume
  EXPECT_EQ(rig.run(pages_on_channel0(1, 1)), tR + kTout + tC);
}

TEST(NandTiming, OneTwoAndDiesPlusOnePagesOnOneDieAndOnManyDies) {
  // Without cache read. One die: every page pays tR + tOut in turn. Four dies of
  // one channel: the senses overlap and the data-outs follow back to back
  // (tR <= 3 tOut, so die 0's second sense is ready before the channel is free).
  const unsigned dies = 4;
  const sc_time tR(5, SC_US), tC(100, SC_NS);
  Rig one_die(flash(1, 1, 1, 5, false), stream(kPipelined, 100, 2), "one_");
  Rig many_dies(flash(1, dies, 1, 5, false), stream(kPipelined, 100, 2), "many_");
  for (unsigned n : {1u, 2u, dies + 1}) {
    EXPECT_EQ(one_die.run(pages_on_channel0(n, 1)), n * (tR + kTout) + tC) << n << " pages";
    EXPECT_EQ(many_dies.run(pages_on_channel0(n, dies)), tR + n * kTout + tC) << n << " pages";
  }
}

TEST(NandTiming, TwoPagesOnOneDieWithoutCacheRead) {
  const sc_time tR(5, SC_US), tC(100, SC_NS);
  Rig rig(flash(1, 1, 1, 5, false), stream(kPipelined, 100, 2));
  // The second sense waits for the first data-out: 2 (tR + tOut), then consume.
  EXPECT_EQ(rig.run(pages_on_channel0(2, 1)), 2 * (tR + kTout) + tC);
  ASSERT_EQ(rig.consumed.size(), 2u);
  EXPECT_EQ(rig.consumed[0].second, tR + kTout + tC);
}

TEST(NandTiming, CacheReadOnOneDieWhenTransferDominates) {
  const sc_time tR(5, SC_US), tC(100, SC_NS);
  Rig rig(flash(1, 1, 1, 5, true), stream(kPipelined, 100, 2));
  // Sensing of page k+1 overlaps the data-out of page k: tR + tOut + (N-1) max(tR, tOut) + tC.
  const unsigned n = 5;
  EXPECT_EQ(rig.run(pages_on_channel0(n, 1)), tR + kTout + (n - 1) * std::max(tR, kTout) + tC);
}

TEST(NandTiming, CacheReadOnOneDieWhenSensingDominates) {
  const sc_time tR(20, SC_US), tC(100, SC_NS);
  Rig rig(flash(1, 1, 1, 20, true), stream(kPipelined, 100, 2));
  const unsigned n = 5;
  EXPECT_EQ(rig.run(pages_on_channel0(n, 1)), tR + kTout + (n - 1) * std::max(tR, kTout) + tC);
}

TEST(NandTiming, DiesPlusOnePagesOnOneChannelAreChannelBound) {
  // 4 dies sense at once; data-outs follow back to back; die 0 re-senses during
  // the others' data-outs (tR <= 3 tOut), so page 5 follows without a gap.
  const unsigned dies = 4;
  const sc_time tR(5, SC_US), tC(100, SC_NS);
  ASSERT_LE(tR, (dies - 1) * kTout);
  Rig rig(flash(1, dies, 1, 5, false), stream(kPipelined, 100, 2));
  EXPECT_EQ(rig.run(pages_on_channel0(dies + 1, dies)), tR + (dies + 1) * kTout + tC);
  for (size_t k = 0; k < rig.consumed.size(); ++k) {
    EXPECT_EQ(rig.consumed[k].second, tR + (k + 1) * kTout + tC) << "page " << k;
  }
}

TEST(NandTiming, DiesPlusOnePagesWithTooFewDiesExposeTr) {
  // 2 dies, tR = 20 us > tOut: die 0 re-senses from tR + tOut to 2 tR + tOut, after
  // the channel went idle at tR + 2 tOut, so the third page ends at 2 tR + 2 tOut.
  const unsigned dies = 2;
  const sc_time tR(20, SC_US), tC(100, SC_NS);
  Rig rig(flash(1, dies, 1, 20, false), stream(kPipelined, 100, 2));
  EXPECT_EQ(rig.run(pages_on_channel0(dies + 1, dies)), 2 * tR + 2 * kTout + tC);
}

TEST(NandTiming, SequentialExposesTrOnEveryPage) {
  const unsigned dies = 4, n = dies + 1;
  const sc_time tR(5, SC_US), tC(100, SC_NS);
  Rig rig(flash(1, dies, 1, 5, true), stream(kSequential, 100, 2));
  EXPECT_EQ(rig.run(pages_on_channel0(n, dies)), n * (tR + kTout + tC));
  for (size_t k = 0; k < rig.consumed.size(); ++k) {
    EXPECT_EQ(rig.consumed[k].second, (k + 1) * (tR + kTout + tC)) << "page " << k;
  }
}

TEST(NandTiming, SequentialChannelsRunInParallel) {
  const unsigned channels = 4, dies = 2, per_channel = 3;
  const sc_time tR(5, SC_US), tC(100, SC_NS);
  Rig rig(flash(channels, dies, 1, 5, false), stream(kSequential, 100, 2));
  Layout layout(rig.flash.config());
  std::vector<PageAddress> pages;
  for (unsigned i = 0; i < channels * per_channel; ++i) pages.push_back(layout.address(i));
  EXPECT_EQ(rig.run(pages), per_channel * (tR + kTout + tC));
}

TEST(NandTiming, ChannelContentionSerialisesTwoDies) {
  // Two dies of one channel sense together; their data-outs take turns.
  const sc_time tR(5, SC_US);
  Rig rig(flash(1, 2, 1, 5, false), stream(kPipelined, 0, 2));
  EXPECT_EQ(rig.run(pages_on_channel0(2, 2)), tR + 2 * kTout);
  ASSERT_EQ(rig.consumed.size(), 2u);
  EXPECT_EQ(rig.consumed[0].second, tR + kTout);
  EXPECT_EQ(rig.consumed[1].second, tR + 2 * kTout);
  EXPECT_NE(rig.consumed[0].first, rig.consumed[1].first);
}

TEST(NandTiming, SameInstantDataOutsAreServedInDieOrder) {
  // Four dies sense together, read in the list order 3, 1, 2, 0; their
  // data-out requests are raised at the same instant tR and served by die
  // index (a fixed-priority arbiter), whatever order the kernel ran the dies
  // in: die d's page is out at tR + (d + 1) tOut.
  const sc_time tR(5, SC_US);
  Rig rig(flash(1, 4, 1, 5, false), stream(kPipelined, 0, 4));
  std::vector<PageAddress> pages(4);
  const unsigned order[4] = {3, 1, 2, 0};
  for (unsigned i = 0; i < 4; ++i) pages[i].die = order[i];
  rig.run(pages);
  ASSERT_EQ(rig.consumed.size(), 4u);
  for (const auto& [index, done_at] : rig.consumed)
    EXPECT_EQ(done_at, tR + (order[index] + 1) * kTout) << "die " << order[index];
}

TEST(NandTiming, TwoChannelsDoNotContend) {
  const sc_time tR(5, SC_US);
  Rig rig(flash(2, 1, 1, 5, false), stream(kPipelined, 0, 2));
  std::vector<PageAddress> pages(2);
  pages[1].channel = 1;
  EXPECT_EQ(rig.run(pages), tR + kTout);
}

TEST(NandTiming, MultiPlaneReadSensesBothPlanesInOneTr) {
  // One die, 2 planes: both pages are sensed together, then transferred in turn.
  const sc_time tR(5, SC_US);
  Rig rig(flash(1, 1, 2, 5, false), stream(kPipelined, 0, 2));
  std::vector<PageAddress> pages(2);
  pages[1].plane = 1;
  EXPECT_EQ(rig.run(pages), tR + 2 * kTout);
}

TEST(NandTiming, SingleBufferSerialisesTransferAndConsume) {
  // One scratchpad buffer: a data-out may start only when the previous page is
  // consumed, so each page costs tOut + tC after the first tR (sensing is hidden by 4 dies).
  const unsigned dies = 4, n = 6;
  const sc_time tR(5, SC_US), tC(3, SC_US);
  Rig rig(flash(1, dies, 1, 5, true), stream(kPipelined, 3000, 1));
  EXPECT_EQ(rig.run(pages_on_channel0(n, dies)), tR + n * (kTout + tC));
}

TEST(NandTiming, DoubleBufferHidesConsumeTimeUpToTout) {
  const unsigned dies = 4, n = 6;
  const sc_time tR(5, SC_US), tC(3, SC_US);
  Rig rig(flash(1, dies, 1, 5, true), stream(kPipelined, 3000, 2));
  EXPECT_EQ(rig.run(pages_on_channel0(n, dies)), tR + n * kTout + tC);
}

TEST(NandTiming, SlowConsumerBoundsTheStream) {
  // tC > tOut with two buffers: the consumer is the bottleneck after the first page.
  const unsigned dies = 4, n = 6;
  const sc_time tR(5, SC_US), tC(10, SC_US);
  ASSERT_GT(tC, kTout);
  Rig rig(flash(1, dies, 1, 5, true), stream(kPipelined, 10000, 2));
  EXPECT_EQ(rig.run(pages_on_channel0(n, dies)), tR + kTout + n * tC);
}

TEST(NandTiming, AppendsPayDataInThenTprog) {
  // One die: each page is data-in (tIn = tOut) then tPROG, one page at a time.
  const sc_time tProg(500, SC_US);
  FlashArray array("nand", FlashConfig::from_params(schema::resolved(flash(1, 1, 1, 5, false), "nand")));
  Appender appender("appender", array);
  std::vector<PageAddress> pages = pages_on_channel0(3, 1);
  appender.start(pages);
  sc_core::sc_start();
  ASSERT_TRUE(appender.done());
  EXPECT_EQ(appender.finished_at() - appender.started_at(), 3 * (kTout + tProg));
  EXPECT_EQ(array.die(0, 0).pages_programmed(), 3u);
}

TEST(NandTiming, AppendsOnTwoDiesOverlapTprog) {
  // Die 1's data-in follows die 0's; both then program concurrently.
  const sc_time tProg(500, SC_US);
  FlashArray array("nand", FlashConfig::from_params(schema::resolved(flash(1, 2, 1, 5, false), "nand")));
  Appender appender("appender", array);
  appender.start(pages_on_channel0(4, 2));
  sc_core::sc_start();
  // Die 0: data-in [0, tIn], program to tIn + tPROG, data-in to 2 tIn + tPROG, program
  // to 2 (tIn + tPROG). Die 1 runs one tIn behind (its first data-in waits for die 0's),
  // and its second data-in starts at 2 tIn + tPROG, just as die 0's ends: 3 tIn + 2 tPROG.
  EXPECT_EQ(appender.finished_at(), kTout + 2 * (kTout + tProg));
}

TEST(NandTiming, AnAggregatedStreamBarsProgramsOnItsChannelsUntilItsLastPageThere) {
  // Two channels of one die. An aggregated stream claims channel 0's die at 0,
  // its last page there out at 50 us; a program batch with a page on each
  // channel starts meanwhile. Channel 1 (not the stream's) takes its page at
  // once: tIn + tPROG. Channel 0's data-in waits for 50 us: 50 us + tIn + tPROG.
  const sc_time tProg(500, SC_US), last_out(50, SC_US);
  FlashArray array("nand", FlashConfig::from_params(schema::resolved(flash(2, 1, 1, 5, false), "nand")));
  Appender appender("appender", array);
  EXPECT_EQ(array.claim_for_stream(0, 0, 0), 0u);  // no program under way: it may sense at once
  EXPECT_TRUE(array.channel(0).programs_barred());
  EXPECT_FALSE(array.channel(1).programs_barred());
  PageAddress on_channel0, on_channel1;
  on_channel1.channel = 1;
  appender.start({on_channel0, on_channel1});
  array.end_aggregated_stream({1, 0}, {1, 0}, {last_out.value(), 0}, 0);
  sc_core::sc_start(kTout + tProg + sc_time(1, SC_NS));  // (events at the end time itself run in the next sc_start)
  EXPECT_FALSE(array.channel(0).programs_barred());
  EXPECT_EQ(array.die(1, 0).pages_programmed(), 1u);
  EXPECT_EQ(array.die(0, 0).pages_programmed(), 0u);
  sc_core::sc_start();
  ASSERT_TRUE(appender.done());
  EXPECT_EQ(appender.finished_at(), last_out + kTout + tProg);
  EXPECT_EQ(array.die(0, 0).pages_read(), 1u);  // the stream's page, counted as read
}

TEST(NandTiming, AStreamEndingOnOtherChannelsLeavesABarItDidNotSet) {
  // Stream A claims channel 0 and ends there at 50 us; stream B claims only
  // channel 1 and ends there at 10 us. B's end releases channel 1 alone, so a
  // program page on channel 0 still waits for A: 50 us + tIn + tPROG.
  const sc_time tProg(500, SC_US), a_last_out(50, SC_US), b_last_out(10, SC_US);
  FlashArray array("nand", FlashConfig::from_params(schema::resolved(flash(2, 1, 1, 5, false), "nand")));
  Appender appender("appender", array);
  array.claim_for_stream(0, 0, 0);
  array.end_aggregated_stream({1, 0}, {1, 0}, {a_last_out.value(), 0}, 0);
  array.claim_for_stream(1, 0, 0);
  array.end_aggregated_stream({0, 1}, {0, 1}, {0, b_last_out.value()}, 0);
  appender.start({PageAddress{}});  // channel 0, die 0
  sc_core::sc_start(b_last_out + sc_time(1, SC_NS));
  EXPECT_TRUE(array.channel(0).programs_barred());
  EXPECT_FALSE(array.channel(1).programs_barred());
  sc_core::sc_start();
  ASSERT_TRUE(appender.done());
  EXPECT_EQ(appender.finished_at(), a_last_out + kTout + tProg);
}

TEST(NandTiming, ReadWaitsForAProgramOnTheSameDie) {
  // Without program suspend (the old behaviour): the appender reserves die 0
  // first; the reader's page on that die is sensed only after data-in and
  // tPROG, while die 1's page is read at once.
  const sc_time tR(5, SC_US), tC(100, SC_NS), tProg(500, SC_US);
  schema::NandParams n = flash(1, 2, 1, 5, false);
  n.set_program_suspend(false);
  Rig rig(n, stream(kPipelined, 100, 2));
  Appender appender("appender", rig.flash);
  PageAddress programmed;
  programmed.page = 1;
  appender.start({programmed});
  std::vector<PageAddress> reads(2);
  reads[1].die = 1;
  rig.reader.start(reads);
  sc_core::sc_start();
  ASSERT_TRUE(rig.reader.done());
  ASSERT_TRUE(appender.done());
  EXPECT_EQ(appender.finished_at(), kTout + tProg);
  ASSERT_EQ(rig.consumed.size(), 2u);
  // Die 1 senses from 0, but its data-out cannot start before die 0's data-in has
  // left the channel at tOut.
  EXPECT_EQ(rig.consumed[0].first, 1u);
  EXPECT_EQ(rig.consumed[0].second, std::max(tR, kTout) + kTout + tC);
  EXPECT_EQ(rig.consumed[1].first, 0u);
  EXPECT_EQ(rig.consumed[1].second, kTout + tProg + tR + kTout + tC);
}

// One die programs page 1 while the reader wants page 0 of the same die.
struct SuspendCase {
  sc_time consumed;      // the read page's consumer done time
  sc_time programmed;    // the program's end
  uint64_t suspends = 0;
};
SuspendCase read_during_program(double t_suspend_us, double t_resume_us) {
  schema::NandParams n = flash(1, 1, 1, 5, false);
  n.set_program_suspend(true);
  n.set_t_suspend_us(t_suspend_us);
  n.set_t_resume_us(t_resume_us);
  Rig rig(n, stream(kPipelined, 100, 2));
  Appender appender("appender", rig.flash);
  PageAddress programmed;
  programmed.page = 1;
  appender.start({programmed});
  rig.reader.start({PageAddress{}});
  sc_core::sc_start();
  EXPECT_TRUE(rig.reader.done());
  EXPECT_TRUE(appender.done());
  EXPECT_EQ(rig.flash.die(0, 0).pages_programmed(), 1u);  // the program completes once
  EXPECT_EQ(rig.flash.die(0, 0).pages_read(), 1u);
  EXPECT_EQ(rig.consumed.size(), 1u);
  return {rig.consumed.empty() ? sc_time() : rig.consumed[0].second, appender.finished_at(),
          rig.flash.die(0, 0).suspends()};
}

TEST(NandTiming, ProgramSuspendLetsAReadOvertakeAProgram) {
  // The read is requested at 0, while the program waits for its data-in; tPROG
  // starts at tIn = tOut and is suspended at once (its progress frozen there),
  // the die is free for the read tSUS later; the read senses, transfers and is
  // consumed; the program resumes when the read's data is out and ends tRES +
  // the whole tPROG later.
  const sc_time tR(5, SC_US), tC(100, SC_NS), tProg(500, SC_US), tSus(100, SC_US), tRes(10, SC_US);
  const SuspendCase c = read_during_program(100, 10);
  EXPECT_EQ(c.suspends, 1u);
  EXPECT_EQ(c.consumed, kTout + tSus + tR + kTout + tC);
  EXPECT_EQ(c.programmed, kTout + tSus + tR + kTout + tRes + tProg);
}

TEST(NandTiming, ProgramSuspendIsSkippedWhenTheProgramEndsSooner) {
  // tSUS (600 us) exceeds the tPROG left (500 us): the read waits for the program.
  const sc_time tR(5, SC_US), tC(100, SC_NS), tProg(500, SC_US);
  const SuspendCase c = read_during_program(600, 0);
  EXPECT_EQ(c.suspends, 0u);
  EXPECT_EQ(c.programmed, kTout + tProg);
  EXPECT_EQ(c.consumed, kTout + tProg + tR + kTout + tC);
}

// A read requested at 0 of a die whose program (page 1) waits for its data-in.
// A program of garbage collection: the read's wait counts in gc_read_wait,
// without suspend until the program's end (tIn + tPROG), with suspend until
// the die is free for reads (tIn + tSUS: tPROG starts and is suspended at once).
uint64_t read_wait_behind_program(bool garbage_collection, bool suspend) {
  schema::NandParams n = flash(1, 1, 1, 5, false);
  n.set_program_suspend(suspend);
  n.set_t_suspend_us(100);
  Rig rig(n, stream(kPipelined, 100, 2));
  Appender appender("appender", rig.flash);
  PageAddress programmed;
  programmed.page = 1;
  appender.start({programmed}, "append", garbage_collection);
  rig.reader.start({PageAddress{}});
  sc_core::sc_start();
  EXPECT_TRUE(rig.reader.done());
  return rig.flash.die(0, 0).gc_read_wait_ps();
}

TEST(NandTiming, AReadWaitingForAGcProgramCountsAsWaitingBehindGc) {
  const sc_time tProg(500, SC_US);
  EXPECT_EQ(read_wait_behind_program(true, false), (kTout + tProg).value());
}

TEST(NandTiming, AReadSuspendingAGcProgramWaitsForTheSuspension) {
  const sc_time tSus(100, SC_US);
  EXPECT_EQ(read_wait_behind_program(true, true), (kTout + tSus).value());
}

TEST(NandTiming, AReadWaitingForAHostProgramCountsNoGcWait) {
  EXPECT_EQ(read_wait_behind_program(false, false), 0u);
}

// One die with suspend on, tSUS = 100 us and tRES = 10 us: the erase tests' flash.
schema::NandParams erase_suspending_flash() {
  schema::NandParams n = flash(1, 1, 1, 5, false);
  n.set_program_suspend(true);
  n.set_t_suspend_us(100);
  n.set_t_resume_us(10);
  return n;
}

// Three erases of tBERS = 15 ms: two blocks on die 0 and one on die 1 of one
// channel. Returns when the batch ended.
sc_time three_erases_on_two_dies(const schema::NandParams& n) {
  Rig rig(n, stream(kPipelined, 100, 2));
  Eraser eraser("eraser", rig.flash);
  PageAddress a, b, c;
  b.block = 1;
  c.die = 1;
  eraser.start({a, b, c}, sc_time(15000, SC_US));
  sc_core::sc_start();
  EXPECT_TRUE(eraser.done());
  EXPECT_EQ(rig.flash.die(0, 0).erases(), 2u);
  EXPECT_EQ(rig.flash.die(0, 1).erases(), 1u);
  EXPECT_EQ(rig.flash.die(0, 0).pages_programmed(), 0u);
  return eraser.finished_at();
}

// The dies erase in parallel, each die one block at a time; without bus
// cycles no data crosses the channel: the batch ends at 2 tBERS.
TEST(NandErase, ErasesRunOnTheirDiesInParallel) {
  const sc_time tBers(15000, SC_US);
  EXPECT_EQ(three_erases_on_two_dies(flash(1, 2, 1, 5, false)), tBers * 2.0);
}

// A read of a die that is erasing, requested at t1 = 1 ms into a 15 ms erase,
// suspends it under the program-suspend rules (tSUS 100 us, tRES 10 us): the
// read senses at t1 + tSUS and is consumed tR + tOut + tC later; the erase
// resumes when the read's data is out and ends tRES + (tBERS - t1) after that.
TEST(NandErase, AReadSuspendsAnErase) {
  const sc_time tR(5, SC_US), tC(100, SC_NS), tBers(15000, SC_US), tSus(100, SC_US), tRes(10, SC_US);
  const sc_time t1(1000, SC_US);
  Rig rig(erase_suspending_flash(), stream(kPipelined, 100, 2));
  Eraser eraser("eraser", rig.flash);
  eraser.start({PageAddress{}}, tBers);
  sc_core::sc_start(t1);
  PageAddress read;
  read.block = 1;
  rig.reader.start({read});
  sc_core::sc_start();
  ASSERT_TRUE(rig.reader.done());
  ASSERT_TRUE(eraser.done());
  const Die& die = rig.flash.die(0, 0);
  EXPECT_EQ(die.erase_suspends(), 1u);
  EXPECT_EQ(die.suspends(), 0u);
  ASSERT_EQ(rig.consumed.size(), 1u);
  EXPECT_EQ(rig.consumed[0].second, t1 + tSus + tR + kTout + tC);
  EXPECT_EQ(eraser.finished_at(), t1 + tSus + tR + kTout + tRes + (tBers - t1));
  EXPECT_EQ(die.gc_read_wait_ps(), tSus.value());  // the read waited for the suspension only
}

// An aggregated stream reaching an erasing die (Die::suspend_for_stream, as
// a read would): it may sense tSUS later, the erase resumes when the stream's
// last page of the die is out (t2) and ends tRES + (tBERS - t1) after that.
TEST(NandErase, AnAggregatedStreamSuspendsAnErase) {
  const sc_time tBers(15000, SC_US), tSus(100, SC_US), tRes(10, SC_US), t1(1000, SC_US), t2(1500, SC_US);
  Rig rig(erase_suspending_flash(), stream(kPipelined, 100, 2));
  Eraser eraser("eraser", rig.flash);
  eraser.start({PageAddress{}}, tBers);
  sc_core::sc_start(t1);
  Die& die = rig.flash.die(0, 0);
  EXPECT_EQ(die.suspend_for_stream(t1.value()), (t1 + tSus).value());
  die.resume_after_stream(t2.value());
  sc_core::sc_start();
  EXPECT_EQ(eraser.finished_at(), t2 + tRes + (tBers - t1));
  EXPECT_EQ(die.erase_suspends(), 1u);
  EXPECT_EQ(die.gc_read_wait_ps(), tSus.value());
}

// Without program_suspend the read waits for the whole erase.
TEST(NandErase, WithoutSuspendAReadWaitsForTheErase) {
  const sc_time tR(5, SC_US), tC(100, SC_NS), tBers(15000, SC_US);
  schema::NandParams n = flash(1, 1, 1, 5, false);
  n.set_program_suspend(false);
  Rig rig(n, stream(kPipelined, 100, 2));
  Eraser eraser("eraser", rig.flash);
  eraser.start({PageAddress{}}, tBers);
  rig.reader.start({PageAddress{}});
  sc_core::sc_start();
  ASSERT_EQ(rig.consumed.size(), 1u);
  EXPECT_EQ(eraser.finished_at(), tBers);
  EXPECT_EQ(rig.consumed[0].second, tBers + tR + kTout + tC);
  EXPECT_EQ(rig.flash.die(0, 0).gc_read_wait_ps(), tBers.value());
}

// The bus protocol (channel.h; its published cycle and turnaround times in
// bus_times.h): every operation's command, address and status cycles occupy
// the channel with its data.
schema::NandParams with_bus_protocol(schema::NandParams p) {
  p.clear_t_cmd_cycle_ns();  // every field back to its default
  p.clear_t_wb_ns();
  p.clear_t_whr_ns();
  p.clear_t_rhw_ns();
  p.clear_t_adl_ns();
  p.clear_t_ccs_ns();
  return p;
}
using testing::kEraseBus;
using testing::kFirstPageExtra;
using testing::kOtherPageExtra;
using testing::kProgramExtra;

TEST(NandBus, DefaultCyclesGiveTheOnfiSequencesBusTimes) {
  const FlashConfig c = FlashConfig::from_params(schema::resolved(schema::NandParams(), "nand"));
  EXPECT_EQ(c.data_out_ps(true), (kTout + kFirstPageExtra).value());
  EXPECT_EQ(c.data_out_ps(false), (kTout + kOtherPageExtra).value());
  EXPECT_EQ(c.data_in_ps(), (kTout + kProgramExtra).value());
  EXPECT_EQ(c.erase_command_ps(), kEraseBus.value());
  EXPECT_EQ(kFirstPageExtra, sc_time(630, SC_NS));  // 275 read command + 230 status + 25 (00h) + 100 tRHW
  EXPECT_EQ(kOtherPageExtra, sc_time(850, SC_NS));  // 275 + 475 column change + 100
}

TEST(NandBus, ZeroCyclesLeaveTheDataAlone) {
  const FlashConfig c = FlashConfig::from_params(schema::resolved(flash(1, 1, 1, 5, false), "nand"));
  EXPECT_EQ(c.data_out_ps(true), kTout.value());
  EXPECT_EQ(c.data_out_ps(false), kTout.value());
  EXPECT_EQ(c.data_in_ps(), kTout.value());
  EXPECT_EQ(c.erase_command_ps(), 0u);
}

// A read on an idle bus: its command before tR and its status poll after it
// are taken with the data-out; the latency is the ONFI sequence's.
TEST(NandBus, OnePageOnAnIdleBus) {
  const sc_time tR(5, SC_US), tC(100, SC_NS);
  Rig rig(with_bus_protocol(flash(1, 1, 1, 5, false)), stream(kPipelined, 100, 2));
  EXPECT_EQ(rig.run(pages_on_channel0(1, 1)), tR + kTout + kFirstPageExtra + tC);
}

// A two-plane sense: one status poll, then a change of plane and column for the second page.
TEST(NandBus, AMultiPlaneSensePollsItsStatusOnce) {
  const sc_time tR(5, SC_US);
  Rig rig(with_bus_protocol(flash(1, 1, 2, 5, false)), stream(kPipelined, 0, 2));
  std::vector<PageAddress> pages(2);
  pages[1].plane = 1;
  EXPECT_EQ(rig.run(pages), tR + 2 * kTout + kFirstPageExtra + kOtherPageExtra);
  std::map<std::string, double> v;
  for (const stats::Entry* e : stats::Registry::global().sorted()) v[e->name] = e->read();
  EXPECT_EQ(v.at("nand.ch0.command_time"), double((kFirstPageExtra + kOtherPageExtra).value()) * 1e-3);
  EXPECT_EQ(v.at("nand.ch0.busy_time"), double((2 * kTout + kFirstPageExtra + kOtherPageExtra).value()) * 1e-3);
}

// Four dies, one plane, cache read: channel-bound, every page its sense's
// first, back to back after the first tR (tR <= 3 of them).
TEST(NandBus, AChannelBoundStreamPaysEveryPagesCycles) {
  const unsigned dies = 4, n = 6;
  const sc_time tR(5, SC_US), tC(100, SC_NS), page = kTout + kFirstPageExtra;
  ASSERT_LE(tR, (dies - 1) * page);
  Rig rig(with_bus_protocol(flash(1, dies, 1, 5, true)), stream(kPipelined, 100, 2));
  EXPECT_EQ(rig.run(pages_on_channel0(n, dies)), tR + n * page + tC);
}

// Sequential: tR, the page and the consumer in turn, page after page.
TEST(NandBus, SequentialPaysTheCyclesOnEveryPage) {
  const unsigned dies = 4, n = 5;
  const sc_time tR(5, SC_US), tC(100, SC_NS);
  Rig rig(with_bus_protocol(flash(1, dies, 1, 5, true)), stream(kSequential, 100, 2));
  EXPECT_EQ(rig.run(pages_on_channel0(n, dies)), n * (tR + kTout + kFirstPageExtra + tC));
}

// One die: each page is its program command, data-in and (after tPROG) status poll.
TEST(NandBus, AppendsPayTheProgramCommandAndStatusPoll) {
  const sc_time tProg(500, SC_US);
  FlashArray array("nand", FlashConfig::from_params(schema::resolved(with_bus_protocol(flash(1, 1, 1, 5, false)), "nand")));
  Appender appender("appender", array);
  appender.start(pages_on_channel0(3, 1));
  sc_core::sc_start();
  ASSERT_TRUE(appender.done());
  EXPECT_EQ(appender.finished_at() - appender.started_at(), 3 * (kTout + kProgramExtra + tProg));
}

// Erases of 3 blocks (two on die 0, one on die 1) of one channel: each erase
// takes its command (and status poll) on the bus, E, before tBERS, B. Die 0:
// [0, E] then B; die 1's command waits for the bus: [E, 2E] then B; die 0's
// second: E + B to 2 E + 2 B, the batch's end.
TEST(NandBus, AnEraseTakesItsCommandOnTheBus) {
  const sc_time tBers(15000, SC_US);
  EXPECT_EQ(three_erases_on_two_dies(with_bus_protocol(flash(1, 2, 1, 5, false))), 2 * (kEraseBus + tBers));
}

}  // namespace
}  // namespace ispsim::nand
