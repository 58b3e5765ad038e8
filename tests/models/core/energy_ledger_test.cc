// core::EnergyLedger: totals per component and phase, static energy, average
// and peak power against closed forms, and the errors.
#include "models/core/energy_ledger.h"

#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>

namespace ispsim::core {
namespace {

constexpr uint64_t kUs = 1'000'000;  // ps
constexpr uint64_t kMs = 1'000 * kUs;

// Relative comparison for sums of doubles.
void expect_close(double actual, double expected) { EXPECT_NEAR(actual, expected, 1e-12 * std::abs(expected)); }
// For closed forms of sums over ~1e5..1e6 records: rounding grows with their count.
void expect_sum_close(double actual, double expected) { EXPECT_NEAR(actual, expected, 1e-9 * std::abs(expected)); }

using Phases = std::vector<EnergyLedger::PhaseInterval>;

TEST(EnergyLedger, ComponentsPhasesStaticAverageAndPeak) {
  EnergyLedger ledger;
  ledger.add("system.gpu", 2.0, 0, 1 * kMs);           // 2000 W for 1 ms
  ledger.add("system.ssd", 0.5, kMs / 2, 3 * kMs / 2);  // 500 W from 0.5 to 1.5 ms
  ledger.add_static_power("system.gpu", 10);
  ledger.add_static_power("system.ssd", 1);
  const auto s = ledger.summarize(2 * kMs, {{"prefill", 0, kMs}, {"decode", kMs, 2 * kMs}});

  EXPECT_EQ(s.duration_ps, 2 * kMs);
  expect_close(s.dynamic_j_by_component.at("system.gpu"), 2.0);
  expect_close(s.dynamic_j_by_component.at("system.ssd"), 0.5);
  expect_close(s.static_j_by_component.at("system.gpu"), 10 * 2e-3);
  expect_close(s.static_j_by_component.at("system.ssd"), 1 * 2e-3);
  expect_close(s.total_j, 2.5 + 11 * 2e-3);
  // prefill: all of the GPU's 2 J, half the SSD's 0.5 J, half the static 22 mJ.
  ASSERT_EQ(s.j_by_phase.size(), 2u);  // nothing under "other"
  expect_close(s.j_by_phase.at("prefill"), 2.0 + 0.25 + 0.011);
  expect_close(s.j_by_phase.at("decode"), 0.25 + 0.011);
  expect_close(s.average_w, 2.522 / 2e-3);
  // Windows in [0.5, 1) ms draw 2000 + 500 + 11 W; the earliest such window starts at 0.5 ms.
  expect_close(s.peak_w, 2511);
  EXPECT_EQ(s.peak_window_start_ps, kMs / 2);
  expect_close(ledger.static_power_w(), 11);
}

TEST(EnergyLedger, AShortBurstIsAveragedOverItsWindow) {
  EnergyLedger ledger;
  // 1 uJ in 100 ns (10 W instantaneous) inside window [2, 3) us: 1 W over 1 us.
  ledger.add("ssd.ch0", 1e-6, 2'500'000, 2'600'000);
  auto s = ledger.summarize(10 * kUs, {});
  expect_close(s.peak_w, 1.0);
  EXPECT_EQ(s.peak_window_start_ps, 2 * kUs);
  expect_close(s.average_w, 1e-6 / 10e-6);
  expect_close(s.j_by_phase.at("other"), 1e-6);
  // The same with a 100 ns window sees the 10 W.
  EnergyLedger fine(100'000);
  fine.add("ssd.ch0", 1e-6, 2'500'000, 2'600'000);
  s = fine.summarize(10 * kUs, {});
  expect_close(s.peak_w, 10.0);
  EXPECT_EQ(s.peak_window_start_ps, 2'500'000u);
}

TEST(EnergyLedger, BurstAcrossAWindowBoundarySplits) {
  EnergyLedger ledger;
  ledger.add("x", 1e-6, kUs / 2, 3 * kUs / 2);  // half in window 0, half in window 1
  ledger.add("x", 0.4e-6, 5 * kUs, 5 * kUs);    // an instant: 0.4 W in window 5
  const auto s = ledger.summarize(10 * kUs, {});
  expect_close(s.peak_w, 0.5);
  EXPECT_EQ(s.peak_window_start_ps, 0u);  // windows 0 and 1 tie; the earliest wins
  expect_close(s.dynamic_j_by_component.at("x"), 1.4e-6);
}

TEST(EnergyLedger, TheLastWindowMayBeShorter) {
  EnergyLedger ledger;
  ledger.add("x", 1e-6, 2 * kUs, 2'500'000);  // 1 uJ in the last, 0.5 us long window: 2 W
  ledger.add("x", 1.5e-6, 0, kUs);            // 1.5 W in window 0
  ledger.add_static_power("y", 0.25);
  const auto s = ledger.summarize(2'500'000, {});
  expect_close(s.peak_w, 2.25);
  EXPECT_EQ(s.peak_window_start_ps, 2 * kUs);
  expect_close(s.total_j, 2.5e-6 + 0.25 * 2.5e-6);
  expect_close(s.average_w, (2.5e-6 + 0.25 * 2.5e-6) / 2.5e-6);
}

TEST(EnergyLedger, InstantsGoToThePhaseTheyFallIn) {
  EnergyLedger ledger;
  ledger.add("x", 1.0, 10 * kUs, 10 * kUs);  // at the start of phase b (phases are [start, end))
  ledger.add("x", 2.0, 5 * kUs, 5 * kUs);    // inside a
  ledger.add("x", 4.0, 30 * kUs, 30 * kUs);  // between phases: other
  ledger.add("x", 8.0, 50 * kUs, 50 * kUs);  // past the end: counted, and in the last window
  const auto s = ledger.summarize(40 * kUs, {{"b", 10 * kUs, 20 * kUs}, {"a", 0, 10 * kUs}});
  expect_close(s.j_by_phase.at("a"), 2.0);
  expect_close(s.j_by_phase.at("b"), 1.0);
  expect_close(s.j_by_phase.at("other"), 12.0);
  expect_close(s.total_j, 15.0);
  expect_close(s.peak_w, 8.0 / 1e-6);
  EXPECT_EQ(s.peak_window_start_ps, 39 * kUs);
}

TEST(EnergyLedger, EnergyOutsideThePhasesIsOther) {
  EnergyLedger ledger;
  ledger.add("x", 3.0, 0, 3 * kMs);
  ledger.add_static_power("x", 100);  // 0.3 J over 3 ms
  const auto s = ledger.summarize(3 * kMs, {{"decode", kMs, 2 * kMs}});
  expect_close(s.j_by_phase.at("decode"), 1.0 + 0.1);
  expect_close(s.j_by_phase.at("other"), 2.0 + 0.2);
  expect_close(s.peak_w, 1100);
  EXPECT_EQ(s.peak_window_start_ps, 0u);
}

TEST(EnergyLedger, EnergyPastTheEndCountsInTotalsNotInWindows) {
  EnergyLedger ledger;
  ledger.add("x", 2e-6, kUs, 3 * kUs);  // 1 W; half of it lies past the 2 us run
  const auto s = ledger.summarize(2 * kUs, {});
  expect_close(s.total_j, 2e-6);
  expect_close(s.peak_w, 1.0);
  EXPECT_EQ(s.peak_window_start_ps, kUs);
}

TEST(EnergyLedger, StaticOnlyAndZeroDuration) {
  EnergyLedger ledger;
  ledger.add_static_power("nand", 0.1);
  ledger.add_static_power("nand", 0.2);  // adds up
  ledger.add("nand", 0.0, 0, 10);        // zero energy is not recorded
  auto s = ledger.summarize(5 * kMs, {{"decode", 0, 5 * kMs}});
  EXPECT_EQ(s.dynamic_j_by_component.count("nand"), 0u);
  expect_close(s.static_j_by_component.at("nand"), 0.3 * 5e-3);
  expect_close(s.average_w, 0.3);
  expect_close(s.peak_w, 0.3);
  EXPECT_EQ(s.peak_window_start_ps, 0u);
  expect_close(s.j_by_phase.at("decode"), 0.3 * 5e-3);

  EnergyLedger static_only;
  static_only.add_static_power("nand", 0.3);
  s = static_only.summarize(0, {});
  EXPECT_EQ(s.total_j, 0.0);
  EXPECT_EQ(s.average_w, 0.0);
  EXPECT_EQ(s.peak_w, 0.0);

  EnergyLedger instant;
  instant.add("x", 1.0, 0, 0);
  s = instant.summarize(0, {});
  EXPECT_EQ(s.total_j, 1.0);
  EXPECT_EQ(s.peak_w, 0.0);  // no time, no power (not 1 J / 1 ps)
}

TEST(EnergyLedger, LongRunsDoNotMaterialiseEveryWindow) {
  // 100 s at 1 us windows is 1e8 windows; the summary must stay fast and small.
  EnergyLedger ledger;
  const uint64_t second = 1000 * kMs;
  for (uint64_t i = 0; i < 100; ++i) ledger.add("gpu", 50.0, i * second, (i + 1) * second);  // 50 W
  ledger.add("gpu", 1e-3, 42 * second + 7 * kUs, 42 * second + 7 * kUs + 500'000);          // +1 kW in one window
  const auto s = ledger.summarize(100 * second, {});
  expect_close(s.peak_w, 50 + 1000);
  EXPECT_EQ(s.peak_window_start_ps, 42 * second + 7 * kUs);
  expect_close(s.average_w, (5000 + 1e-3) / 100);
}

TEST(EnergyLedger, AnInstantInsideALongRecordAddsToItsWindow) {
  EnergyLedger ledger;
  ledger.add("gpu", 10e-6, 0, 10 * kUs);                 // 1 W for 10 us
  ledger.add("ssd", 0.5e-6, 5'500'000, 5'500'000);       // +0.5 uJ in window [5, 6) us
  ledger.add("ssd", 0.25e-6, 7 * kUs, 9 * kUs);          // +0.125 W in windows 7 and 8
  const auto s = ledger.summarize(10 * kUs, {});
  expect_close(s.peak_w, 1.5);
  EXPECT_EQ(s.peak_window_start_ps, 5 * kUs);
}

TEST(EnergyLedger, PhasesMayRepeatAName) {
  // Interleaved phases (e.g. a second decode burst) add up under one name.
  EnergyLedger ledger(10);
  ledger.add("x", 3.0, 0, 30);
  ledger.add("x", 1.0, 25, 25);
  const auto s = ledger.summarize(30, {{"a", 0, 10}, {"b", 10, 20}, {"a", 20, 30}});
  expect_close(s.j_by_phase.at("a"), 3.0);
  expect_close(s.j_by_phase.at("b"), 1.0);
  EXPECT_EQ(s.j_by_phase.count("other"), 0u);
  // Windows of 10 ps: 1 J per window, plus the 1 J instant in window 2.
  expect_close(s.peak_w, 2.0 / 10e-12);
  EXPECT_EQ(s.peak_window_start_ps, 20u);
}

TEST(EnergyLedger, ProgrammingErrors) {
  EnergyLedger ledger;
  EXPECT_THROW(ledger.add("x", -1.0, 0, 1), std::logic_error);
  EXPECT_THROW(ledger.add("x", std::numeric_limits<double>::quiet_NaN(), 0, 1), std::logic_error);
  EXPECT_THROW(ledger.add("x", 1.0, 2, 1), std::logic_error);
  EXPECT_THROW(ledger.add_static_power("x", -0.5), std::logic_error);
  EXPECT_THROW(EnergyLedger(0), std::logic_error);
  EXPECT_THROW(ledger.close(7), std::logic_error);
  EXPECT_THROW(ledger.set_phase("a", 0); ledger.set_phase("b", 5); ledger.set_phase("c", 4), std::logic_error);
  EXPECT_THROW(ledger.summarize(10, {{"a", 0, 6}, {"b", 5, 10}}), std::logic_error);
  EXPECT_THROW(ledger.summarize(10, {{"a", 6, 5}}), std::logic_error);
  EnergyLedger touching;
  EXPECT_NO_THROW(touching.summarize(10, {{"a", 0, 5}, {"b", 5, 10}}));  // touching is fine
  EXPECT_THROW(touching.summarize(10), std::logic_error);                 // only once
}

// --- streaming: folding while the simulation runs -------------------------

// A run of `n` records of 1 uJ each over [i, i + 1) us, 1 us apart, with a
// phase change every `phase_every` records, fed with the clock at each record's
// start (as a component charging at the start of its work would).
EnergyLedger::Summary feed(EnergyLedger& ledger, uint64_t& now, uint64_t n, uint64_t phase_every) {
  for (uint64_t i = 0; i < n; ++i) {
    now = i * kUs;
    if (i % phase_every == 0) ledger.set_phase((i / phase_every) % 2 ? "b" : "a", now);
    ledger.add("x", 1e-6 * (1 + i % 3), now, now + kUs);
    if (i % 1000 == 7) ledger.add("y", 5e-6, now + 300'000, now + 300'000);  // an instant
  }
  now = n * kUs;
  ledger.set_phase("", now);
  return ledger.summarize(now);
}

TEST(EnergyLedger, FoldingWhileRunningGivesTheSameSummaryInBoundedMemory) {
  uint64_t now = 0;
  EnergyLedger streaming;
  streaming.set_clock([&] { return now; });
  EnergyLedger offline;  // no clock: folds everything at the end
  uint64_t unused = 0;
  const uint64_t n = 300'000;
  const auto s = feed(streaming, now, n, 25'000);
  const auto o = feed(offline, unused, n, 25'000);
  expect_close(s.total_j, o.total_j);
  expect_close(s.j_by_phase.at("a"), o.j_by_phase.at("a"));
  expect_close(s.j_by_phase.at("b"), o.j_by_phase.at("b"));
  EXPECT_EQ(s.j_by_phase.count("other"), 0u);
  expect_close(s.peak_w, o.peak_w);
  EXPECT_EQ(s.peak_window_start_ps, o.peak_window_start_ps);
  // Closed form: x draws 1, 2, 3 uJ per 1 us record, y 5 uJ instants in windows 7, 1007, ...
  expect_sum_close(s.total_j, 1e-6 * (n / 3) * 6 + 5e-6 * (n / 1000));
  expect_close(s.peak_w, 3 + 5);  // window 1007 holds x's 3 uJ (1007 % 3 == 2) and y's 5 uJ
  EXPECT_EQ(s.peak_window_start_ps, 1007 * kUs);
}

TEST(EnergyLedger, PendingRecordsStayBoundedWhileRunning) {
  uint64_t now = 0;
  EnergyLedger ledger;
  ledger.set_clock([&] { return now; });
  size_t most_pending = 0;
  for (uint64_t i = 0; i < 1'000'000; ++i) {
    now = i * 1000;
    ledger.add("x", 1e-9, now, now + 500);
    most_pending = std::max(most_pending, ledger.pending_records());
  }
  EXPECT_LE(most_pending, size_t{1} << 17);  // two fold batches, not a million records
  const auto s = ledger.summarize(now + 1000);
  expect_sum_close(s.total_j, 1e-3);
}

TEST(EnergyLedger, AnOpenActivityHoldsItsStartUntilClosed) {
  uint64_t now = 0;
  EnergyLedger ledger;
  ledger.set_clock([&] { return now; });
  const uint64_t ticket = ledger.open(5 * kUs);  // e.g. a read that will charge [5 us, end]
  for (uint64_t i = 0; i < 200'000; ++i) {
    now = 10 * kUs + i * 1000;
    ledger.add("x", 1e-9, now, now + 1000);
  }
  EXPECT_GE(ledger.pending_records(), 400'000u);  // nothing after 5 us may be folded yet
  ledger.add("read", 2e-6, 5 * kUs, now);         // charged at the end, spread back to its start
  ledger.close(ticket);
  for (uint64_t i = 0; i < 100'000; ++i) {
    now += 1000;
    ledger.add("x", 1e-9, now, now + 1000);
  }
  EXPECT_LT(ledger.pending_records(), 400'000u);
  // Without the hold the same late record is refused: it starts before the settled time.
  EXPECT_THROW(ledger.add("late", 1e-6, 6 * kUs, now), std::logic_error);
  const auto s = ledger.summarize(now + 1000);
  expect_close(s.dynamic_j_by_component.at("read"), 2e-6);
  expect_sum_close(s.total_j, 2e-6 + 300'000 * 1e-9);
}

TEST(EnergyLedger, APhaseSetTwiceAtOneTimeKeepsTheLast) {
  EnergyLedger ledger;
  ledger.set_phase("a", 0);
  ledger.set_phase("b", 10);
  ledger.set_phase("a", 10);  // a zero-length "b": the earliest op in flight changed twice at 10 ps
  ledger.set_phase("c", 20);
  ledger.add("x", 3.0, 0, 30);
  const auto s = ledger.summarize(30);
  expect_close(s.j_by_phase.at("a"), 2.0);
  expect_close(s.j_by_phase.at("c"), 1.0);
  EXPECT_EQ(s.j_by_phase.count("b"), 0u);
}

}  // namespace
}  // namespace ispsim::core
