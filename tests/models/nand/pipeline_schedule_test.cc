// The event-free pipeline schedule (aggregated streaming mode) against the
// page-accurate StreamReader: the sorted arrival and done times of every
// channel agree exactly (default flash, one die, a consumer slower than the
// channel, three buffers, no consumer, page times that vary, no cache read).
// The comparison is per channel and order-free. Since the channel serves
// requests raised at the same instant in die order, as the schedule takes
// them, page times that vary and the absence of cache read agree exactly too.
// Before, the kernel's order of same-instant events decided it, and those two
// cases differed by up to two page times or one tR at the stream's end.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <systemc>
#include <vector>

#include "models/nand/flash_array.h"
#include "models/nand/layout.h"
#include "models/nand/pipeline_schedule.h"
#include "models/nand/stream_reader.h"

namespace ispsim::nand {
namespace {

// Page time of page `index`: `slow_ps` for every page, or with `vary`, a
// pattern of zeros, short and long pages.
uint64_t page_ps(uint32_t index, uint64_t slow_ps, bool vary) {
  if (!vary) return slow_ps;
  switch (index % 5) {
    case 0: return 0;
    case 1: return 82'000;
    case 2: return slow_ps;
    case 3: return 3 * slow_ps / 2;
    default: return 64'000;
  }
}

struct Case {
  schema::NandParams nand;
  uint64_t pages = 0;
  unsigned buffers = 2;
  uint64_t slow_ps = 0;   // consumer time per page (see page_ps)
  bool vary = false;
  uint64_t start_ps = 0;  // stream start
};

struct Times {
  std::vector<uint64_t> arrival, done;  // sorted, per channel
};

// Equal sorted times; on failure, names the first page that differs.
void expect_equal(const std::vector<uint64_t>& accurate, const std::vector<uint64_t>& aggregated, const char* what) {
  for (size_t i = 0; i < accurate.size(); ++i) {
    if (accurate[i] != aggregated[i]) {
      ADD_FAILURE() << what << " " << i << " of " << accurate.size() << ": page-accurate " << accurate[i]
                    << " ps, aggregated " << aggregated[i] << " ps";
      return;
    }
  }
}

// Runs the page-accurate reader and the schedule on the same pages.
void expect_same_schedule(const Case& c) {
  FlashArray flash("nand", schema::resolved(c.nand, "nand"));
  StreamConfig config;
  config.mode = ReadMode::kPipelined;
  config.buffers_per_channel = c.buffers == 0 ? 1024u : c.buffers;
  config.consume_per_page = sc_core::SC_ZERO_TIME;
  StreamReader reader("reader", flash, config);
  Layout layout(flash.config());
  std::vector<PageAddress> pages;
  for (uint64_t i = 0; i < c.pages; ++i) pages.push_back(layout.address(i));
  const unsigned channels = flash.config().channels;
  std::vector<Times> accurate(channels), aggregated(channels);
  std::map<uint32_t, uint64_t> arrival_of;  // page-accurate arrival = when its page time is asked
  for (unsigned ch = 0; ch < channels; ++ch) {
    reader.consumer(ch).set_eager(true);
    reader.consumer(ch).set_page_time([&c, &accurate, ch](const PageAddress&, uint32_t index) {
      accurate[ch].arrival.push_back(sc_core::sc_time_stamp().value());
      return sc_core::sc_time::from_value(c.buffers == 0 ? 0 : page_ps(index, c.slow_ps, c.vary));
    });
  }
  reader.set_delivery([&](const PageAddress& page, uint32_t, const sc_core::sc_time& done_at) {
    accurate[page.channel].done.push_back(done_at.value());
  });
  sc_core::sc_start(sc_core::sc_time::from_value(c.start_ps));
  reader.start(pages);
  sc_core::sc_start();

  PipelineSchedule schedule(flash.config());
  uint64_t senses = 0, scheduled = 0;
  std::vector<int> seen(pages.size(), 0);
  std::vector<uint64_t> times;
  for (uint32_t i = 0; i < pages.size(); ++i) times.push_back(page_ps(i, c.slow_ps, c.vary));
  schedule.assign(pages);
  for (unsigned ch = 0; ch < channels; ++ch) {
    schedule.run(ch, c.start_ps, c.buffers, times.data());
    uint64_t previous_arrival = c.start_ps;
    for (const PipelineSchedule::Page& p : schedule.pages_in_arrival_order()) {
      EXPECT_GE(p.arrival_ps, previous_arrival);  // time monotonic
      EXPECT_GE(p.done_ps, p.arrival_ps);
      EXPECT_EQ(pages[p.index].channel, ch);
      previous_arrival = p.arrival_ps;
      aggregated[ch].arrival.push_back(p.arrival_ps);
      aggregated[ch].done.push_back(p.done_ps);
      ++seen[p.index];
      ++scheduled;
    }
    for (uint64_t s : schedule.senses_by_die()) senses += s;
  }
  EXPECT_EQ(scheduled, pages.size());
  for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], 1) << "page " << i;  // every page once
  for (unsigned ch = 0; ch < channels; ++ch) {
    SCOPED_TRACE("channel " + std::to_string(ch));
    for (Times* t : {&accurate[ch], &aggregated[ch]}) {
      std::sort(t->arrival.begin(), t->arrival.end());
      std::sort(t->done.begin(), t->done.end());
    }
    ASSERT_EQ(accurate[ch].done.size(), aggregated[ch].done.size());
    expect_equal(accurate[ch].arrival, aggregated[ch].arrival, "arrival");
    expect_equal(accurate[ch].done, aggregated[ch].done, "done");
  }
  uint64_t accurate_senses = 0;
  for (unsigned ch = 0; ch < channels; ++ch)
    for (unsigned d = 0; d < flash.config().dies_per_channel; ++d) accurate_senses += flash.die(ch, d).senses();
  EXPECT_EQ(senses, accurate_senses);
}

TEST(PipelineSchedule, DefaultFlashChannelBoundMatchesPageAccurate) {
  Case c;
  c.pages = 8 * 4 * 2 * 6 + 5;  // not a whole number of rounds
  c.slow_ps = 82'000;           // a decode page: the channel (tOut = 6.8 us) is the bottleneck
  c.start_ps = 1'234'567;
  expect_same_schedule(c);
}

// A channel whose pages (planes, page times, places shifted by a constant)
// and start equal the previous channel's takes that schedule shifted; any
// difference schedules it anew. Each channel against a schedule of it alone.
TEST(PipelineSchedule, AChannelLikeThePreviousTakesItsScheduleShifted) {
  const FlashConfig config = FlashConfig::from_params(schema::resolved(schema::NandParams(), "nand"));
  const Layout layout(config);
  std::vector<PageAddress> pages;
  for (uint64_t i = 0; i < 8 * 4 * 2 * 3 + 5; ++i) pages.push_back(layout.address(i));  // channels 0-4: one more
  std::vector<uint64_t> times(pages.size(), 12'000'000);
  times[13] = 20'000'000;  // on channel 5
  auto equal = [](const PipelineSchedule& a, const PipelineSchedule& b) {
    const auto& x = a.pages_in_arrival_order();
    const auto& y = b.pages_in_arrival_order();
    bool same = x.size() == y.size() && a.senses_by_die() == b.senses_by_die() &&
                a.pages_by_die() == b.pages_by_die() && a.last_out_by_die() == b.last_out_by_die();
    for (size_t k = 0; same && k < x.size(); ++k)
      same = x[k].index == y[k].index && x[k].arrival_ps == y[k].arrival_ps && x[k].done_ps == y[k].done_ps;
    return same;
  };
  PipelineSchedule shared(config);
  shared.assign(pages);
  for (unsigned ch = 0; ch < config.channels; ++ch) {
    // Channel 3's channel is busy longer: a start unlike channel 2's.
    const uint64_t channel_free = ch == 3 ? 30'000'000 : 0;
    shared.run(ch, 1'000, 2, times.data(), 5'000, nullptr, channel_free);
    PipelineSchedule alone(config);
    alone.assign(pages);
    alone.run(ch, 1'000, 2, times.data(), 5'000, nullptr, channel_free);
    EXPECT_TRUE(equal(shared, alone)) << "channel " << ch;
  }
  // Repeated: channels 1 and 2 (like 0) and 7 (like 6). Scheduled: 0; 3 and 4
  // (a start unlike the previous channel's); 5 (a page fewer); 6 (page 13's time).
  EXPECT_EQ(shared.repeated_runs(), 3u);
}

TEST(PipelineSchedule, ConsumerSlowerThanTheChannelMatchesPageAccurate) {
  Case c;
  c.pages = 8 * 4 * 2 * 5 + 3;
  c.slow_ps = 12'000'000;  // 12 us pages: buffers full, the channel waits
  expect_same_schedule(c);
}

TEST(PipelineSchedule, VaryingPageTimesMatchPageAccurate) {
  Case c;
  c.pages = 8 * 4 * 2 * 20 + 3;
  c.slow_ps = 12'000'000;
  c.vary = true;
  expect_same_schedule(c);
}

TEST(PipelineSchedule, NoCacheReadMatchesPageAccurate) {
  Case c;
  c.nand.set_cache_read(false);
  c.pages = 8 * 4 * 2 * 20 + 7;
  c.slow_ps = 4'000'000;
  expect_same_schedule(c);
}

TEST(PipelineSchedule, OneDieOnePlaneSenseBoundMatchesPageAccurate) {
  Case c;
  c.nand.set_dies_per_channel(1);
  c.nand.set_planes_per_die(1);
  c.nand.set_cache_read(false);
  c.pages = 8 * 9;
  c.slow_ps = 500'000;
  expect_same_schedule(c);
}

TEST(PipelineSchedule, ThreeBuffersSenseBoundMatchesPageAccurate) {
  Case c;
  c.nand.set_t_read_us(40);
  c.pages = 8 * 4 * 2 * 3 + 1;
  c.buffers = 3;
  c.slow_ps = 9'000'000;
  expect_same_schedule(c);
}

TEST(PipelineSchedule, WithoutConsumerPagesAreDoneOnArrival) {
  Case c;
  c.pages = 8 * 4 * 2 * 3 + 2;
  c.buffers = 0;
  expect_same_schedule(c);
}

// The steady-state advance against the event loop alone: every channel's
// pages, senses and last data-outs equal, and pages were advanced over.
struct AdvanceCase {
  schema::NandParams nand;
  uint64_t pages = 8 * 4 * 2 * 40 + 3;
  unsigned buffers = 2;
  std::vector<uint64_t> times;  // by page (empty: none)
  uint64_t consumer_from_ps = 0, channel_free_ps = 0;
};

void expect_advance_matches_events(const AdvanceCase& c) {
  const FlashConfig config = FlashConfig::from_params(schema::resolved(c.nand, "nand"));
  const Layout layout(config);
  std::vector<PageAddress> pages;
  for (uint64_t i = 0; i < c.pages; ++i) pages.push_back(layout.address(i));
  PipelineSchedule advancing(config), stepping(config);
  stepping.set_period_advance(false);
  advancing.assign(pages);
  stepping.assign(pages);
  std::vector<uint64_t> die_ready(config.dies_per_channel, 0);
  die_ready[std::min<size_t>(1, die_ready.size() - 1)] = 3'000'000;  // a die suspending its program
  const uint64_t* times = c.times.empty() ? nullptr : c.times.data();
  for (unsigned ch = 0; ch < config.channels; ++ch) {
    SCOPED_TRACE("channel " + std::to_string(ch));
    for (PipelineSchedule* s : {&advancing, &stepping})
      s->run(ch, 1'000 + ch, c.buffers, times, c.consumer_from_ps, die_ready.data(), c.channel_free_ps);
    const auto& x = advancing.pages_in_arrival_order();
    const auto& y = stepping.pages_in_arrival_order();
    ASSERT_EQ(x.size(), y.size());
    for (size_t k = 0; k < x.size(); ++k) {
      ASSERT_EQ(x[k].index, y[k].index) << "page " << k;
      ASSERT_EQ(x[k].arrival_ps, y[k].arrival_ps) << "page " << k;
      ASSERT_EQ(x[k].done_ps, y[k].done_ps) << "page " << k;
    }
    EXPECT_EQ(advancing.senses_by_die(), stepping.senses_by_die());
    EXPECT_EQ(advancing.last_out_by_die(), stepping.last_out_by_die());
  }
  EXPECT_EQ(stepping.advanced_pages(), 0u);
  EXPECT_GT(advancing.advanced_pages(), c.pages / 4);
}

// Page times in stretches: long ones of one time, a short one, a pattern.
std::vector<uint64_t> stretches(uint64_t pages, uint64_t slow_ps) {
  std::vector<uint64_t> times(pages, slow_ps);
  for (uint64_t i = 0; i < pages; ++i) {
    if (i / 700 == 1) times[i] = 82'000;
    if (i > 1500 && i < 1520) times[i] = slow_ps / 3;
    if (i > 2000 && i < 2100) times[i] = page_ps(uint32_t(i), slow_ps, true);
  }
  return times;
}

TEST(PipelineSchedule, AdvanceChannelBoundMatchesEvents) {
  AdvanceCase c;
  c.times.assign(c.pages, 82'000);
  expect_advance_matches_events(c);
}

TEST(PipelineSchedule, AdvanceConsumerBoundInStretchesMatchesEvents) {
  AdvanceCase c;
  c.times = stretches(c.pages, 12'000'000);
  c.consumer_from_ps = 40'000'000;
  c.channel_free_ps = 20'000'000;
  expect_advance_matches_events(c);
}

TEST(PipelineSchedule, AdvanceThreeBuffersSenseBoundMatchesEvents) {
  AdvanceCase c;
  c.nand.set_t_read_us(40);
  c.buffers = 3;
  c.times = stretches(c.pages, 9'000'000);
  expect_advance_matches_events(c);
}

TEST(PipelineSchedule, AdvanceNoCacheReadMatchesEvents) {
  AdvanceCase c;
  c.nand.set_cache_read(false);
  c.times = stretches(c.pages, 4'000'000);
  expect_advance_matches_events(c);
}

TEST(PipelineSchedule, AdvanceWithoutConsumerMatchesEvents) {
  AdvanceCase c;
  c.buffers = 0;
  expect_advance_matches_events(c);
}

TEST(PipelineSchedule, AdvanceOneDieOnePlaneMatchesEvents) {
  AdvanceCase c;
  c.nand.set_dies_per_channel(1);
  c.nand.set_planes_per_die(1);
  c.nand.set_cache_read(false);
  c.times = stretches(c.pages, 500'000);
  expect_advance_matches_events(c);
}

}  // namespace
}  // namespace ispsim::nand
