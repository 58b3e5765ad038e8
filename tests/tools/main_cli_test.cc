// `ispsim` itself, before any command runs: usage, help and unknown commands.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "tests/support/cli.h"

using ispsim::testing::run_cli;

TEST(IspsimCli, UnknownCommandIsOneStderrLineAndExitTwo) {
  const auto r = run_cli("frobnicate --stats x.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "ispsim: error: unknown command 'frobnicate' (commands: run, compare, trace, describe, engine, sweep, reproduce, workload, rerun; "
            "see ispsim --help)\n");
}

TEST(IspsimCli, HelpPrintsUsageAndExitsZero) {
  const auto r = run_cli("--help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("usage: ispsim <command> [options]\n", 0), 0u) << r.out;
  EXPECT_EQ(r.err, "");
}

TEST(IspsimCli, VersionIsTheOneSweepResultsRecord) {
  const auto r = run_cli("--version");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("ispsim 0.", 0), 0u) << r.out;
  EXPECT_EQ(r.out.back(), '\n');
}

TEST(IspsimCli, NoCommandPrintsUsageAndExitsTwo) {
  const auto r = run_cli("");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out.rfind("usage: ispsim <command> [options]\n", 0), 0u) << r.out;
}

// One command table behind the usage and the dispatch (tools/ispsim/commands.cc):
// `ispsim --help` lists every command, and under `trace`, `engine` and `workload` their
// actions; each has a --help of its own that exits 0, and each action is in its
// command's --help too.
TEST(IspsimCli, EveryCommandAndActionIsInTheUsageAndHasItsOwnHelp) {
  const auto usage = run_cli("--help");
  ASSERT_EQ(usage.exit_code, 0);
  std::istringstream lines(usage.out);
  std::string line, command;
  int commands = 0, actions = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("  ", 0) != 0) continue;
    if (line[2] != ' ') {  // "  name  summary": a command
      command = line.substr(2, line.find(' ', 2) - 2);
      ++commands;
      const auto help = run_cli(command + " --help");
      EXPECT_EQ(help.exit_code, 0) << command << ": " << help.err;
      EXPECT_FALSE(help.out.empty()) << command;
      continue;
    }
    std::istringstream names(line);  // "            a | b | c": the actions of the command above
    std::string name;
    const std::string command_help = run_cli(command + " --help").out;
    while (names >> name) {
      if (name == "|") continue;
      ++actions;
      EXPECT_NE(command_help.find(name), std::string::npos) << command << " --help lacks " << name;
      const auto help = run_cli(command + " " + name + " --help");
      EXPECT_EQ(help.exit_code, 0) << command << " " << name << ": " << help.err;
      EXPECT_FALSE(help.out.empty()) << command << " " << name;
    }
  }
  EXPECT_EQ(commands, 9);
  // trace: dump, stats, pack, gen, chakra-export, chakra-import; engine: eight; workload: gen, dump, serve, slo, trace
  EXPECT_EQ(actions, 6 + 8 + 5);
}
