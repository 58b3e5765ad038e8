// `ispsim` itself, before any command runs: usage, help and unknown commands.
#include <gtest/gtest.h>

#include "tests/support/cli.h"

using ispsim::testing::run_cli;

TEST(IspsimCli, UnknownCommandIsOneStderrLineAndExitTwo) {
  const auto r = run_cli("frobnicate --stats x.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "ispsim: error: unknown command 'frobnicate' (commands: compare, describe, engine, reproduce, run, sweep, trace; "
            "see ispsim --help)\n");
}

TEST(IspsimCli, HelpPrintsUsageAndExitsZero) {
  const auto r = run_cli("--help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("usage: ispsim <command> [options]\n", 0), 0u) << r.out;
  EXPECT_EQ(r.err, "");
}

TEST(IspsimCli, NoCommandPrintsUsageAndExitsTwo) {
  const auto r = run_cli("");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out.rfind("usage: ispsim <command> [options]\n", 0), 0u) << r.out;
}
