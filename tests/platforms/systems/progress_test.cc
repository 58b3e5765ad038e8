// systems::Progress: the line it draws (figures with units, ETA from the rate so
// far) and its silence when stderr is not a terminal.
#include "platforms/systems/progress.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace ispsim::systems
