// End-to-end invariants of the LLM-inference platforms, through the CLI (every
// simulation is its own process): bytes read from NAND are bytes the ISP
// consumed, every op completes once, Fused reads the KV once per layer where
// Base reads it twice, MemLLM's PCIe traffic does not carry the context's KV,
// results are deterministic, and bad input fails with one line.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <filesystem>

#include <map>
#include <regex>
#include <sstream>

#include "platforms/systems/metrics.h"
#include "tests/support/cli.h"
#include "tests/support/vcd_check.h"

namespace ispsim::testing {
namespace {

// SmolLM2-135M: 30 layers, 3 KV heads of dim 64, FP16; a 16 KB page holds 64
// tokens of one KV head (16384 / (2 * 64 * 2)); 768 B of K and V per token.
constexpr uint64_t kLayers = 30, kKvHeads = 3, kTileTokens = 64, kPageBytes = 16384, kBytesPerToken = 768;

std::string gen_trace(const std::string& name, const std::string& options) {
  const std::string path = (scratch_dir() / name).string();
  const CliResult r = run_cli("trace gen --shape SmolLM2-135M --dataset hpt --docs 2 --query-tokens 8 " + options +
                              " --out " + shell_quote(path));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return path;
}

// name -> value of a statistics CSV written by `ispsim run --stats` (SI units; a
// statistic that a metric reads under the metric's name, e.g. nand_read_bytes).
std::map<std::string, double> run_stats(const std::string& platform, const std::string& trace,
                                        const std::string& sets = "") {
  const std::string csv = (scratch_dir() / (platform + ".csv")).string();
  const CliResult r =
      run_cli("run --platform " + platform + " --trace " + shell_quote(trace) + " --stats " + shell_quote(csv) + sets);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, double> stats = read_stats_csv(csv);
  EXPECT_GT(stats.count("nand_read_bytes"), 0u) << csv << " lacks the SSD's statistics";
  return stats;
}

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

TEST(CompareCli, NandBytesReadAreBytesConsumedAndEveryOpCompletesOnce) {
  const std::string trace = gen_trace("t.trace", "--context-tokens 256 --answer-tokens 2");
  const CliResult stats = run_cli("trace stats " + shell_quote(trace));
  for (const char* platform : {"memllm_base", "memllm_fused", "memllm_perch", "memllm", "gpu_precompute"}) {
    for (const char* model : {"PAGE_ACCURATE", "AGGREGATED"}) {
      SCOPED_TRACE(std::string(platform) + " " + model);
      auto s = run_stats(platform, trace, std::string(" --set ssd.stream_model=") + model);
      EXPECT_EQ(s["system.ssd.attention.bytes_read"], s["system.ssd.attention.bytes_consumed"]);
      EXPECT_EQ(s["nand_read_bytes"],
                s["system.ssd.attention.bytes_read"] + s["system.ssd.host_read_pages"] * kPageBytes);
      // The page-accurate reader's own counter sees only streams with page events.
      if (std::string(model) == "PAGE_ACCURATE") {
        EXPECT_EQ(s["system.ssd.attention.reader.bytes_delivered"], s["system.ssd.attention.bytes_read"]);
      }
      // system.run.ops_completed counts completions; the runtime throws on a second one.
      const std::string program = std::string(platform) == "memllm_base" || std::string(platform) == "gpu_precompute"
                                      ? "PRECOMPUTED_BLEND: "
                                      : "PRECOMPUTED_BLEND_FUSED: ";
      const size_t at = stats.out.find("\n" + program);
      ASSERT_NE(at, std::string::npos);
      EXPECT_EQ(s["system.run.ops_completed"], std::stod(stats.out.substr(at + 1 + program.size())));
    }
  }
}

// No decode (answer 0): Fused reads each layer's precomputed pages once
// (layers 1..L-1); Base reads them twice and, in the query pass, the pages of
// the recomputed HKVD entries. Layer 1's stored KV is read once more by the host
// to find the HKVD tokens.
TEST(CompareCli, FusedReadsTheKvOncePerLayerWhereBaseReadsItTwice) {
  const uint64_t context = 2 * 256;
  // H = 77 spans two tiles, H = 64 exactly one (round(ratio * 512)).
  for (const auto& [ratio, hkvd] : std::vector<std::pair<std::string, uint64_t>>{{"0.15", 77}, {"0.125", 64}}) {
    SCOPED_TRACE(ratio);
    const std::string trace = gen_trace("t" + ratio + ".trace", "--context-tokens 256 --answer-tokens 0 --ratio " + ratio);
    const uint64_t pages_per_layer = ceil_div(context, kTileTokens) * kKvHeads;
    const uint64_t hkvd_pages = ceil_div(hkvd, kTileTokens) * kKvHeads;
    auto base = run_stats("memllm_base", trace);
    auto fused = run_stats("memllm_fused", trace);
    EXPECT_EQ(fused["system.ssd.attention.pages_read"], (kLayers - 1) * pages_per_layer);
    EXPECT_EQ(base["system.ssd.attention.pages_read"], (kLayers - 1) * (2 * pages_per_layer + hkvd_pages));
    EXPECT_EQ(fused["system.ssd.host_read_pages"], pages_per_layer);
    EXPECT_EQ(base["system.ssd.host_read_pages"], pages_per_layer);
  }
}

// With the HKVD count held at 77 tokens, a 4x longer context changes MemLLM's
// PCIe traffic only by one layer of KV each way: the host reads layer 1's stored
// KV to find the HKVD tokens, and writes the fresh layer-0 KV of every token
// (layer 0 is recomputed in full); plus longer masks and the conventional NVMe
// commands of those two transfers. Q_fused and O_final do not change.
// GPU-PreCompute moves the context KV of every layer over PCIe.
TEST(CompareCli, MemLlmPcieTrafficDoesNotCarryTheContext) {
  const std::string short_trace = gen_trace("short.trace", "--context-tokens 256 --answer-tokens 2 --ratio 0.15");
  const std::string long_trace = gen_trace("long.trace", "--context-tokens 1024 --answer-tokens 2 --ratio 0.0376");
  auto s = run_stats("memllm", short_trace);
  auto l = run_stats("memllm", long_trace);
  const uint64_t extra_tokens = 2 * (1024 - 256);
  auto growth = [&](const std::string& name) { return l["system.pcie." + name] - s["system.pcie." + name]; };
  EXPECT_EQ(growth("host_to_device.q_fused_bytes"), 0);
  EXPECT_EQ(growth("device_to_host.attention_output_bytes"), 0);
  EXPECT_EQ(growth("device_to_host.kv_read_bytes"), extra_tokens * kBytesPerToken);
  EXPECT_EQ(growth("host_to_device.kv_write_bytes"), extra_tokens * kBytesPerToken);
  // One mask per masked command: the fused passes of layers 1..L-1 and the
  // decode steps of those layers (layer 0 has no precomputed KV left).
  const uint64_t masked_commands = (kLayers - 1) * (1 + 2);
  EXPECT_EQ(growth("host_to_device.mask_bytes"), masked_commands * (extra_tokens / 8));
  const double kv_bytes_of_all_layers = kLayers * extra_tokens * kBytesPerToken;
  EXPECT_LT(growth("host_to_device.bytes") + growth("device_to_host.bytes"), 0.1 * kv_bytes_of_all_layers);
  auto gs = run_stats("gpu_precompute", short_trace);
  auto gl = run_stats("gpu_precompute", long_trace);
  EXPECT_GE(gl["system.pcie.device_to_host.kv_read_bytes"] - gs["system.pcie.device_to_host.kv_read_bytes"],
            (kLayers - 1) * extra_tokens * kBytesPerToken);
}

TEST(CompareCli, TheSameTraceGivesTheSameBytes) {
  const std::string trace = gen_trace("t.trace", "--context-tokens 128 --answer-tokens 2");
  const std::string a = (scratch_dir() / "a.json").string(), b = (scratch_dir() / "b.json").string();
  const CliResult ra = run_cli("compare --jobs 2 --trace " + shell_quote(trace) + " --json " + shell_quote(a));
  const CliResult rb = run_cli("compare --jobs 1 --trace " + shell_quote(trace) + " --json " + shell_quote(b));
  ASSERT_EQ(ra.exit_code, 0) << ra.err;
  ASSERT_EQ(rb.exit_code, 0) << rb.err;
  EXPECT_EQ(ra.out, rb.out);
  // The same but for the command lines in the provenance.
  const auto without_command = [](const std::string& path) {
    return std::regex_replace(read_text(path), std::regex("\"command_line\": \"[^\"]*\""), "");
  };
  EXPECT_NE(without_command(a), read_text(a));
  EXPECT_EQ(without_command(a), without_command(b));
  for (const char* name : {"GPU-FullCompute", "GPU-PreCompute", "MemLLM-Base", "MemLLM-Fused", "MemLLM-PerCh", "MemLLM"})
    EXPECT_NE(ra.out.find(std::string("\n") + name + " "), std::string::npos) << name;
  // The default text table fits 120 columns on the reference platforms ("×" is one column).
  std::istringstream table(ra.out);
  for (std::string line; std::getline(table, line);) {
    size_t width = 0;
    for (unsigned char c : line) width += (c & 0xC0) != 0x80;
    EXPECT_LE(width, 120u) << line;
  }
  // Statistics of one platform, twice.
  const std::string s1 = (scratch_dir() / "s1.json").string(), s2 = (scratch_dir() / "s2.json").string();
  ASSERT_EQ(run_cli("run --platform memllm --trace " + shell_quote(trace) + " --stats " + shell_quote(s1)).exit_code, 0);
  ASSERT_EQ(run_cli("run --platform memllm --trace " + shell_quote(trace) + " --stats " + shell_quote(s2)).exit_code, 0);
  EXPECT_EQ(without_command(s1), without_command(s2));
}

// The GPU baselines' SSD is a conventional one: no ISP or Flash-Coordinator
// energy; MemLLM's has both.
TEST(CompareCli, OnlyComputationalSsdsChargeIspEnergy) {
  const std::string trace = gen_trace("t.trace", "--context-tokens 128 --answer-tokens 1");
  const CliResult gpu = run_cli("run --platform gpu_precompute --format json --trace " + shell_quote(trace));
  const CliResult memllm = run_cli("run --platform memllm --format json --trace " + shell_quote(trace));
  ASSERT_EQ(gpu.exit_code, 0) << gpu.err;
  ASSERT_EQ(memllm.exit_code, 0) << memllm.err;
  EXPECT_EQ(gpu.out.find("system.ssd.attention"), std::string::npos) << gpu.out;
  EXPECT_NE(gpu.out.find("system.ssd.nand"), std::string::npos) << gpu.out;
  EXPECT_NE(memllm.out.find("system.ssd.attention.ch0"), std::string::npos) << memllm.out;
  EXPECT_NE(memllm.out.find("system.ssd.attention.reduction"), std::string::npos) << memllm.out;
}

TEST(CompareCli, WeightsBeyondTheHostBudgetAreReportedAsOutOfMemory) {
  const std::string trace = gen_trace("t.trace", "--context-tokens 128 --answer-tokens 1");
  const CliResult r = run_cli("compare --trace " + shell_quote(trace) + " --platforms gpu_precompute,memllm" +
                              " --set host.dram_capacity_bytes=100000000");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("OOM"), std::string::npos) << r.out;
}

uint64_t number_after(const std::string& text, const std::string& before) {
  const size_t at = text.find(before);
  EXPECT_NE(at, std::string::npos) << before << " not in: " << text;
  return at == std::string::npos ? 0 : std::stoull(text.substr(at + before.size()));
}

// AiF keeps the whole request's KV in GPU/host memory: weights + workspace + KV
// must fit the budget. One byte short, `run` prints OOM with the numbers and the
// parameters and exits 3; at the exact sum it runs. compare shows an OOM cell.
TEST(CompareCli, AifIsOutOfMemoryWhenTheKvDoesNotFitBesideWeightsAndWorkspace) {
  const std::string trace = gen_trace("t.trace", "--context-tokens 128 --answer-tokens 1");
  const std::string run = "run --platform aif --trace " + shell_quote(trace);
  const CliResult small = run_cli(run + " --set host.dram_capacity_bytes=1345000000");
  ASSERT_EQ(small.exit_code, 3) << small.out << small.err;
  EXPECT_NE(small.out.find("OOM"), std::string::npos) << small.out;
  EXPECT_NE(small.out.find("placement.kv_resident_in_host_memory"), std::string::npos) << small.out;
  EXPECT_NE(small.out.find("host.dram_capacity_bytes"), std::string::npos) << small.out;
  const uint64_t kv = number_after(small.out, "the request's KV of ");
  const uint64_t weights = number_after(small.out, "bytes (host.dram_capacity_bytes) after ");
  const uint64_t workspace = number_after(small.out, "bytes of weights and the ");
  // Every layer's context (256 tokens), query (8) and answer (1) at least.
  EXPECT_EQ(kv % (kLayers * kBytesPerToken), 0u);
  EXPECT_GE(kv / (kLayers * kBytesPerToken), 256u + 8 + 1);
  const uint64_t need = kv + weights + workspace;
  EXPECT_EQ(run_cli(run + " --set host.dram_capacity_bytes=" + std::to_string(need - 1)).exit_code, 3);
  const CliResult fits = run_cli(run + " --set host.dram_capacity_bytes=" + std::to_string(need));
  EXPECT_EQ(fits.exit_code, 0) << fits.out << fits.err;
  const CliResult json = run_cli(run + " --format json --set host.dram_capacity_bytes=" + std::to_string(need - 1));
  EXPECT_NE(json.out.find("\"status\": \"out_of_memory\""), std::string::npos) << json.out;

  const CliResult table = run_cli("compare --trace " + shell_quote(trace) +
                                  " --platforms gpu_precompute,aif --set host.dram_capacity_bytes=" +
                                  std::to_string(need - 1));
  ASSERT_EQ(table.exit_code, 0) << table.err;
  auto row_of = [&](const std::string& platform) {
    const size_t at = table.out.find("\n" + platform + " ");
    EXPECT_NE(at, std::string::npos) << table.out;
    return at == std::string::npos ? std::string() : table.out.substr(at + 1, table.out.find('\n', at + 1) - at - 1);
  };
  EXPECT_NE(row_of("AiF").find("OOM"), std::string::npos) << table.out;
  EXPECT_EQ(row_of("GPU-PreCompute").find("OOM"), std::string::npos) << table.out;  // it offloads its KV
}

TEST(CompareCli, BadInputGivesOneLineAndExitCode2) {
  const std::string trace = gen_trace("t.trace", "--context-tokens 128 --answer-tokens 1");
  struct Case {
    std::string args, expect;
  };
  const std::string csv_dir = (scratch_dir() / "no_such_dir" / "t.csv").string();
  for (const Case& c : std::vector<Case>{
           {"compare --trace traces/samples/nand_stream.trace", "has no FULL_PREFILL program"},
           {"compare --trace " + shell_quote(trace) + " --platforms memllm,nope", "nope"},
           {"compare --trace /nonexistent.trace", "/nonexistent.trace"},
           {"compare --trace " + shell_quote(trace) + " --format xml", "--format"},
           {"compare --trace " + shell_quote(trace) + " --columns latency,watts", "'watts' (known: program, latency"},
           {"compare --trace " + shell_quote(trace) + " --platforms b1 --columns latency", "--columns"},
           {"compare --trace " + shell_quote(trace) + " --baseline Nobody", "--baseline"},
           {"compare --trace " + shell_quote(trace) + " --csv " + shell_quote(csv_dir), "no_such_dir"},
           {"compare --trace " + shell_quote(trace) + " --set ssd.organization=SIDEWAYS", "SIDEWAYS"},
           {"run --platform memllm --trace traces/samples/nand_stream.trace", "has no PRECOMPUTED_BLEND_FUSED program"},
       }) {
    SCOPED_TRACE(c.args);
    const CliResult r = run_cli(c.args);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err_lines(), 1) << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << r.err;
  }
}

// The events of a timeline file, parsed (so it is valid JSON).
boost::json::array timeline_events(const std::filesystem::path& path) {
  return boost::json::parse(read_text(path)).at("traceEvents").as_array();
}

TEST(CompareCli, TimelineHasOneTrackPerDevice) {
  const std::string trace = gen_trace("t.trace", "--context-tokens 128 --answer-tokens 1");
  const auto dir = scratch_dir() / "timelines";
  std::filesystem::create_directories(dir);
  const CliResult r = run_cli("compare --trace " + shell_quote(trace) + " --platforms gpu_precompute,memllm --timeline-dir " +
                              shell_quote(dir.string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string memllm = read_text(dir / "MemLLM.json");
  for (const char* track : {"host GPU", "SSD ISP attention", "NVMe fused-attention commands", "phases",
                            "system.ssd.attention.ch0", "system.ssd.attention.ch7"})
    EXPECT_NE(memllm.find(std::string("\"") + track + "\""), std::string::npos) << track;
  const std::string gpu = read_text(dir / "GPU-PreCompute.json");
  EXPECT_NE(gpu.find("\"SSD to host KV reads\""), std::string::npos);
  // One process per platform, named after it, with its own pid.
  const boost::json::array memllm_events = timeline_events(dir / "MemLLM.json");
  const boost::json::array gpu_events = timeline_events(dir / "GPU-PreCompute.json");
  EXPECT_EQ(memllm_events.at(0).at("args").at("name").as_string(), "MemLLM");
  EXPECT_EQ(gpu_events.at(0).at("args").at("name").as_string(), "GPU-PreCompute");
  EXPECT_NE(memllm_events.at(0).at("pid"), gpu_events.at(0).at("pid"));
}

// A KV read carries its layer and bytes (two documents of 128 tokens); the
// power counter of a phase is its energy over its time, as the JSON summary has
// them, and the summary's phase times are the timeline's phase spans.
TEST(CompareCli, TimelineSlicesCarryArgumentsAndPhasePowerIsACounter) {
  const std::string trace = gen_trace("t.trace", "--context-tokens 128 --answer-tokens 1");
  const auto dir = scratch_dir() / "timelines";
  std::filesystem::create_directories(dir);
  const CliResult r = run_cli("run --platform gpu_precompute --trace " + shell_quote(trace) +
                              " --format json --timeline " + shell_quote((dir / "g.json").string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const boost::json::value summary = boost::json::parse(r.out).at("runs").at(0);
  const boost::json::array events = timeline_events(dir / "g.json");
  std::map<std::string, double> phase_us;  // the "phases" track's spans, by phase
  std::vector<std::pair<double, std::string>> phase_starts;
  std::vector<std::pair<double, double>> power;  // ts (us), W
  bool kv_read = false, gpu_op = false;
  for (const auto& e : events) {
    const std::string ph(e.at("ph").as_string()), name(e.at("name").as_string());
    if (ph == "X" && e.at("cat") == "phase") {
      phase_us[name] += e.at("dur").to_number<double>();
      phase_starts.push_back({e.at("ts").to_number<double>(), name});
    }
    if (ph == "X" && name == "kv read L1") {
      EXPECT_EQ(e.at("args").at("layer").as_int64(), 1);
      EXPECT_EQ(e.at("args").at("bytes").as_int64(), static_cast<int64_t>(2 * 128 * kBytesPerToken));
      kv_read = true;
    }
    if (ph == "X" && e.as_object().contains("args") && e.at("args").as_object().contains("op")) gpu_op = true;
    if (ph == "C" && name == "power by phase (W)")
      power.push_back({e.at("ts").to_number<double>(), e.at("args").at("value").to_number<double>()});
  }
  EXPECT_TRUE(kv_read);
  EXPECT_TRUE(gpu_op);
  ASSERT_EQ(power.size(), phase_starts.size() + 1);
  for (size_t i = 0; i < phase_starts.size(); ++i) {
    const auto& [ts, phase] = phase_starts[i];
    const double watts =
        summary.at("metrics").at("energy_phase." + systems::metric_key(phase) + "_j").to_number<double>() / (phase_us[phase] * 1e-6);
    EXPECT_DOUBLE_EQ(power[i].first, ts) << phase;
    EXPECT_NEAR(power[i].second, watts, 1e-5 * watts) << phase;
    const double phase_s = summary.at("metrics").at("phase." + systems::metric_key(phase) + "_s").to_number<double>();
    EXPECT_NEAR(phase_s, phase_us[phase] * 1e-6, 1e-9 * phase_s) << phase;  // the same spans
  }
  EXPECT_EQ(power.back().second, 0.0);
  // Energy by component and by phase each add up to the run's energy.
  double by_component = 0, by_phase = 0;
  for (const auto& [name, v] : summary.at("metrics").as_object()) {
    const std::string metric(name);
    if (metric.rfind("energy.", 0) == 0) by_component += v.to_number<double>();
    if (metric.rfind("energy_phase.", 0) == 0) by_phase += v.to_number<double>();
  }
  const double energy_j = summary.at("metrics").at("energy_j").to_number<double>();
  EXPECT_NEAR(by_component, energy_j, 1e-9 * energy_j);
  EXPECT_NEAR(by_phase, energy_j, 1e-9 * energy_j);
}

TEST(CompareCli, RunWritesAValidWaveformOfEveryDevice) {
  const std::string trace = gen_trace("t.trace", "--context-tokens 128 --answer-tokens 1");
  const std::string vcd = (scratch_dir() / "memllm.vcd").string();
  const CliResult r = run_cli("run --platform memllm --trace " + shell_quote(trace) + " --vcd " + shell_quote(vcd) +
                              " --vcd-window 0us:2000us");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_vcd_valid(vcd);
  const std::string text = read_text(vcd);
  for (const char* scope : {"gpu", "pcie", "ssd", "attention", "reduction", "ch0", "die0"})
    EXPECT_NE(text.find(std::string("$scope module ") + scope + " $end"), std::string::npos) << scope;
  for (const char* signal : {" simd_mode ", " occupancy ", " state ", " busy ", " outstanding "})
    EXPECT_NE(text.find(signal), std::string::npos) << signal;
}

}  // namespace
}  // namespace ispsim::testing
