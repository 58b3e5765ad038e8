// Paper 1's decode systems (platforms/systems/cim_plan.h, cim_system.h):
// closed forms of the planner, S1's SRAM overflow at the capacity boundary,
// simulated against analytic time, bytes conserved between the engines, stages
// adding up to the latency, bad parameters, and the CLI end to end.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <regex>
#include <sstream>

#include "common/error.h"
#include "models/cim/cost.h"
#include "schema/platform_loader.h"
#include "platforms/systems/cim_plan.h"
#include "platforms/systems/cim_system.h"
#include "platforms/systems/metrics.h"
#include "tests/support/cli.h"
#include "tests/support/vcd_check.h"
#include "traces/gen/decode_program.h"
#include "traces/gen/model_presets.h"
#include "traces/gen/program_builder.h"
#include "traces/gen/shape_generator.h"

namespace ispsim::systems {
namespace {

using ispsim::testing::run_cli;
using ispsim::testing::scratch_dir;

// A stage's statistic of the family `pattern` (kRunStageTime, ...) in its
// declared unit, the stage keyed as the metrics key it ("kv_read_attention").
double stage(const RunSummary& run, const char* pattern, const std::string& key) {
  const auto it = run.stats.find(family_member(pattern, key));
  return it == run.stats.end() ? -1 : it->second.value;
}

trace::Header llama_header(uint64_t context, uint64_t steps) {
  tracegen::DecodeRequest r;
  r.model = tracegen::find_model_preset("Llama-3.1-8B");
  r.context_tokens = context;
  r.decode_steps = steps;
  r.dictionary = tracegen::paper_dictionary_settings();
  return tracegen::make_decode_header(r, trace::Producer{});
}

std::string small_trace(uint64_t context, uint64_t steps) {
  tracegen::DecodeRequest r;
  r.model = tracegen::find_model_preset("SmolLM2-135M");
  r.model.set_layers(2);
  r.context_tokens = context;
  r.decode_steps = steps;
  r.dictionary = tracegen::paper_dictionary_settings();
  r.dictionary.set_atoms(1024);
  const std::string path = (scratch_dir() / "small.trace").string();
  tracegen::generate_decode_trace(r, path);
  return path;
}

CimPlanner planner(const std::string& platform, const trace::Header& header, const CimResources& res = {},
                   const std::vector<std::string>& overrides = {}) {
  const schema::LoadedPlatform p = schema::load_platform(platform, overrides);
  return CimPlanner(p.platform.cim(), link::LinkConfig::from_params(p.platform.link()), header, res, p.file);
}

trace::Op gemv(uint64_t n, uint64_t k) {
  trace::Op op;
  op.mutable_gemm()->set_m(1);
  op.mutable_gemm()->set_n(n);
  op.mutable_gemm()->set_k(k);
  op.mutable_gemm()->set_b_is_weight(true);
  return op;
}

TEST(CimPlan, WeightGemvClosedFormsOnTheNpuAndInFlash) {
  const trace::Header h = llama_header(1024, 1);
  const auto b1 = planner("b1", h).plan(gemv(4096, 4096));
  ASSERT_EQ(b1.size(), 1u);
  // B1: FP16 weights and activations stream from DDR5 (76.8 GB/s) while the NPU does 16.8 M MACs at 32 TMAC/s.
  const double dram_ns = (4096.0 * 4096 * 2 + 8192 * 2) / 76.8, npu_ns = 4096.0 * 4096 / 32e3;
  EXPECT_NEAR(b1[0].analytic_ns(), cim::overlap_ns(dram_ns, npu_ns, 0.8), 1e-6);
  EXPECT_NEAR(b1[0].energy_pj(), (4096.0 * 4096 * 2 + 8192 * 2) * 8 * 7 + 4096.0 * 4096 * 1.7 + 4096.0 * 4096 / 128 * 13,
              1e-3);
  // S1: x (4096 B) over the bus, 16.8 M in-place MACs at 1 TMAC/s, INT32 sums back, requantization.
  const auto s1 = planner("s1", h).plan(gemv(4096, 4096));
  ASSERT_EQ(s1.size(), 1u);
  const double bus_in = 150 + 4096 / 16.0, cim = 4096.0 * 4096 / 1e3, bus_out = 150 + 4096 * 4 / 16.0,
               ctrl = 4096 / 50.0;
  EXPECT_NEAR(s1[0].analytic_ns(), cim::overlap_ns({bus_in, cim, bus_out, ctrl}, 0.9), 1e-6);
}

TEST(CimPlan, S1SramOverflowAtTheCapacityBoundary) {
  // Llama-3.1-8B, defaults: window (W + U = 160 tokens) x 32 layers x 8 KV heads x 128 x 2 x INT8 = 10 MiB,
  // pursuit state 32 layers x 32 tokens x 8 heads x 2 x (128 x 4 + 16 x 3) B = 8.75 MiB, codes 2 x 8 x 16 x 3 B
  // = 768 B per token and layer: (192 MiB - 10 MiB - 8.75 MiB) / (32 x 768 B) = 7392 compressed tokens.
  const CimPlanner s1 = planner("s1", llama_header(1024, 1));
  const uint64_t sram = 192u << 20;
  const CimFootprint at = s1.footprint(7392 + 128), beyond = s1.footprint(7392 + 128 + 1);
  EXPECT_EQ(at.sram_code_capacity_tokens, 7392u);
  EXPECT_EQ(at.sram_bytes, sram);
  EXPECT_GT(beyond.sram_bytes, sram);
  // The system reports it as an overflow instead of running it.
  const std::string trace_path = (scratch_dir() / "llama.trace").string();
  tracegen::DecodeRequest r;
  r.model = tracegen::find_model_preset("Llama-3.1-8B");
  r.context_tokens = 7392 + 128;
  r.decode_steps = 1;
  r.dictionary = tracegen::paper_dictionary_settings();
  tracegen::generate_decode_trace(r, trace_path);
  const RunSummary over = run_cim_system(schema::load_platform("s1"), trace_path, {});
  EXPECT_TRUE(over.out_of_memory);
  EXPECT_NE(over.failure.find("controller SRAM overflow at 7521 tokens"), std::string::npos) << over.failure;
  EXPECT_NE(over.failure.find("codes of 7392 compressed tokens"), std::string::npos) << over.failure;
  // S2 keeps the codes in host DRAM: the same context fits.
  EXPECT_LT(planner("s2", llama_header(1024, 1)).footprint(7521).sram_bytes, sram);
}

TEST(CimPlan, BadParametersAreRejected) {
  const trace::Header h = llama_header(1024, 1);
  EXPECT_THROW(schema::load_platform("s1", {"cim.rho_cim=1.5"}), BadInput);
  EXPECT_THROW(schema::load_platform("s1", {"cim.pass_sharing=EVERYTHING"}), BadInput);
  EXPECT_THROW(planner("s2", h, {}, {"cim.pcie_score_bits=12"}), BadInput);
  EXPECT_THROW(planner("b2", h, {}, {"cim.b2_pursuit_device=CONTROLLER"}), BadInput);
  EXPECT_EQ(ignored_settings(schema::load_platform("b1", {"cim.bus.latency_ns=5", "cim.dram.bandwidth_gbps=50"})),
            std::vector<std::string>{"cim.bus.latency_ns"});
  EXPECT_EQ(ignored_settings(schema::load_platform("s1", {"nand.t_read_us=20"})),
            std::vector<std::string>{"nand.t_read_us"});
  // An architecture that does not match the platform's program.
  EXPECT_THROW(run_cim_system(schema::load_platform("b1", {"cim.architecture=CIM_CODES_IN_SRAM"}), small_trace(300, 1), {}),
               BadInput);
}

// Distinct tags for the resources, so lanes can be told apart without SystemC.
struct Tag : cim::Resource {
  void submit(const sc_core::sc_time&, const sc_core::sc_time&, uint64_t, double, cim::Done) override {}
  const std::string& component() const override { return name; }
  void trace(vcd::Writer&) override {}
  std::string name = "tag";
};

TEST(CimSystem, S2BytesConservedAndSimulatedEqualsAnalyticWhenSequential) {
  const std::string path = small_trace(300, 32);
  const std::vector<std::string> sets = {"cim.pipeline_chunks=1"};
  // Planned PCIe bytes over the whole program, from the planner alone.
  Tag h2d, d2h;
  CimResources tags;
  tags.pcie_to_ssd = &h2d;
  tags.pcie_to_host = &d2h;
  trace::TraceReader reader(path);
  const CimPlanner counting = planner("s2", reader.header(), tags, sets);
  uint64_t planned_h2d = 0, planned_d2h = 0;
  trace::Op op;
  while (reader.next(op)) {
    if (op.program() != trace::DECODE_ONLY_DICTIONARY) continue;
    for (const cim::Step& s : counting.plan(op))
      for (const cim::Lane& l : s.lanes) {
        if (l.resource == &h2d) planned_h2d += l.bytes * s.repeat;
        if (l.resource == &d2h) planned_d2h += l.bytes * s.repeat;
      }
  }
  const RunSummary run = run_cim_system(schema::load_platform("s2", sets), path, {});
  ASSERT_TRUE(run.failure.empty()) << run.failure;
  EXPECT_GT(planned_h2d, 0u);
  EXPECT_EQ(run.statistic("system.pcie.host_to_device.other_bytes"), planned_h2d);
  EXPECT_EQ(run.statistic("system.pcie.device_to_host.other_bytes"), planned_d2h);
  // With one chunk per step nothing overlaps: both timings are sums of the same terms
  // (up to 1 ps of rounding per lane and chunk).
  const double latency_ns = run.statistic(kRunLatency, "ns"), energy_j = run.statistic(kRunEnergy);
  EXPECT_NEAR(latency_ns, run.statistic(kRunAnalyticLatency, "ns"), 1e-3 * 20000);
  double stages = 0;
  for (const auto& [name, time] : statistic_family(run, kRunStageTime)) stages += time.value;
  EXPECT_NEAR(stages, latency_ns, 1e-6 * latency_ns);  // the program is a chain
  EXPECT_EQ(run.statistic(kRunDecodeTokens), 32);
  EXPECT_GT(stage(run, kRunStageEnergy, "pursuit"), 0.0);
  EXPECT_GT(stage(run, kRunStageEnergy, "transfers"), 0.0);
  double stage_j = 0;
  for (const auto& [name, energy] : statistic_family(run, kRunStageEnergy)) stage_j += energy.si();
  EXPECT_NEAR(stage_j, energy_j, 1e-9 * energy_j);  // PCIe energy: LinkConfig::energy_pj on both sides
}

TEST(CimSystem, B1RunsDenseDecodeWithoutPursuit) {
  const RunSummary run = run_cim_system(schema::load_platform("b1"), small_trace(300, 4), {});
  ASSERT_TRUE(run.failure.empty()) << run.failure;
  EXPECT_GT(run.statistic(kRunLatency, "ns"), 0);
  EXPECT_GT(run.statistic(kRunAnalyticLatency, "ns"), 0);
  EXPECT_EQ(run.stats.count(family_member(kRunStageTime, "pursuit")), 1u);  // a stage of 0 ns is still there
  EXPECT_EQ(stage(run, kRunStageTime, "pursuit"), 0.0);
  EXPECT_GT(stage(run, kRunStageTime, "weights"), 0.0);
}

TEST(CimCli, CompareAgainstB1AndOneLineErrors) {
  const std::string path = small_trace(300, 32);
  auto ok = run_cli("compare --trace " + path + " --platforms b1,b2,s1,s2 --baseline b1 --jobs 1");
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  for (const char* s : {"TBT (ms)", "speedup (x)", "energy ratio (x)", "B1", "S2"})
    EXPECT_NE(ok.out.find(s), std::string::npos) << s << "\n" << ok.out;
  // The default table fits 120 characters; --columns all adds each stage's columns.
  const std::string table = ok.out.substr(0, ok.out.find("\nS1:"));
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 120u) << line;
  EXPECT_EQ(ok.out.find("pursuit (ms)"), std::string::npos) << ok.out;
  auto all = run_cli("compare --trace " + path + " --platforms b1,s1 --baseline b1 --jobs 1 --columns all");
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_NE(all.out.find("pursuit (ms)"), std::string::npos) << all.out;
  auto columns = run_cli("compare --trace " + path + " --platforms b1,s1 --columns tbt");
  EXPECT_EQ(columns.exit_code, 2);
  EXPECT_EQ(columns.err_lines(), 1) << columns.err;
  auto bad = run_cli("run --platform b1 --trace " + path + " --set cim.bus.latency_ns=5");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err_lines(), 1) << bad.err;
  bad = run_cli("run --platform s2 --trace " + path + " --set cim.pcie_score_bits=12");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err_lines(), 1) << bad.err;
  bad = run_cli("trace gen --decode --shape Llama-3.1-8B --context-tokens 0 --out " + path);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err_lines(), 1) << bad.err;
}

TEST(CimCli, RunWritesStatisticsAndAWaveformGtkwaveReads) {
  const std::string path = small_trace(300, 4);
  const auto stats = scratch_dir() / "s2.json";
  const auto vcd = scratch_dir() / "s2.vcd";
  auto r = run_cli("run --platform s2 --trace " + path + " --stats " + stats.string() + " --vcd " + vcd.string() +
                   " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"tbt_s\""), std::string::npos) << r.out;
  const std::string json = ispsim::testing::read_text(stats);
  for (const char* s : {"time_between_tokens", "analytic_latency", "sram_code_capacity_tokens", "cim_array", "pcie"})
    EXPECT_NE(json.find(s), std::string::npos) << s;
  ispsim::testing::expect_vcd_valid(vcd.string());
}

// A decode systems' result file alone reruns them exactly (tools/ispsim/cmd_rerun.cc):
// its runs carry the result schema's metrics, provenance, configuration and settings.
TEST(CimCli, AResultFileAloneRerunsItExactly) {
  const std::string path = small_trace(300, 4), result = (scratch_dir() / "cim_result.json").string();
  auto r = run_cli("compare --trace " + path + " --platforms b2,s2 --baseline b2 --jobs 1"
                   " --set cim.pass_sharing=PER_TOKEN"
                   " --json " + result);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string recorded = ispsim::testing::read_text(result);
  for (const char* s : {"\"schema_version\": 1", "\"trace_sha1\": ", "\"tbt_s\": ", "\"tbt_eq4_s\": ",
                        "\"energy_per_token_j\": ", "\"stage.pursuit_s\": ", "\"stage_eq4.weights_s\": ",
                        "\"stage_energy.weights_j\": ", "pass_sharing: PER_TOKEN"})
    EXPECT_NE(recorded.find(s), std::string::npos) << s << "\n" << recorded;
  r = run_cli("rerun " + result + " -j 2");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("B2: reproduced ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("S2: reproduced ("), std::string::npos) << r.out;
  // Another pass sharing in both the settings and the configuration: S2's
  // pursuit shares its passes otherwise (B2's does not at this size).
  std::string changed = recorded;
  const std::string from = "pass_sharing: PER_TOKEN";
  for (size_t at; (at = changed.find(from)) != std::string::npos;) changed.replace(at, from.size(), "pass_sharing: PER_VECTOR");
  const std::string changed_path = (scratch_dir() / "cim_changed.json").string();
  std::ofstream(changed_path) << changed;
  r = run_cli("rerun " + changed_path);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("B2: reproduced ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("S2: DIFFERS: energy_j was "), std::string::npos) << r.out;
}

// The functional engine's dictionary trace (kernels/dict/engine_trace.h) is a
// FULL_PREFILL program whose decode steps hold kv_append, dict_encode and
// dict_attention, written by the program builder from the engine's per-step
// bookkeeping. Here that bookkeeping follows the window rule of the decode
// generator (2 documents of 150 + a query of 20 tokens, W 128, U 32).
std::string engine_style_trace(uint64_t steps) {
  tracegen::BlendRequest request;
  request.model = tracegen::find_model_preset("SmolLM2-135M");
  request.model.set_layers(2);
  request.doc_tokens = {150, 150};
  request.query_tokens = 20;
  request.answer_tokens = steps;
  tracegen::DictionaryDecode d;
  d.settings = tracegen::paper_dictionary_settings();
  d.settings.set_atoms(1024);
  d.settings.set_coefficient_bits(16);  // as the engine writes them
  tracegen::WindowState w = tracegen::initial_window(320, d.settings);
  d.prefill_encoded_tokens.assign(2, w.compressed);
  for (uint64_t s = 0; s < steps; ++s) {
    w = tracegen::step_window(w, d.settings);
    tracegen::DictionaryLayerStep layer{w.window, w.compressed, w.encodes ? d.settings.unit_tokens() : 0, 3, 0.25};
    d.steps.push_back({layer, layer});
  }
  request.dictionary = d;
  const std::vector<trace::Program> programs = {trace::FULL_PREFILL};
  const std::string path = (scratch_dir() / "engine_style.trace").string();
  tracegen::check_blend_request(request, programs, path);
  trace::Producer producer;
  producer.set_kind(trace::PRODUCER_FUNCTIONAL_ENGINE);
  producer.set_tool("cim_system_test (the engine's bookkeeping, by the decode generator's window rule)");
  trace::TraceWriter writer(path, tracegen::make_header(request, programs, producer));
  tracegen::write_programs(writer, request, programs);
  writer.close();
  return path;
}

// The eq.-4 time and pursuit energy of exactly the PHASE_DECODE ops of a trace on a platform.
struct DecodeOpsClosedForm {
  double analytic_ns = 0, pursuit_pj = 0;
  uint64_t ops = 0, encodes = 0;
};
DecodeOpsClosedForm decode_ops_closed_form(const std::string& platform_name, const std::string& path) {
  const schema::LoadedPlatform platform = schema::load_platform(platform_name);
  trace::TraceReader reader(path);
  const CimPlanner closed_form(platform.platform.cim(), link::LinkConfig::from_params(platform.platform.link()),
                               reader.header(), {}, platform.file);
  DecodeOpsClosedForm f;
  trace::Op op;
  while (reader.next(op)) {
    if (op.phase() != trace::PHASE_DECODE) continue;
    ++f.ops;
    f.encodes += op.has_dict_encode();
    for (const cim::Step& s : closed_form.plan(op)) {
      f.analytic_ns += s.analytic_ns();
      if (s.stage == cim::Stage::PURSUIT) f.pursuit_pj += s.energy_pj();
    }
  }
  return f;
}

TEST(CimSystem, EngineDictionaryTraceRunsItsDecodeStepsOnB2S1S2) {
  const std::string path = engine_style_trace(40);  // 40 steps: one batch pursuit per layer
  // S2 in this process: exactly the decode ops run (their eq.-4 times add up to the run's).
  const DecodeOpsClosedForm s2 = decode_ops_closed_form("s2", path);
  EXPECT_EQ(s2.encodes, 2u);
  EXPECT_GT(s2.ops, 40u * 2 * 10);
  const RunSummary run = run_cim_system(schema::load_platform("s2"), path, {});
  ASSERT_TRUE(run.failure.empty()) << run.failure;
  EXPECT_EQ(run.program, "FULL_PREFILL (decode steps)");
  EXPECT_EQ(run.statistic(kRunDecodeTokens), 40);
  EXPECT_NEAR(run.statistic(kRunAnalyticLatency, "ns"), s2.analytic_ns, 1e-9 * s2.analytic_ns);
  EXPECT_GT(s2.pursuit_pj, 0.0);
  EXPECT_NEAR(stage(run, kRunStageEnergy, "pursuit") * 1e12, s2.pursuit_pj, 1e-9 * s2.pursuit_pj);
  EXPECT_GT(run.statistic(kRunLatency, "ns"), 0.0);

  // B2, S1 and S2 through the CLI (one simulation per process): eq.-4 TBT of the decode ops.
  auto r = run_cli("compare --trace " + path + " --platforms b2,s1,s2 --baseline b2 --jobs 1 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::regex row("\"platform\": \"(B2|S1|S2)\", \"program\": \"FULL_PREFILL \\(decode steps\\)\", "
                       "\"status\": \"ok\"[^}]*\"tbt_eq4_s\": ([0-9.e-]+)");
  int rows = 0;
  for (std::sregex_iterator it(r.out.begin(), r.out.end(), row), end; it != end; ++it, ++rows) {
    const std::string name = (*it)[1];
    const double expected_s = decode_ops_closed_form(name == "B2" ? "b2" : name == "S1" ? "s1" : "s2", path)
                                  .analytic_ns / 40 / 1e9;
    EXPECT_NEAR(std::stod((*it)[2]), expected_s, 1e-9 * expected_s) << name;
  }
  EXPECT_EQ(rows, 3) << r.out;
  // B1 runs dense KV: the dictionary ops are bad input for it, in one line.
  r = run_cli("run --platform b1 --trace " + path);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err_lines(), 1) << r.err;
}

TEST(CimSystem, DenseFullPrefillDecodeRunsOnB1AndNotOnDictionarySystems) {
  tracegen::ShapeOptions o;
  o.model = "SmolLM2-135M";
  o.dataset = "hpt";
  o.docs = 1;
  o.context_tokens = 200;
  o.query_tokens = 8;
  o.answer_tokens = 3;
  const std::string path = (scratch_dir() / "blend.trace").string();
  tracegen::generate_shape_trace(o, path);
  const RunSummary run = run_cim_system(schema::load_platform("b1"), path, {});
  ASSERT_TRUE(run.failure.empty()) << run.failure;
  EXPECT_EQ(run.statistic(kRunDecodeTokens), 3);
  EXPECT_GT(stage(run, kRunStageTime, "kv_read_attention"), 0.0);
  EXPECT_THROW(run_cim_system(schema::load_platform("s2"), path, {}), BadInput);  // no dictionary settings
}

// End to end with the real functional engine (the shipped model and
// dictionaries): 164 prompt tokens and 30 greedy steps, so every layer runs one
// batch pursuit (the window of 132 tokens reaches W + U = 160 at step 28).
TEST(CimCli, EngineKvTraceRunsOnB2S1S2) {
  const std::string path = (scratch_dir() / "engine_kv.trace").string();
  auto r = run_cli("engine kv-trace --docs ca10-1,ca10-2,ca20-1,ca20-2,cb06-1 --query 'Who is the district attorney?'"
                   " --tokens 30 --out " + path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_cli("compare --trace " + path + " --platforms b2,s1,s2 --baseline b2 --jobs 2 --format json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::regex row("\"platform\": \"(B2|S1|S2)\", \"program\": \"FULL_PREFILL \\(decode steps\\)\", "
                       "\"status\": \"ok\"[^}]*\"decode_tokens\": 30[^}]*\"stage.pursuit_s\": ([0-9.e-]+)");
  int rows = 0;
  for (std::sregex_iterator it(r.out.begin(), r.out.end(), row), end; it != end; ++it, ++rows)
    EXPECT_GT(std::stod((*it)[2]), 0.0) << (*it)[1] << ": pursuit time per token";
  EXPECT_EQ(rows, 3) << r.out;
}

// The runtime reads ops ahead of their completion through a window of 4096: a
// run of more ops completes every one (simulated = eq. 4 with one chunk per step)
// and never holds more than the window.
TEST(CimCli, LongRunsStreamTheirOpsThroughABoundedWindow) {
  const std::string path = small_trace(300, 200);  // 2 layers: 200 x (2 x 12 + 3) + 12 encodes = 5412 ops
  uint64_t ops = 0;
  {
    trace::TraceReader reader(path);
    trace::Op op;
    while (reader.next(op)) ops += op.program() == trace::DECODE_ONLY_DICTIONARY;
  }
  ASSERT_GT(ops, 4096u);
  const auto stats = scratch_dir() / "long.json";
  auto r = run_cli("run --platform s2 --trace " + path + " --set cim.pipeline_chunks=1 --format json --stats " +
                   stats.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string json = ispsim::testing::read_text(stats);
  auto value = [&json](const std::string& name) {
    const std::smatch m = [&] {
      std::smatch found;
      std::regex_search(json, found, std::regex("\"" + name + "\": \\{\"value\": ([0-9.e+]+)"));
      return found;
    }();
    return m.empty() ? -1.0 : std::stod(m[1]);
  };
  EXPECT_EQ(value("ops_completed"), static_cast<double>(ops));
  EXPECT_GT(value("ops_held_at_most"), 0.0);
  EXPECT_LE(value("ops_held_at_most"), 4096.0);
  EXPECT_NEAR(value("latency"), value("analytic_latency"), 1e-3 * 20 * ops);  // 1 ps per lane and chunk
}

}  // namespace
}  // namespace ispsim::systems
