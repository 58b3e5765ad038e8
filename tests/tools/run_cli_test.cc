// End-to-end tests of `ispsim run` on the shipped NAND streaming microbenchmark.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <utility>

#include "tests/support/cli.h"
#include "tests/support/vcd_check.h"

namespace fs = std::filesystem;
using ispsim::testing::run_cli;
using ispsim::testing::scratch_dir;
using ispsim::testing::shell_quote;

namespace {

const std::string kDemo = "run --platform nand_stream --trace traces/samples/nand_stream.trace";

std::string out_path(const std::string& name) { return (scratch_dir() / name).string(); }

// A bad invocation: exit code 2, one stderr line containing `needle`, and no output file left.
void expect_bad(const std::string& args, const std::string& needle, const std::string& output) {
  const auto r = run_cli(args);
  EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(output)) << output;
  for (const auto& entry : fs::directory_iterator(scratch_dir()))
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
}

}  // namespace

TEST(RunCli, DemoPrintsSummaryWithUnits) {
  const auto r = run_cli(kDemo);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("GB/s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("end-to-end"), std::string::npos) << r.out;
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST(RunCli, StatisticsAreByteIdenticalAcrossRuns) {
  const std::string a = out_path("a.json"), b = out_path("b.json"), c = out_path("c.csv"), d = out_path("d.csv");
  ASSERT_EQ(run_cli(kDemo + " --stats " + a).exit_code, 0);
  ASSERT_EQ(run_cli(kDemo + " --stats " + b).exit_code, 0);
  ASSERT_EQ(run_cli(kDemo + " --stats " + c).exit_code, 0);
  ASSERT_EQ(run_cli(kDemo + " --stats " + d).exit_code, 0);
  // The same but for the command line in the provenance, which names the file.
  const auto without_command = [](const std::string& path) {
    return std::regex_replace(ispsim::testing::read_text(path), std::regex("\"command_line\": \"[^\"]*\""), "");
  };
  const std::string json = without_command(a);
  EXPECT_NE(json, ispsim::testing::read_text(a));
  EXPECT_EQ(json, without_command(b));
  // SI units only; a CSV names no file, so it is the same whole.
  EXPECT_NE(json.find("\"unit\": \"s\""), std::string::npos);
  EXPECT_EQ(json.find("\"unit\": \"ns\""), std::string::npos);
  EXPECT_EQ(json.find("\"unit\": \"GB/s\""), std::string::npos);
  EXPECT_EQ(ispsim::testing::read_text(c).rfind("name,value,unit,description,schema_version,ispsim_version,", 0), 0u);
  EXPECT_EQ(ispsim::testing::read_text(c), ispsim::testing::read_text(d));
}

TEST(RunCli, PipelinedReadsFasterThanSequential) {
  const std::string seq = out_path("seq.csv"), pipe = out_path("pipe.csv");
  ASSERT_EQ(run_cli(kDemo + " --set stream.read_mode=SEQUENTIAL --stats " + seq).exit_code, 0);
  ASSERT_EQ(run_cli(kDemo + " --set stream.read_mode=PIPELINED --stats " + pipe).exit_code, 0);
  auto bandwidth = [](const std::string& csv_path) {
    std::ifstream in(csv_path);
    for (std::string line; std::getline(in, line);)
      if (line.rfind("nand_stream_read_bandwidth_bytes_per_s,", 0) == 0) return std::stod(line.substr(39));
    return 0.0;
  };
  const double s = bandwidth(seq) / 1e9, p = bandwidth(pipe) / 1e9;
  // MemLLM: about 11 GB/s with tR exposed, about 19 GB/s pipelined; this short
  // stream includes pipeline fill and drain, so only a loose band is checked here
  // (tests/models/nand checks the steady state within 15 %).
  EXPECT_GT(s, 9.0);
  EXPECT_LT(s, 12.7);
  EXPECT_GT(p, 16.0);
  EXPECT_LT(p, 21.9);
}

TEST(RunCli, WaveformIsValidAndWindowed) {
  const std::string full = out_path("full.vcd"), part = out_path("part.vcd");
  ASSERT_EQ(run_cli(kDemo + " --vcd " + full).exit_code, 0);
  ASSERT_EQ(run_cli(kDemo + " --vcd " + part + " --vcd-window 0us:50us --vcd-filter '*.ch0.*'").exit_code, 0);
  ispsim::testing::expect_vcd_valid(full);
  ispsim::testing::expect_vcd_valid(part);
  EXPECT_LT(fs::file_size(part), fs::file_size(full));
  const std::string text = ispsim::testing::read_text(part);
  EXPECT_EQ(text.find("ch1"), std::string::npos);
  EXPECT_NE(text.find("ch0"), std::string::npos);
}

TEST(RunCli, BadInputsExitTwoAndLeaveNoOutput) {
  const std::string stats = out_path("stats.json");
  const std::string truncated = out_path("truncated.trace");
  {
    const std::string bytes = ispsim::testing::read_text(std::string(ISPSIM_SOURCE_DIR) + "/traces/samples/nand_stream.trace");
    std::ofstream(truncated, std::ios::binary) << bytes.substr(0, bytes.size() - 7);
  }
  expect_bad("run --platform nand_stream --trace " + truncated + " --stats " + stats, "truncated.trace", stats);
  expect_bad(kDemo + " --set nand.t_read_us=-1 --stats " + stats, "t_read_us", stats);
  expect_bad(kDemo + " --set nand.channels=0 --stats " + stats, "channels", stats);
  expect_bad(kDemo + " --stats " + out_path("stats.txt"), "stats.txt", out_path("stats.txt"));
  expect_bad(kDemo + " --vcd " + out_path("w.vcd") + " --vcd-window 5us:1us", "--vcd-window", out_path("w.vcd"));
  expect_bad(kDemo + " --vcd " + out_path("w.vcd") + " --vcd-window 5parsecs:", "--vcd-window", out_path("w.vcd"));
  expect_bad("run --platform no_such_platform --trace traces/samples/nand_stream.trace", "no_such_platform", stats);
  expect_bad("run --platform nand_stream --trace " + out_path("missing.trace"), "missing.trace", stats);
  expect_bad("run --trace traces/samples/nand_stream.trace", "platform", stats);
  // The NAND stream system's consumer is the Elastic-SIMD's fixed page time: an
  // unknown accelerator lists the known ones, a known other one is not modelled.
  expect_bad(kDemo + " --set modules.isp_accelerator=tensor_core --stats " + stats,
             "(known: elastic_no_filter, elastic_simd, systolic_pair)", stats);
  expect_bad(kDemo + " --set modules.isp_accelerator=systolic_pair --stats " + stats, "is not modelled", stats);
  // A valid trace of another program than the platform runs.
  expect_bad("run --platform nand_stream --trace traces/samples/blend_toy.trace --stats " + stats,
             "has no MICROBENCHMARK program", stats);
  const std::string empty = out_path("empty.trace");
  std::ofstream(empty, std::ios::binary).close();
  expect_bad("run --platform nand_stream --trace " + empty + " --stats " + stats, "empty file", stats);
  expect_bad("run --platform nand_stream --trace traces --stats " + stats, "is a directory", stats);
}

TEST(RunCli, OutputIntoADirectoryExitsTwoAndLeavesItUntouched) {
  const std::pair<std::string, std::string> outputs[] = {{"--stats", "dir.json"}, {"--vcd", "dir.vcd"}};
  for (const auto& [option, name] : outputs) {
    const fs::path dir = scratch_dir() / name;
    fs::create_directories(dir);
    const auto r = run_cli(kDemo + " " + option + " " + dir.string());
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err_lines(), 1) << r.err;
    EXPECT_NE(r.err.find(dir.string() + ": is a directory, not an output file"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "") << "refused before simulating";
    EXPECT_TRUE(fs::is_directory(dir));
    EXPECT_TRUE(fs::is_empty(dir));
    for (const auto& entry : fs::directory_iterator(scratch_dir()))
      EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
  }
}

// modules.isp_accelerator on the LLM-inference system: every ISP platform runs
// each accelerator; an unknown name, a platform without ISP and an ISP
// parameter the chosen accelerator would ignore are bad input.
TEST(RunCli, IspAcceleratorIsHonouredOrRejected) {
  const std::string blend = " --trace traces/samples/blend_small.trace --format csv";
  std::string latency_by_accelerator;
  for (const char* accelerator : {"elastic_simd", "elastic_no_filter", "systolic_pair"}) {
    const auto r = run_cli(std::string("run --platform memllm --set modules.isp_accelerator=") + accelerator + blend);
    ASSERT_EQ(r.exit_code, 0) << accelerator << "\n" << r.err;
    latency_by_accelerator += r.out.substr(r.out.find('\n') + 1);
  }
  // The default is elastic_simd; the three results differ (the selection is not a silent no-op).
  EXPECT_EQ(run_cli("run --platform memllm" + blend).out,
            run_cli("run --platform memllm --set modules.isp_accelerator=elastic_simd" + blend).out);
  const auto first = latency_by_accelerator.find('\n');
  const auto second = latency_by_accelerator.find('\n', first + 1);
  EXPECT_NE(latency_by_accelerator.substr(0, first), latency_by_accelerator.substr(first + 1, second - first - 1));
  EXPECT_NE(latency_by_accelerator.substr(first + 1, second - first - 1), latency_by_accelerator.substr(second + 1));

  const std::string stats = out_path("isp.csv");
  expect_bad("run --platform memllm --set modules.isp_accelerator=tensor_core --stats " + stats + blend,
             "modules.isp_accelerator = 'tensor_core' is no ISP accelerator (known: elastic_no_filter, elastic_simd, "
             "systolic_pair)",
             stats);
  expect_bad("run --platform memllm_base --set modules.isp_accelerator=Elastic_SIMD --stats " + stats + blend,
             "known: elastic_no_filter, elastic_simd, systolic_pair", stats);
  expect_bad("run --platform gpu_fullcompute --set modules.isp_accelerator=systolic_pair --stats " + stats + blend,
             "has no ISP accelerator", stats);
  expect_bad("run --platform aif --set modules.isp_accelerator=elastic_simd --stats " + stats + blend,
             "has no ISP accelerator", stats);
  expect_bad("run --platform memllm --set isp.systolic_pair.simd_lanes=32 --stats " + stats + blend,
             "isp.systolic_pair.simd_lanes is set (--set), but the ISP accelerator 'elastic_simd' does not read it",
             stats);
  expect_bad("run --platform memllm --set modules.isp_accelerator=systolic_pair --set isp.pes=64 --stats " + stats +
                 blend,
             "isp.pes is set (--set), but the ISP accelerator 'systolic_pair' does not read it", stats);
  // Set in a platform file of a system without ISP (GPU baseline, paper 1's CIM system).
  for (const char* base : {"gpu_precompute", "b1"}) {
    const std::string file = out_path(std::string(base) + "_with_isp.textproto");
    std::ofstream(file) << ispsim::testing::read_text(std::string(ISPSIM_SOURCE_DIR) + "/platforms/" + base +
                                                      ".textproto")
                        << "\nmodules { isp_accelerator: \"elastic_simd\" }\n";
    expect_bad("run --platform " + file + " --stats " + stats + blend, "is set (file)", stats);
    fs::remove(file);
  }
}

// A parameter group the platform's system does not assemble is refused from the
// platform file as from --set. AiF has no ISP, but its in-flash GEMV charges
// its MACs at isp.mac_pj: that one setting is honoured, the rest of isp refused.
TEST(RunCli, SettingsThePlatformWouldIgnoreAreRefusedFromItsFileToo) {
  const std::string blend = " --trace traces/samples/blend_small.trace --format csv";
  const std::string stats = out_path("ignored.csv");
  const std::string file = out_path("gpu_with_isp.textproto");
  std::ofstream(file) << ispsim::testing::read_text(std::string(ISPSIM_SOURCE_DIR) +
                                                    "/platforms/gpu_fullcompute.textproto")
                      << "\nisp { pes: 64 }\n";
  expect_bad("run --platform " + file + " --stats " + stats + blend,
             file + ": platform 'GPU-FullCompute' (FULL_PREFILL) has no isp in its system, so isp.pes would be "
                    "ignored",
             stats);
  fs::remove(file);
  expect_bad("run --platform gpu_fullcompute --set isp.pes=64 --stats " + stats + blend, "--set isp.pes", stats);

  const auto by_default = run_cli("run --platform aif" + blend);
  const auto costlier_macs = run_cli("run --platform aif --set isp.mac_pj=1000" + blend);
  ASSERT_EQ(by_default.exit_code, 0) << by_default.err;
  ASSERT_EQ(costlier_macs.exit_code, 0) << costlier_macs.err;
  EXPECT_NE(by_default.out, costlier_macs.out);  // the in-flash GEMV's energy
  expect_bad("run --platform aif --set isp.pes=64 --stats " + stats + blend, "--set isp.pes", stats);
}

// Time and busy time per phase (tools/baselines/bottleneck.py reads them): the
// phases' times add up to the latency, and the host GPU's busy time over the phases to
// its total (all GPU work is inside ops, so none falls outside a phase).
TEST(RunCli, PhaseBusyTimesAddUpToTheRun) {
  const std::string stats = out_path("phase_busy.csv");
  const auto r = run_cli("run --platform memllm_base --trace traces/samples/blend_small.trace --stats " + stats);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(stats);
  std::string line;
  std::map<std::string, double> value;
  while (std::getline(in, line)) {
    const size_t a = line.find(','), b = line.find(',', a + 1);
    if (a == std::string::npos || b == std::string::npos || line.rfind("name,", 0) == 0) continue;
    value[line.substr(0, a)] = std::stod(line.substr(a + 1, b - a - 1));
  }
  const auto ends_with = [](const std::string& name, const std::string& suffix) {
    return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  double elapsed = 0, gpu = 0;
  int phases = 0;
  for (const auto& [name, v] : value) {
    if (name.rfind("system.run.phase.", 0) == 0 && ends_with(name, ".time")) {
      elapsed += v;
      ++phases;
    }
    if (name.rfind("system.run.phase_busy.", 0) == 0 && ends_with(name, ".host_gpu")) gpu += v;
  }
  EXPECT_GE(phases, 3);  // HKVD identification, recomputation, query prefill, decode
  EXPECT_NEAR(elapsed, value.at("system.run.latency"), 1e-6 * value.at("system.run.latency"));
  EXPECT_NEAR(gpu, value.at("system.gpu.stream.busy_time"), 1e-6 * value.at("system.gpu.stream.busy_time"));
}

// Out of memory is exit 3 for paper 1's decode systems as for the others: B1's
// DRAM cannot hold Llama-3.1-8B's FP16 KV at 1M tokens; B2's compressed KV fits.
TEST(RunCli, ACimPlatformOutOfMemoryExitsThree) {
  const std::string trace = out_path("huge_decode.trace");
  ASSERT_EQ(run_cli("trace gen --decode --shape Llama-3.1-8B --context-tokens 1048576 --steps 1 --out " + trace).exit_code,
            0);
  const auto b1 = run_cli("run --platform b1 --trace " + trace);
  EXPECT_EQ(b1.exit_code, 3) << b1.err;
  EXPECT_NE(b1.out.find("OOM"), std::string::npos) << b1.out;
  EXPECT_EQ(run_cli("run --platform b2 --trace " + trace).exit_code, 0);
}

namespace {

const std::string kBlend = " --trace traces/samples/blend_small.trace";

// `text` with the first `count` occurrences of `from` replaced by `to`.
std::string replaced(std::string text, const std::string& from, const std::string& to, int count) {
  for (size_t at = 0; count-- > 0;) {
    at = text.find(from, at);
    EXPECT_NE(at, std::string::npos) << from;
    if (at == std::string::npos) break;
    text.replace(at, from.size(), to);
  }
  return text;
}

}  // namespace

// A result file alone is enough to rerun it: the configuration it records
// (--set applied) rebuilds the platform, the trace is checked by its SHA-1,
// and every metric comes out identical.
TEST(RunCli, AResultFileAloneRerunsItExactly) {
  const auto r = run_cli("run --platform memllm --set nand.t_read_us=40 --format json" + kBlend);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string result = out_path("r.json");
  std::ofstream(result) << r.out;
  const auto again = run_cli("rerun " + result);
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out.rfind("MemLLM: reproduced (", 0), 0u) << again.out;

  // The --set lives in the recorded settings and configuration: another value
  // in both gives other numbers (exit 1); in the configuration only, settings
  // that no longer resolve to it (exit 2).
  const std::string changed = out_path("changed.json"), inconsistent = out_path("inconsistent.json");
  std::ofstream(changed) << replaced(r.out, "t_read_us: 40", "t_read_us: 20", 2);
  const auto differs = run_cli("rerun " + changed);
  EXPECT_EQ(differs.exit_code, 1) << differs.err;
  EXPECT_NE(differs.out.find("MemLLM: DIFFERS: latency_s was "), std::string::npos) << differs.out;
  std::ofstream(inconsistent) << replaced(r.out, "t_read_us: 40", "t_read_us: 20", 1);
  const auto refused = run_cli("rerun " + inconsistent);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("resolves the settings differently"), std::string::npos) << refused.err;

  // Another trace is refused before anything runs.
  const auto other = run_cli("rerun " + result + " --trace traces/samples/blend_toy.trace");
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_NE(other.err.find("differs from the result's trace"), std::string::npos) << other.err;
  EXPECT_EQ(run_cli("rerun " + out_path("missing.json")).exit_code, 2);
}

// Every machine output says how it was made: version, command line, trace hash, configuration.
TEST(RunCli, ResultsCarryTheirProvenance) {
  const std::string stats = out_path("s.json");
  const auto r = run_cli("run --platform gpu_precompute --format json --stats " + stats + kBlend);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto version = run_cli("--version");
  ASSERT_EQ(version.exit_code, 0);
  for (const std::string& text : {r.out, ispsim::testing::read_text(stats)}) {
    const boost::json::value v = boost::json::parse(text);
    EXPECT_EQ(v.at("schema_version").as_int64(), 1);
    const auto& p = v.at("provenance");
    EXPECT_EQ("ispsim " + std::string(p.at("ispsim_version").as_string()) + "\n", version.out);
    EXPECT_EQ(p.at("command_line").as_string(),
              "ispsim run --platform gpu_precompute --format json --stats " + stats + kBlend);
    EXPECT_EQ(p.at("trace").as_string(), "traces/samples/blend_small.trace");
    EXPECT_EQ(p.at("trace_sha1").as_string().size(), 40u);
  }
  EXPECT_NE(ispsim::testing::read_text(stats).find("\"system\": {"), std::string::npos);  // the statistics follow
  const auto csv = run_cli("run --platform gpu_precompute --format csv" + kBlend);
  EXPECT_NE(csv.out.find(",schema_version,ispsim_version,trace_sha1,trace_seed,configuration_sha1\n"),
            std::string::npos)
      << csv.out;
}

TEST(RunCli, DescribeMetricsListsNameUnitAndMeaning) {
  const auto text = run_cli("describe metrics");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(text.out.rfind("latency_s ", 0), 0u) << text.out;
  const auto json = run_cli("describe metrics --format json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const boost::json::value v = boost::json::parse(json.out);
  EXPECT_EQ(v.at("metrics").at(0).at("unit").as_string(), "s");
  EXPECT_EQ(run_cli("describe metrics --format xml").exit_code, 2);
  EXPECT_EQ(run_cli("describe memllm --format json").exit_code, 2);
}
