// A drive that keeps its state, through the CLI: `run --save-drive-state`,
// `--drive-state` and `--precondition` (models/ssd/flash_translation.h).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "tests/support/cli.h"

namespace ispsim::testing {
namespace {

const std::string kTrace = "traces/samples/blend_small.trace";
// A 0.5 GiB drive (8 channels x 4 dies x 2 planes x 64 blocks x 8 pages of 16 KB,
// 64 lines) keeps preconditioning to a fraction of a second.
const std::string kSmallDrive = " --set nand.blocks_per_plane=64 --set nand.pages_per_block=8";

std::string scratch(const std::string& name) { return (scratch_dir() / name).string(); }

// name -> value of the statistics CSV of one `run` (exit code 0 expected).
std::map<std::string, double> run(const std::string& options) {
  const std::string csv = scratch("stats.csv");
  const CliResult r = run_cli("run -p memllm -t " + kTrace + " --stats " + shell_quote(csv) + options);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return read_stats_csv(csv);
}

// A run's drive, saved, is where the next run starts. The request's appended KV
// is trimmed before the save and the second run stores its precomputed KV again
// (out of place): a different drive state, but every page still on its layout
// unit, so the second request takes exactly as long as the first.
TEST(DriveStateCli, ARunSavesItsDriveAndTheNextStartsFromIt) {
  const std::string first = scratch("first.ftl"), second = scratch("second.ftl");
  const auto a = run(" --save-drive-state " + shell_quote(first));
  ASSERT_EQ(read_text(first).rfind("ISPFTL", 0), 0u);
  const auto b = run(" --drive-state " + shell_quote(first) + " --save-drive-state " + shell_quote(second));
  EXPECT_NE(read_text(first), read_text(second));
  EXPECT_EQ(a.at("system.run.latency"), b.at("system.run.latency"));
  EXPECT_EQ(b.at("gc_block_erases"), 0);
}

TEST(DriveStateCli, AFileThatIsNotADriveStateIsOneLineAndExitTwo) {
  const CliResult r = run_cli("run -p memllm -t " + kTrace + " --drive-state " + kTrace);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "ispsim: error: " + kTrace + ": not an ispsim drive state (no ISPFTL header)\n");
}

TEST(DriveStateCli, AStateOfAnotherDriveIsRefused) {
  const std::string saved = scratch("small.ftl");
  run(kSmallDrive + " --save-drive-state " + shell_quote(saved));
  const CliResult r = run_cli("run -p memllm -t " + kTrace + " --drive-state " + shell_quote(saved));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_NE(r.err.find(saved + ": drive state of another drive"), std::string::npos) << r.err;
}

// A preconditioned drive (full, aged by random overwrites): the FTL has copied
// pages (write amplification above 1) and the run completes on it.
TEST(DriveStateCli, APreconditionedDriveHasWrittenMoreThanItWasGiven) {
  const auto aged = run(kSmallDrive + " --precondition");
  EXPECT_GT(aged.at("ftl_waf"), 1.5);
  EXPECT_GT(aged.at("system.run.latency"), 0);
}

TEST(DriveStateCli, TheNandStreamSystemHasNoDrive) {
  const CliResult r =
      run_cli("run -p nand_stream -t traces/samples/nand_stream.trace --precondition");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "ispsim: error: --drive-state: the NAND stream system has no flash translation layer\n");
}

}  // namespace
}  // namespace ispsim::testing
