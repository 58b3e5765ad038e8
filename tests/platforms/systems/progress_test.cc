// systems::Progress: the line it draws (figures with units, ETA from the rate so
// far) and its silence when stderr is not a terminal.
#include "platforms/systems/progress.h"

#include <gtest/gtest.h>

#include "platforms/systems/child_process.h"

namespace ispsim::systems {
namespace {

TEST(Progress, LineHasSharePhaseSimulatedTimeAndEta) {
  // 250 of 1000 ops in 30 s: the other 750 take 90 s at the same rate.
  EXPECT_EQ(Progress::line("MemLLM", 250, 1000, 12'345'000'000'000, "decode", 30.0),
            "MemLLM:  25.0 % of 1000 ops, simulated 12.345 s, decode, ETA 1m30s");
  EXPECT_EQ(Progress::line("GPU", 1, 3, 0, "", 3600.0), "GPU:  33.3 % of 3 ops, simulated 0.000 s, ETA 2h00m");
}

TEST(Progress, NoEtaBeforeTheFirstOpOrAfterTheLast) {
  EXPECT_EQ(Progress::line("x", 0, 10, 0, "", 5.0), "x:   0.0 % of 10 ops, simulated 0.000 s");
  EXPECT_EQ(Progress::line("x", 10, 10, 1'000'000'000'000, "", 5.0), "x: 100.0 % of 10 ops, simulated 1.000 s");
}

TEST(Progress, QuietWhenStderrIsNotATerminal) {
  // ctest runs with stderr on a pipe; nothing may be drawn even when enabled.
  testing::internal::CaptureStderr();
  {
    Progress p("x", 10, true);
    for (size_t i = 0; i <= 10; ++i) p.update(i, i);
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

TEST(CompareProgress, LineCountsFinishedPlatformsAndShowsTheRunningOnes) {
  // Shares 1 (done), 0.5 and 0.25 (running), -1 (not started): mean 1.75 / 4 =
  // 0.4375 after 35 s, so 35 * 0.5625 / 0.4375 = 45 s remain.
  EXPECT_EQ(CompareProgress::line({"gpu", "memllm", "aif", "base"}, {1.0, 0.5, 0.25, -1.0}, 35.0),
            "compare: 1 of 4 platforms done; memllm 50.0 %, aif 25.0 %, ETA 45s");
  EXPECT_EQ(CompareProgress::line({"a", "b"}, {-1.0, -1.0}, 3.0), "compare: 0 of 2 platforms done");
  EXPECT_EQ(CompareProgress::line({"a", "b"}, {1.0, 1.0}, 3.0), "compare: 2 of 2 platforms done");
}

TEST(SharedProgress, ChildrenWriteWhereTheParentReads) {
  SharedProgress slots(3);
  std::vector<std::function<std::string()>> tasks;
  for (uint64_t i = 0; i < 3; ++i)
    tasks.push_back([&slots, i] {
      Progress p("child", 10 * (i + 1), false, &slots[i]);
      p.update(7 * (i + 1), 0);
      return std::string();
    });
  size_t ticks = 0;
  run_in_children(tasks, 2, {}, [&] { ++ticks; });
  for (uint64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(slots[i].total_ops.load(), 10 * (i + 1));
    EXPECT_EQ(slots[i].done_ops.load(), 7 * (i + 1));
  }
}

}  // namespace
}  // namespace ispsim::systems
