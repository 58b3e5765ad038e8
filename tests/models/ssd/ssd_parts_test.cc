// The SSD controller's building blocks on their own: parameter resolution, the
// FIFO of flash jobs, and the host reader's page arrival times (closed forms).
// Every TEST runs in its own process (SystemC elaborates once per process).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <systemc>
#include <vector>

#include "common/error.h"
#include "models/core/server.h"
#include "models/nand/flash_array.h"
#include "models/nand/layout.h"
#include "models/ssd/flash_job_queue.h"
#include "models/ssd/host_reader.h"
#include "models/ssd/ssd_config.h"
#include "tests/models/ssd/tiny_flash.h"

namespace ispsim::ssd {
namespace {

using sc_core::sc_time;
using sc_core::SC_NS;
using sc_core::SC_US;

TEST(SsdConfig, DefaultsAreTheSchemaDefaults) {
  const SsdConfig c = SsdConfig::from_params(schema::resolved(schema::SsdParams(), "ssd"));
  EXPECT_EQ(c.organization, isp::Organization::PER_CHANNEL);
  EXPECT_EQ(c.reduction, isp::Reduction::GLOBAL_SRAM);
  EXPECT_DOUBLE_EQ(c.dram_bytes_per_ns, 12.8);  // LPDDR4-3200 x32
  EXPECT_EQ(c.dram_latency, sc_time(100, SC_NS));
  EXPECT_DOUBLE_EQ(c.dram_joules_per_byte, 5 * 8 * 1e-12);
  EXPECT_DOUBLE_EQ(c.bus_bytes_per_ns, 8.0);
  EXPECT_EQ(c.bus_latency, sc_time(20, SC_NS));
  EXPECT_DOUBLE_EQ(c.bus_joules_per_byte, 0.5 * 8 * 1e-12);
  EXPECT_EQ(c.firmware_per_command, sc_time(1, SC_US));
  EXPECT_DOUBLE_EQ(c.controller_static_w, 0.5);
  EXPECT_DOUBLE_EQ(c.controller_active_w, 1.0);
  EXPECT_DOUBLE_EQ(c.dram_static_w, 0.05);
  EXPECT_FALSE(c.stage_host_reads_in_dram);
}

TEST(SsdConfig, SetValuesAreKept) {
  schema::SsdParams p;
  p.set_organization(schema::SsdParams::CENTRALIZED);
  p.set_reduction(schema::SsdParams::CONTROLLER_DRAM);
  p.set_dram_latency_ns(12.3456);
  p.set_stage_host_reads_in_dram(true);
  const SsdConfig c = SsdConfig::from_params(schema::resolved(p, "ssd"));
  EXPECT_EQ(c.organization, isp::Organization::CENTRALIZED);
  EXPECT_EQ(c.reduction, isp::Reduction::CONTROLLER_DRAM);
  EXPECT_EQ(c.dram_latency, sc_time::from_value(12346));  // rounded to the nearest ps
  EXPECT_TRUE(c.stage_host_reads_in_dram);
}

TEST(SsdConfig, OutOfRangeIsBadInputNamingTheParameter) {
  schema::SsdParams p;
  p.set_bus_bandwidth_gbps(0);
  try {
    SsdConfig::from_params(schema::resolved(p, "platform.textproto: ssd"), "platform.textproto: ssd");
    FAIL() << "no BadInput";
  } catch (const BadInput& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("platform.textproto: ssd"), std::string::npos) << what;
    EXPECT_NE(what.find("bus_bandwidth_gbps"), std::string::npos) << what;
  }
  schema::SsdParams q;
  q.set_dram_pj_per_bit(-1);
  EXPECT_THROW(SsdConfig::from_params(schema::resolved(q, "ssd")), BadInput);
}

// Jobs run one at a time in push order; each starts a delta after the previous
// one released the flash.
TEST(FlashJobQueue, RunsJobsOneAtATimeInOrder) {
  FlashJobQueue queue("queue");
  // Each job holds the flash for `hold` on its own timer (a compute-style Server).
  core::Server timer_a("timer_a", 0, sc_core::SC_ZERO_TIME);
  core::Server timer_b("timer_b", 0, sc_core::SC_ZERO_TIME);
  core::Server timer_c("timer_c", 0, sc_core::SC_ZERO_TIME);
  std::vector<std::pair<std::string, sc_time>> starts;
  auto job = [&](const std::string& name, core::Server& timer, sc_time hold) {
    return [&, name, hold](FlashJobQueue::Done release) {
      starts.push_back({name, sc_core::sc_time_stamp()});
      timer.submit(hold, 0, release);
    };
  };
  queue.push("a", job("a", timer_a, sc_time(3, SC_US)));
  queue.push("b", job("b", timer_b, sc_time(5, SC_US)));
  queue.push("c", job("c", timer_c, sc_time(1, SC_US)));
  EXPECT_FALSE(queue.idle());
  sc_core::sc_start();
  ASSERT_EQ(starts.size(), 3u);
  EXPECT_EQ(starts[0].first, "a");
  EXPECT_EQ(starts[0].second, sc_time(0, SC_US));
  EXPECT_EQ(starts[1].first, "b");
  EXPECT_EQ(starts[1].second, sc_time(3, SC_US));
  EXPECT_EQ(starts[2].first, "c");
  EXPECT_EQ(starts[2].second, sc_time(8, SC_US));
  EXPECT_TRUE(queue.idle());
  EXPECT_EQ(queue.jobs_started(), 3u);
  EXPECT_EQ(queue.busy_time(), sc_time(9, SC_US));
  EXPECT_EQ(queue.history(), (std::vector<std::string>{"a", "b", "c"}));
}

TEST(FlashJobQueue, ReleasingTwiceIsAProgrammingError) {
  FlashJobQueue queue("queue");
  bool threw = false;
  queue.push("twice", [&](FlashJobQueue::Done release) {
    release();
    try {
      release();
    } catch (const std::logic_error&) {
      threw = true;
    }
  });
  sc_core::sc_start();
  EXPECT_TRUE(threw);
}

schema::NandParams tiny_flash(unsigned channels, unsigned dies, unsigned planes, bool cache_read) {
  schema::NandParams p = testing::tiny_flash(channels, dies, planes, cache_read);
  p.set_blocks_per_plane(16);
  return p;
}

// tOut = 16384 B / 2.4 GB/s, rounded to the nearest picosecond.
const sc_time kTout = sc_time::from_value(std::llround(16384 * 1e12 / 2.4e9));
const sc_time kTr(5, SC_US);

// One die, one plane, no cache read: page k is out at (k + 1)(tR + tOut).
TEST(HostReader, OneDieWithoutCacheReadExposesTr) {
  nand::FlashArray flash("flash", tiny_flash(1, 1, 1, false));
  HostReader reader("reader", flash);
  nand::Layout layout(flash.config());
  std::vector<nand::PageAddress> pages;
  for (uint64_t i = 0; i < 4; ++i) pages.push_back(layout.address(i));
  std::vector<sc_time> arrivals(4);
  sc_time all_at;
  reader.start(
      pages, [&](uint32_t i) { arrivals[i] = sc_core::sc_time_stamp(); },
      [&] { all_at = sc_core::sc_time_stamp(); });
  sc_core::sc_start();
  for (unsigned k = 0; k < 4; ++k) EXPECT_EQ(arrivals[k], (kTr + kTout) * double(k + 1)) << k;
  EXPECT_EQ(all_at, (kTr + kTout) * 4.0);
  EXPECT_EQ(reader.pages_read(), 4u);
  EXPECT_FALSE(reader.active());
}

// Two channels x four dies, cache read: every die senses at once, each channel
// is then busy back to back: page j of a channel is out at tR + (j + 1) tOut.
TEST(HostReader, PipelinedDiesKeepTheChannelBusy) {
  nand::FlashArray flash("flash", tiny_flash(2, 4, 1, true));
  HostReader reader("reader", flash);
  nand::Layout layout(flash.config());
  std::vector<nand::PageAddress> pages;
  for (uint64_t i = 0; i < 16; ++i) pages.push_back(layout.address(i));
  std::vector<sc_time> arrivals(16);
  reader.start(pages, [&](uint32_t i) { arrivals[i] = sc_core::sc_time_stamp(); }, nullptr);
  sc_core::sc_start();
  // 8 pages per channel; tR (5 us) < 3 tOut, so the channel never waits after the first sense.
  std::vector<sc_time> channel0;
  for (unsigned i = 0; i < 16; i += 2) channel0.push_back(arrivals[i]);
  std::sort(channel0.begin(), channel0.end());
  for (unsigned j = 0; j < 8; ++j) EXPECT_EQ(channel0[j], kTr + kTout * double(j + 1)) << j;
}

// One die without cache read: GC's reader takes it first (page 0), a host
// read of page 1 asks for it at once and waits until GC's data is out (tR +
// tOut): gc_read_wait = tR + tOut, the host page out at 2 (tR + tOut). The
// same reads with an ordinary first reader wait as long and count nothing.
sc_time host_read_behind(bool garbage_collection, uint64_t& waited_ps) {
  nand::FlashArray flash("flash", tiny_flash(1, 1, 1, false));
  HostReader first("first", flash), host("host", flash);
  first.set_garbage_collection(garbage_collection);
  nand::Layout layout(flash.config());
  sc_time host_at;
  first.start({layout.address(0)}, nullptr, nullptr);
  host.start({layout.address(1)}, [&](uint32_t) { host_at = sc_core::sc_time_stamp(); }, nullptr);
  sc_core::sc_start();
  waited_ps = flash.die(0, 0).gc_read_wait_ps();
  return host_at;
}

TEST(HostReader, AReadBehindGarbageCollectionsReadCountsItsWait) {
  uint64_t waited = 0;
  EXPECT_EQ(host_read_behind(true, waited), 2 * (kTr + kTout));
  EXPECT_EQ(waited, (kTr + kTout).value());
}

TEST(HostReader, AReadBehindAnotherHostReadCountsNoGcWait) {
  uint64_t waited = 1;
  EXPECT_EQ(host_read_behind(false, waited), 2 * (kTr + kTout));
  EXPECT_EQ(waited, 0u);
}

TEST(HostReader, EmptyListCompletesAtOnceAndBadAddressIsBadInput) {
  nand::FlashArray flash("flash", tiny_flash(1, 1, 1, false));
  HostReader reader("reader", flash);
  bool done = false;
  reader.start({}, nullptr, [&] { done = true; });
  EXPECT_TRUE(done);
  nand::PageAddress bad;
  bad.channel = 7;
  EXPECT_THROW(reader.start({bad}, nullptr, nullptr), BadInput);
}

}  // namespace
}  // namespace ispsim::ssd
