// `ispsim trace gen` through the real CLI binary: the committed sample is what
// its documented command generates, and bad arguments are one line, exit code 2.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/support/cli.h"
#include "traces/memory_accounting.h"
#include "traces/gen/model_presets.h"
#include "traces/trace_io.h"

using ispsim::testing::CliResult;
using ispsim::testing::run_cli;
using ispsim::testing::scratch_dir;
using ispsim::testing::shell_quote;

namespace {

// The command in traces/README.md ("Generated traces") that made traces/samples/blend_small.trace.
// Every length is given, so the sample does not move when a profile is revised.
const std::string kSampleArgs =
    "trace gen --shape SmolLM2-135M --dataset wik --context-tokens 200 --query-tokens 11 --answer-tokens 4";

void expect_bad_input(const CliResult& r, const std::string& where, const std::string& problem) {
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_EQ(r.err.rfind("ispsim: error: " + where, 0), 0u) << r.err;
  EXPECT_NE(r.err.find(problem), std::string::npos) << r.err;
}

std::string out_path(const std::string& name) { return (scratch_dir() / name).string(); }

}  // namespace

TEST(TraceGenCli, SampleIsReproducedByItsCommand) {
  const std::string out = out_path("sample.trace");
  const CliResult r = run_cli(kSampleArgs + " --out " + shell_quote(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  const std::string sample = std::string(ISPSIM_SOURCE_DIR) + "/traces/samples/blend_small.trace";
  EXPECT_EQ(ispsim::testing::read_text(out), ispsim::testing::read_text(sample))
      << "regenerate the sample with: ispsim " << kSampleArgs << " --out traces/samples/blend_small.trace";
  EXPECT_LT(std::filesystem::file_size(sample), 1u << 20);
  ispsim::trace::TraceReader reader(sample);
  EXPECT_EQ(reader.header().programs_size(), 3);
  EXPECT_EQ(reader.header().model().name(), "SmolLM2-135M");
}

TEST(TraceGenCli, StatsOfAGeneratedTrace) {
  const std::string out = out_path("opt.trace");
  ASSERT_EQ(run_cli("trace gen --shape opt-1.3b --dataset cad --seed 5 --docs 2 --query-tokens 8 "
                    "--answer-tokens 2 --ratio 0.2 --out " + shell_quote(out)).exit_code, 0);
  const CliResult stats = run_cli("trace stats " + shell_quote(out));
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_NE(stats.out.find("OPT-1.3B"), std::string::npos) << stats.out;
  EXPECT_NE(stats.out.find("PRECOMPUTED_BLEND_FUSED"), std::string::npos);
  EXPECT_NE(stats.out.find("dataset=\"cad\""), std::string::npos) << stats.out;
}

TEST(TraceGenCli, BadArguments) {
  const std::string out = out_path("bad.trace");
  const std::string o = " --out " + shell_quote(out);
  expect_bad_input(run_cli("trace gen --dataset wik" + o), "ispsim trace gen", "missing --shape MODEL");
  expect_bad_input(run_cli("trace gen" + o), "ispsim trace gen", "missing --shape MODEL");
  expect_bad_input(run_cli("trace gen --shape SmolLM2-135M" + o), "ispsim trace gen", "missing --dataset D");
  expect_bad_input(run_cli("trace gen --shape SmolLM2-135M --dataset wik"), "ispsim trace gen", "missing --out FILE");
  expect_bad_input(run_cli("trace gen --shape gpt2 --dataset wik" + o), "ispsim trace gen: --shape",
                   "unknown model 'gpt2' (known: SmolLM2-135M");
  expect_bad_input(run_cli("trace gen --shape SmolLM2-135M --dataset squad" + o), "ispsim trace gen: --dataset",
                   "unknown dataset 'squad' (known: fin, tat, cov, cad, prv, wik, web, hpt)");
  const std::string base = "trace gen --shape SmolLM2-135M --dataset wik" + o;
  expect_bad_input(run_cli(base + " --ratio 1.5"), "ispsim trace gen: --ratio", "1.5 is not within 0..1");
  expect_bad_input(run_cli(base + " --ratio abc"), "ispsim trace gen: --ratio", "'abc' is not a number");
  expect_bad_input(run_cli(base + " --ratio nan"), "ispsim trace gen: --ratio", "'nan' is not a number");
  expect_bad_input(run_cli(base + " --docs 0"), "ispsim trace gen: --docs", "0 is out of range 1..1024");
  expect_bad_input(run_cli(base + " --seed -5"), "ispsim trace gen: --seed", "'-5' is not a whole number");
  expect_bad_input(run_cli(base + " --seed 99999999999999999999999"), "ispsim trace gen: --seed", "out of range");
  expect_bad_input(run_cli(base + " --context-tokens 0"), "ispsim trace gen: --context-tokens", "out of range");
  expect_bad_input(run_cli(base + " --query-tokens 1e3"), "ispsim trace gen: --query-tokens",
                   "'1e3' is not a whole number");
  expect_bad_input(run_cli(base + " --answer-tokens 5000"), "ispsim trace gen: --answer-tokens",
                   "5000 is out of range 0..4096");
  expect_bad_input(run_cli(base + " --frobnicate 1"), "ispsim trace gen", "unrecognised option");
  EXPECT_FALSE(std::filesystem::exists(out)) << "no output after bad arguments";
  // A directory as the output: refused up front by AtomicFile, nothing written.
  const CliResult dir = run_cli("trace gen --shape SmolLM2-135M --dataset wik --out " + shell_quote(scratch_dir().string()));
  EXPECT_EQ(dir.exit_code, 2);
  EXPECT_EQ(dir.err_lines(), 1) << dir.err;
}

TEST(TraceGenCli, HelpListsPresetsAndProfiles) {
  const CliResult r = run_cli("trace gen --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("gen --shape MODEL --dataset D --out FILE"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("model presets: SmolLM2-135M"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("dataset profiles: fin, tat"), std::string::npos) << r.out;
}

TEST(TraceGenCli, BudgetTable) {
  const CliResult r = run_cli("trace gen --budget-table");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  // The host platform's defaults: 8 GiB budget, 1 GiB workspace.
  EXPECT_NE(r.out.find("host memory budget: 8589934592 bytes (8.59 GB"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("accounting: physical (1 KV copy, workspace 1073741824 bytes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("69218"), std::string::npos) << r.out;  // OPT-350M max context (tokens)
  EXPECT_NE(r.out.find("over budget: 51 of 112 (model, dataset) pairs; 14 of 48"), std::string::npos) << r.out;

  const CliResult t2 = run_cli("trace gen --budget-table --accounting memllm-table2");
  ASSERT_EQ(t2.exit_code, 0) << t2.err;
  EXPECT_NE(t2.out.find("memllm-table2 (2 KV copies, workspace 0 bytes"), std::string::npos) << t2.out;
  EXPECT_NE(t2.out.find("40070"), std::string::npos) << t2.out;
  // Overrides and a 16 GiB budget, top-4.
  const CliResult o = run_cli("trace gen --budget-table --budget-bytes 17179869184 --kv-copies 1 "
                              "--workspace-bytes 0 --docs 4");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("17179869184 bytes (17.18 GB"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("top-k 4 documents"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("mean top-4 request"), std::string::npos) << o.out;
}

TEST(TraceGenCli, BudgetTableBadOptions) {
  const std::string b = "trace gen --budget-table";
  expect_bad_input(run_cli(b + " --accounting fp32"), "ispsim trace gen: --accounting",
                   "unknown accounting 'fp32' (known: physical, memllm-table2)");
  expect_bad_input(run_cli(b + " --kv-copies 0"), "ispsim trace gen: --kv-copies", "0 is out of range 1..8");
  expect_bad_input(run_cli(b + " --budget-bytes 8GB"), "ispsim trace gen: --budget-bytes", "'8GB' is not a whole number");
  expect_bad_input(run_cli(b + " --budget-bytes 1000"), "ispsim trace gen: --budget-bytes", "out of range");
  expect_bad_input(run_cli(b + " --workspace-bytes -1"), "ispsim trace gen: --workspace-bytes", "not a whole number");
  expect_bad_input(run_cli(b + " --docs 0"), "ispsim trace gen: --docs", "0 is out of range 1..1024");
  // Settings the table would ignore are refused, not silently dropped.
  expect_bad_input(run_cli(b + " --shape OPT-350M"), "ispsim trace gen", "unrecognised option '--shape'");
  expect_bad_input(run_cli(b + " --out x.trace"), "ispsim trace gen", "unrecognised option '--out'");
  expect_bad_input(run_cli("trace gen --shape OPT-350M --dataset cad --out x.trace --budget-bytes 100"),
                   "ispsim trace gen", "unrecognised option '--budget-bytes'");
}

// Every model preset gives a tiny request (one document of 16 tokens, 4 query
// tokens, 1 answer token) that the A100 server simulates; MemLLM's 8 GiB Jetson
// simulates it too unless the FP16 weights and the 1 GiB workspace exceed its
// DRAM, where `run` reports out of memory (exit 3).
TEST(TraceGenCli, EveryPresetRunsATinyTrace) {
  const std::string out = out_path("tiny.trace");
  for (const ispsim::trace::ModelShape& m : ispsim::tracegen::model_presets()) {
    SCOPED_TRACE(m.name());
    const CliResult gen = run_cli("trace gen --shape " + m.name() +
                                  " --dataset hpt --docs 1 --context-tokens 16 --query-tokens 4 --answer-tokens 1 --out " +
                                  out);
    ASSERT_EQ(gen.exit_code, 0) << gen.err;
    const bool fits_jetson =
        ispsim::accounting::model_weight_bytes(m, ispsim::tracegen::preset_ties_lm_head(m.name())) + (1ull << 30) <=
        (8ull << 30);
    for (const char* platform : {"server_gpu_fullcompute", "memllm"}) {
      const CliResult run = run_cli(std::string("run --platform ") + platform + " --trace " + out);
      const bool oom = platform == std::string("memllm") && !fits_jetson;
      EXPECT_EQ(run.exit_code, oom ? 3 : 0) << platform << ": " << run.err;
      EXPECT_NE(run.out.find(oom ? "OOM" : "latency (ms)"), std::string::npos) << run.out;
    }
  }
}
