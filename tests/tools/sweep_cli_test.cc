// `ispsim sweep`: expansion, the results tables, statuses (ok, oom, error),
// resuming, shards and their collection, the Slurm script, and bad input. Every
// simulation is a short SmolLM2-135M request (2 documents of 64 tokens, 2 answer
// tokens), so the whole suite runs in seconds.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "tests/support/cli.h"

namespace ispsim::testing {
namespace {
namespace fs = std::filesystem;
namespace json = boost::json;

const char* kTraceAxes = R"(
axis { name: "trace.model" values: "SmolLM2-135M" }
axis { name: "trace.dataset" values: "hpt" }
axis { name: "trace.docs" values: "2" }
axis { name: "trace.context_tokens" values: "64" }
axis { name: "trace.query_tokens" values: "8" }
axis { name: "trace.answer_tokens" values: "2" }
)";

// 2 platforms x 2 ratios x 2 DRAM budgets (100 MB does not hold the weights: OOM).
std::string small_spec() {
  return std::string("name: \"small\"\n") + kTraceAxes + R"(
axis { name: "platform" values: "gpu_fullcompute" values: "memllm" }
axis { name: "trace.ratio" range { from: 0.1 to: 0.2 step: 0.1 } }
axis { name: "host.dram_capacity_bytes" values: "8589934592" values: "100000000" }
metric: "latency_s"
metric: "energy_j"
)";
}

std::string write_spec(const std::string& name, const std::string& text) {
  const std::string path = (scratch_dir() / name).string();
  std::ofstream(path) << text;
  return path;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// A fresh output folder: the scratch directory is named by the process id, which a
// later test process can reuse, so a folder left by an earlier run is removed.
std::string out_dir(const std::string& name) {
  const fs::path dir = scratch_dir() / name;
  fs::remove_all(dir);
  return dir.string();
}

TEST(SweepCli, ExpandsTheProductAndWritesOneRowPerRunWithStatus) {
  const std::string spec = write_spec("s.txtpb", small_spec());
  const std::string out = out_dir("out");
  const CliResult r = run_cli("sweep " + shell_quote(spec) + " -j 2 --out " + shell_quote(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");  // quiet when not on a terminal
  const std::vector<std::string> csv = lines(read_text(out + "/results.csv"));
  ASSERT_EQ(csv.size(), 1u + 8u);
  EXPECT_EQ(csv[0],
            "id,trace.model,trace.dataset,trace.docs,trace.context_tokens,trace.query_tokens,trace.answer_tokens,"
            "platform,trace.ratio,host.dram_capacity_bytes,system,status,message,latency_s,energy_j,version,trace_sha1,configuration_sha1");
  // The last axis varies fastest.
  EXPECT_NE(csv[1].find(",gpu_fullcompute,0.1,8589934592,GPU-FullCompute,ok,,"), std::string::npos) << csv[1];
  EXPECT_NE(csv[2].find(",gpu_fullcompute,0.1,100000000,GPU-FullCompute,oom,"), std::string::npos) << csv[2];
  EXPECT_NE(csv[2].find("exceed the host DRAM budget"), std::string::npos) << csv[2];
  EXPECT_NE(csv[8].find(",memllm,0.2,100000000,MemLLM,oom,"), std::string::npos) << csv[8];

  const json::object results = json::parse(read_text(out + "/results.json")).as_object();
  const json::array& runs = results.at("runs").as_array();
  ASSERT_EQ(runs.size(), 8u);
  std::set<std::string> ids;
  for (const json::value& v : runs) {
    const json::object& run = v.as_object();
    const std::string id = json::value_to<std::string>(run.at("id"));
    EXPECT_TRUE(std::regex_match(id, std::regex("[0-9a-f]{16}"))) << id;
    ids.insert(id);
    const std::string status = json::value_to<std::string>(run.at("status"));
    const bool oom = json::value_to<std::string>(run.at("inputs").at("host.dram_capacity_bytes")) == "100000000";
    EXPECT_EQ(status, oom ? "oom" : "ok");
    // An OOM run has no numbers; an ok run has the two kept metrics and no others.
    EXPECT_EQ(run.at("metrics").as_object().size(), oom ? 0u : 2u);
    if (!oom) { EXPECT_GT(run.at("metrics").at("latency_s").to_number<double>(), 0.0); }
    EXPECT_FALSE(json::value_to<std::string>(run.at("version")).empty());
  }
  EXPECT_EQ(ids.size(), 8u);  // different inputs, different identities
  // The ratio changes the blend trace and so MemLLM's result (GPU-FullCompute prefills fully: rows 0 and 2 agree).
  EXPECT_NE(runs[4].at("metrics").at("latency_s"), runs[6].at("metrics").at("latency_s"));
}

// Run id -> its row of results.json, serialized.
std::map<std::string, std::string> rows_by_id(const std::string& results_json) {
  std::map<std::string, std::string> rows;
  const json::value results = json::parse(results_json);
  for (const json::value& v : results.at("runs").as_array())
    rows[json::value_to<std::string>(v.at("id"))] = json::serialize(v);
  return rows;
}

TEST(SweepCli, RerunSkipsFinishedRunsAndRedoesOnlyMissingOnes) {
  const std::string spec = write_spec("s.txtpb", small_spec());
  const std::string out = out_dir("out");
  ASSERT_EQ(run_cli("sweep " + shell_quote(spec) + " -j 2 --out " + shell_quote(out)).exit_code, 0);
  const auto first = rows_by_id(read_text(out + "/results.json"));

  // A finished run is not simulated again: a doctored result survives the rerun,
  // while a deleted one is simulated again (the same numbers: deterministic).
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(out + "/runs")) files.push_back(e.path());
  ASSERT_EQ(files.size(), 8u);
  std::sort(files.begin(), files.end());
  std::string doctored_id;
  for (const fs::path& f : files) {
    const std::string text = read_text(f);
    if (text.find("\"status\":\"ok\"") == std::string::npos) continue;
    std::ofstream(f) << std::regex_replace(text, std::regex("\"latency_s\":\"[0-9.e+-]+\""), "\"latency_s\":\"12345.5\"");
    doctored_id = f.stem().string();
    break;
  }
  ASSERT_FALSE(doctored_id.empty());
  ASSERT_NE(files.back().stem().string(), doctored_id);
  fs::remove(files.back());
  const CliResult r = run_cli("sweep " + shell_quote(spec) + " -j 2 --out " + shell_quote(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(files.back()));
  const auto second = rows_by_id(read_text(out + "/results.json"));
  ASSERT_EQ(second.size(), first.size());
  for (const auto& [id, row] : first) {
    if (id == doctored_id)
      EXPECT_EQ(json::parse(second.at(id)).at("metrics").at("latency_s").to_number<double>(), 12345.5);
    else EXPECT_EQ(second.at(id), row);
  }
}

// A sweep's results.json, or one run file of it, alone reruns its runs exactly
// (`ispsim rerun`): each run records its settings, configuration and trace.
TEST(SweepCli, AResultsFileOrARunFileAloneRerunsItExactly) {
  const std::string spec = write_spec("rerun.txtpb", small_spec());
  const std::string out = out_dir("rerun");
  ASSERT_EQ(run_cli("sweep " + shell_quote(spec) + " -j 2 --out " + shell_quote(out)).exit_code, 0);
  CliResult r = run_cli("rerun " + shell_quote(out + "/results.json") + " -j 2");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> ran = lines(r.out);
  ASSERT_EQ(ran.size(), 8u) << r.out;
  for (const std::string& line : ran)  // ok runs keep 2 metrics, OOM runs none
    EXPECT_TRUE(std::regex_match(line, std::regex("[0-9a-f]{16} (GPU-FullCompute|MemLLM): reproduced \\([02] metrics "
                                                  "identical\\)")))
        << line;

  // One run file; doctored, it differs in the doctored metric only (exit 1).
  const std::string id = json::value_to<std::string>(
      json::parse(read_text(out + "/results.json")).at("runs").at(4).at("id"));  // MemLLM, 8 GiB: ok
  const std::string file = out + "/runs/" + id + ".json";
  r = run_cli("rerun " + shell_quote(file));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::regex_match(r.out, std::regex(id + " MemLLM: reproduced \\([0-9]+ metrics identical\\)\n")))
      << r.out;  // a run file keeps every metric
  const std::string text = read_text(file);
  std::ofstream(file) << std::regex_replace(text, std::regex("\"latency_s\":\"[0-9.e+-]+\""), "\"latency_s\":\"12345.5\"");
  r = run_cli("rerun " + shell_quote(file));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out.rfind(id + " MemLLM: DIFFERS: latency_s was 12345.5, now ", 0), 0u) << r.out;
  EXPECT_EQ(r.out.find("energy_j"), std::string::npos) << r.out;
  // Its runs read two traces (two ratios): --trace cannot stand for both.
  r = run_cli("rerun " + shell_quote(out + "/results.json") + " --trace traces/samples/blend_small.trace");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("read different traces"), std::string::npos) << r.err;
}

// The NAND stream microbenchmark's metrics come from its statistics; a sweep
// that keeps every metric reruns them all.
TEST(SweepCli, NandStreamSweepRerunsEveryMetric) {
  const std::string spec = write_spec("nand.txtpb", R"(name: "nand"
axis { name: "trace.file" values: "traces/samples/nand_stream.trace" }
axis { name: "platform" values: "nand_stream" }
axis { name: "stream.read_mode" values: "SEQUENTIAL" values: "PIPELINED" }
)");
  const std::string out = out_dir("nand");
  ASSERT_EQ(run_cli("sweep " + shell_quote(spec) + " --out " + shell_quote(out)).exit_code, 0);
  const CliResult r = run_cli("rerun " + shell_quote(out + "/results.json"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> ran = lines(r.out);
  ASSERT_EQ(ran.size(), 2u) << r.out;
  for (const std::string& line : ran)
    EXPECT_TRUE(std::regex_match(line, std::regex("[0-9a-f]{16} NAND-Stream: reproduced \\(3 metrics identical\\)")))
        << line;
}

TEST(SweepCli, ShardsCollectToTheSameResultsAsALocalRun) {
  const std::string spec = write_spec("s.txtpb", small_spec());
  const std::string local = out_dir("local"), sharded = out_dir("sharded");
  ASSERT_EQ(run_cli("sweep " + shell_quote(spec) + " -j 2 --out " + shell_quote(local)).exit_code, 0);
  // Shards are disjoint and cover the sweep.
  std::set<std::string> listed;
  size_t total = 0;
  for (int i = 0; i < 3; ++i) {
    const CliResult l = run_cli("sweep " + shell_quote(spec) + " --list --shard " + std::to_string(i) + "/3");
    ASSERT_EQ(l.exit_code, 0) << l.err;
    for (const std::string& line : lines(l.out)) {
      listed.insert(line.substr(0, 16));
      ++total;
    }
  }
  EXPECT_EQ(total, 8u);
  EXPECT_EQ(listed.size(), 8u);

  for (int i : {0, 2}) {
    const CliResult r = run_cli("sweep " + shell_quote(spec) + " --out " + shell_quote(sharded) + " --shard " +
                                std::to_string(i) + "/3");
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  // Shard 1 missing: collect names it and fails.
  CliResult c = run_cli("sweep " + shell_quote(spec) + " --out " + shell_quote(sharded) + " --collect");
  EXPECT_EQ(c.exit_code, 1);
  EXPECT_EQ(c.err, "ispsim sweep: collect: 1 of 3 shards missing (1): rerun each with --shard I/3\n");

  ASSERT_EQ(run_cli("sweep " + shell_quote(spec) + " --out " + shell_quote(sharded) + " --shard 1/3").exit_code, 0);
  c = run_cli("sweep " + shell_quote(spec) + " --out " + shell_quote(sharded) + " --collect");
  EXPECT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(read_text(sharded + "/results.csv"), read_text(local + "/results.csv"));
  // The same but for the command lines in the provenance.
  const auto without_command = [](const std::string& path) {
    return std::regex_replace(read_text(path), std::regex("\"command_line\": \"[^\"]*\""), "");
  };
  EXPECT_NE(without_command(local + "/results.json"), read_text(local + "/results.json"));
  EXPECT_EQ(without_command(sharded + "/results.json"), without_command(local + "/results.json"));
}

TEST(SweepCli, ListedPointsRunOnlyThoseRuns) {
  const std::string spec = write_spec("p.txtpb", std::string("name: \"points\"\n") + kTraceAxes + R"(
axis { name: "platform" values: "gpu_fullcompute" values: "memllm" }
axis { name: "nand.channels" values: "4" values: "8" }
point { set: "trace.model=SmolLM2-135M" set: "trace.dataset=hpt" set: "trace.docs=2" set: "trace.context_tokens=64"
        set: "trace.query_tokens=8" set: "trace.answer_tokens=2" set: "platform=memllm" set: "nand.channels=4" }
point { set: "trace.model=SmolLM2-135M" set: "trace.dataset=hpt" set: "trace.docs=2" set: "trace.context_tokens=64"
        set: "trace.query_tokens=8" set: "trace.answer_tokens=2" set: "platform=memllm" set: "nand.channels=16" }
)");
  const CliResult l = run_cli("sweep " + shell_quote(spec) + " --list");
  ASSERT_EQ(l.exit_code, 0) << l.err;
  const std::vector<std::string> runs = lines(l.out);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_NE(runs[0].find("platform=memllm  nand.channels=4"), std::string::npos) << runs[0];
  EXPECT_NE(runs[1].find("nand.channels=16"), std::string::npos) << runs[1];
  EXPECT_NE(runs[0].substr(0, 16), runs[1].substr(0, 16));
}

TEST(SweepCli, SlurmWritesAJobArrayOfShards) {
  const std::string spec = write_spec("s.txtpb", small_spec());
  const std::string out = out_dir("slurm");
  const CliResult r = run_cli("sweep " + shell_quote(spec) + " --out " + shell_quote(out) +
                              " --slurm --shards 3 -j 2 --sbatch=--partition=short");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, out + "/slurm/small.sbatch\n");
  const std::string script = read_text(out + "/slurm/small.sbatch");
  EXPECT_NE(script.find("#SBATCH --array=0-2\n"), std::string::npos) << script;
  EXPECT_NE(script.find("#SBATCH --cpus-per-task=2\n"), std::string::npos);
  EXPECT_NE(script.find("#SBATCH --partition=short\n"), std::string::npos);
  EXPECT_NE(script.find(" --shard \"${SLURM_ARRAY_TASK_ID}/3\" -j \"${SLURM_CPUS_PER_TASK:-1}\""), std::string::npos);
  EXPECT_NE(script.find("'" + spec + "'"), std::string::npos);
}

TEST(SweepCli, BadInputIsOneLineExitTwoAndNoResults) {
  const std::string out = out_dir("bad");
  struct Case {
    std::string spec, expected;
  };
  const std::vector<Case> cases = {
      {std::string("name: \"x\"\n") + kTraceAxes + "axis { name: \"platform\" values: \"memllm\" }\n"
           "axis { name: \"nand.no_such\" values: \"1\" }\n",
       "axis 'nand.no_such': unknown parameter 'nand.no_such'"},
      {std::string("name: \"x\"\n") + kTraceAxes + "axis { name: \"platform\" values: \"memllm\" }\n"
           "axis { name: \"nand.channels\" values: \"0\" }\n",
       "nand.channels"},
      {std::string("name: \"x\"\n") + kTraceAxes + "axis { name: \"platform\" values: \"no_such_platform\" }\n",
       "no_such_platform"},
      {std::string("name: \"x\"\nbogus: 1\n"), "bogus"},
      {std::string("name: \"x\"\n") + kTraceAxes, "needs an axis 'platform'"},
      {std::string("name: \"x\"\n") + kTraceAxes + "axis { name: \"platform\" values: \"memllm\" }\nmetric: \"speed\"\n",
       "unknown metric 'speed'"},
      {std::string("name: \"x\"\n") + kTraceAxes + "axis { name: \"platform\" values: \"memllm\" }\n"
           "axis { name: \"trace.ratio\" values: \"1.5\" }\n",
       "trace.ratio: 1.5 is not within 0..1"},
      {std::string("name: \"x\"\n") + kTraceAxes + "axis { name: \"platform\" values: \"memllm\" }\n"
           "point { set: \"platform=memllm\" }\n",
       "point 1: gives no value for axis 'trace.model'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.spec);
    const std::string spec = write_spec("bad.txtpb", c.spec);
    const CliResult r = run_cli("sweep " + shell_quote(spec) + " --out " + shell_quote(out));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err_lines(), 1) << r.err;
    EXPECT_NE(r.err.find(spec), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out));
  }
  const std::string spec = write_spec("s.txtpb", small_spec());
  for (const std::string& args : {std::string("--shard 3/3"), std::string("--shard x"), std::string("--submit"),
                                  std::string("--collect --shard 0/2")}) {
    const CliResult r = run_cli("sweep " + shell_quote(spec) + " --out " + shell_quote(out) + " " + args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(r.err_lines(), 1) << r.err;
  }
  EXPECT_FALSE(fs::exists(out));
}

TEST(ReproduceCli, ListsEveryExperimentAndWhatIsMissing) {
  const CliResult r = run_cli("reproduce memllm --list");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* expected : {"memllm-grid:", "figure speedup_by_dataset:", "figure ablation_ladder:",
                               "figure prefill_breakdown:", "figure pcie_traffic:", "figure power:",
                               "memllm-ratio:", "memllm-context:", "memllm-answer:", "memllm-channels:",
                               "memllm-dram:", "figure nand_bandwidth:", "missing: KV quantization"})
    EXPECT_NE(r.out.find(expected), std::string::npos) << expected << " not in:\n" << r.out;
  // A system without a platform file is listed as missing, not dropped silently.
  for (const char* system : {"instattention", "aif"}) {
    const bool present = fs::exists(std::string(ISPSIM_SOURCE_DIR) + "/platforms/" + system + ".textproto");
    EXPECT_EQ(r.out.find(std::string("missing: system ") + system) != std::string::npos, !present) << system;
  }
  // --full is hours of simulation; its plan is a dry run: every sweep expanded and counted.
  const CliResult full = run_cli("reproduce memllm --full --list");
  ASSERT_EQ(full.exit_code, 0) << full.err;
  size_t platforms = 0;
  for (const char* p : {"gpu_fullcompute", "gpu_precompute", "instattention", "aif", "memllm_base", "memllm_fused",
                        "memllm_perch", "memllm"})
    platforms += fs::exists(std::string(ISPSIM_SOURCE_DIR) + "/platforms/" + p + ".textproto");
  EXPECT_NE(full.out.find("6 models (" + std::to_string(platforms * 6 * 8) + " runs)"), std::string::npos) << full.out;
  EXPECT_NE(full.out.find("total: 7 sweeps, "), std::string::npos) << full.out;
  const CliResult cim = run_cli("reproduce cim --list");
  ASSERT_EQ(cim.exit_code, 0) << cim.err;
  EXPECT_NE(cim.out.find("missing: the engine's cumulative accuracy ablation"), std::string::npos) << cim.out;
  EXPECT_NE(cim.out.find("cim-decode: "), std::string::npos) << cim.out;
  EXPECT_NE(cim.out.find("(12 runs)"), std::string::npos) << cim.out;  // B1, B2, S1, S2 x 1K, 64K, 256K

  const CliResult bad = run_cli("reproduce nopaper");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "ispsim: error: ispsim reproduce: unknown paper 'nopaper' (memllm, cim or workloads)\n");
}

// Paper 1's decode systems run traces of the decode generator (trace.context_tokens
// is the whole KV cache there, trace.steps the decode steps); their rows carry the
// per-token metrics. A setting the platform or its generator would ignore is bad input.
TEST(SweepCli, DecodeSystemsRunTracesOfTheDecodeGenerator) {
  const std::string decode_axes = R"(
axis { name: "trace.model" values: "SmolLM2-135M" }
axis { name: "trace.steps" values: "4" }
axis { name: "trace.context_tokens" values: "316" }
)";
  const std::string spec = write_spec("decode.txtpb", "name: \"decode\"\n" + decode_axes +
                                                          "axis { name: \"platform\" values: \"b1\" values: \"s2\" }\n");
  const std::string out = out_dir("decode");
  const CliResult r = run_cli("sweep " + shell_quote(spec) + " -j 2 --out " + shell_quote(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json::array runs = json::parse(read_text(out + "/results.json")).at("runs").as_array();
  ASSERT_EQ(runs.size(), 2u);
  for (const json::value& run : runs) {
    EXPECT_EQ(json::value_to<std::string>(run.at("status")), "ok") << json::serialize(run);
    const json::object& m = run.at("metrics").as_object();
    for (const char* name : {"tbt_s", "tbt_eq4_s", "energy_per_token_j", "stage.weights_s",
                             "stage_energy.kv_read_attention_j", "stage_share.nonlinear"})
      EXPECT_TRUE(m.contains(name)) << name;
    EXPECT_NEAR(m.at("tbt_s").to_number<double>() * 4, m.at("latency_s").to_number<double>(), 1e-15);
    double shares = 0;
    for (const auto& kv : m)
      if (std::string(kv.key()).rfind("stage_share.", 0) == 0) shares += kv.value().to_number<double>();
    EXPECT_NEAR(shares, 1.0, 1e-8);  // the decode chain: stages add up to the time between tokens
  }
  // 316 tokens: 160 compressed, a window of 156 that reaches W + U = 160 at step 3: S2 compresses.
  EXPECT_GT(runs[1].at("metrics").at("stage.pursuit_s").to_number<double>(), 0.0);
  EXPECT_NE(fs::directory_iterator(out + "/traces"), fs::directory_iterator());  // one decode trace, generated

  const std::vector<std::pair<std::string, std::string>> bad = {
      {decode_axes + "axis { name: \"platform\" values: \"b1\" }\naxis { name: \"trace.dataset\" values: \"hpt\" }\n",
       "axis 'trace.dataset' is not a setting of the decode generator"},
      {decode_axes + "axis { name: \"platform\" values: \"b1\" values: \"s2\" }\n"
                     "axis { name: \"cim.pcie_score_bits\" values: \"8\" }\n",
       "axis 'cim.pcie_score_bits' sets a parameter that platform 'b1' does not use"},
      {std::string(kTraceAxes) + "axis { name: \"platform\" values: \"memllm\" }\naxis { name: \"trace.steps\" values: \"4\" }\n",
       "axis 'trace.steps' is not a setting of the request generator"},
      {"axis { name: \"trace.model\" values: \"SmolLM2-135M\" }\naxis { name: \"platform\" values: \"s1\" }\n",
       "needs an axis 'trace.context_tokens'"},
  };
  for (const auto& [axes, expected] : bad) {
    const std::string bad_spec = write_spec("bad_decode.txtpb", "name: \"x\"\n" + axes);
    const CliResult b = run_cli("sweep " + shell_quote(bad_spec) + " --out " + shell_quote(out_dir("bad_decode")));
    EXPECT_EQ(b.exit_code, 2) << axes;
    EXPECT_EQ(b.err_lines(), 1) << b.err;
    EXPECT_NE(b.err.find(expected), std::string::npos) << b.err;
  }
}

// `reproduce cim` end to end on a reduced request (SmolLM2-135M, 4 steps): its
// sweeps, tables and figures and the index. At 32768 tokens S1's codes no longer
// fit the controller SRAM (about 22.9k tokens for this model): marked OOM.
TEST(ReproduceCli, CimWritesItsSweepsFiguresTablesAndIndex) {
  const std::string out = out_dir("reproduce_cim");
  const CliResult r = run_cli("reproduce cim --out " + shell_quote(out) +
                              " -j 2 --model SmolLM2-135M --contexts 1024,32768 --steps 4");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* file : {"sweeps/cim-decode.txtpb", "sweeps/cim-nonlinear.txtpb", "cim-decode/results.csv",
                           "cim-nonlinear/results.json", "figures/cim_tbt.svg", "figures/cim_tbt.png",
                           "figures/cim_energy.png", "figures/cim_stage_time.svg", "figures/cim_stage_energy.svg",
                           "figures/cim_speedup.svg", "figures/cim_tbt_table.md", "figures/cim_energy_table.md",
                           "figures/cim_tbt_eq4_table.md", "figures/cim_speedup_table.md",
                           "figures/nonlinear_share.md", "figures/nonlinear_tbt.md", "index.md"})
    EXPECT_TRUE(fs::exists(out + "/" + file)) << file;
  const json::array runs = json::parse(read_text(out + "/cim-decode/results.json")).at("runs").as_array();
  ASSERT_EQ(runs.size(), 8u);  // B1, B2, S1, S2 x 2 contexts
  int oom = 0;
  for (const json::value& run : runs) {
    const bool s1_long = json::value_to<std::string>(run.at("system")) == "S1" &&
                         json::value_to<std::string>(run.at("inputs").at("trace.context_tokens")) == "32768";
    EXPECT_EQ(json::value_to<std::string>(run.at("status")), s1_long ? "oom" : "ok") << json::serialize(run);
    oom += s1_long;
  }
  EXPECT_EQ(oom, 1);
  const std::string table = read_text(out + "/figures/cim_tbt_table.md");
  EXPECT_NE(table.find("| trace.context_tokens | B1 | B2 | S1 | S2 |"), std::string::npos) << table;
  EXPECT_NE(table.find("| 32768 |"), std::string::npos) << table;
  EXPECT_NE(table.find("OOM"), std::string::npos) << table;
  EXPECT_NE(read_text(out + "/figures/cim_tbt.svg").find("oom-bar-"), std::string::npos);
  const std::string share = read_text(out + "/figures/nonlinear_share.md");
  // S1 with the large SRAM runs where S1 is out of memory.
  for (const char* column : {"S1 CONTROLLER", "S1 NPU", "S2 CONTROLLER", "S2 NPU", "S1-16GiB-SRAM CONTROLLER"})
    EXPECT_NE(share.find(column), std::string::npos) << share;
  const std::string index = read_text(out + "/index.md");
  for (const char* s : {"figures/cim_tbt.png", "figures/nonlinear_share.md", "tools/plot/ispsim_plot.py", "## Missing",
                        "cumulative accuracy ablation", "Appendix B", "run from the repository root"})
    EXPECT_NE(index.find(s), std::string::npos) << s;
  // No absolute path of the source tree; a title with an apostrophe is quoted so that it pastes into sh.
  EXPECT_EQ(index.find(std::string(ISPSIM_SOURCE_DIR) + "/"), std::string::npos);
  EXPECT_NE(index.find("--title 'Time between tokens with paper 1'\\''s eq. (4) model (ms)'"), std::string::npos) << index;

  for (const std::string args : {"reproduce memllm --contexts 1024 --list", "reproduce cim --full",
                                 "reproduce cim --contexts 1024,,2048", "reproduce cim --steps 0"}) {
    const std::string bad_out = out_dir("reproduce_bad");
    const CliResult bad = run_cli(args + " --out " + shell_quote(bad_out));
    EXPECT_EQ(bad.exit_code, 2) << args;
    EXPECT_EQ(bad.err_lines(), 1) << args << ": " << bad.err;
    EXPECT_FALSE(fs::exists(bad_out)) << args;
  }
}

}  // namespace
}  // namespace ispsim::testing
