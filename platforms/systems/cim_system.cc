#include "platforms/systems/cim_system.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <cmath>
#include <memory>
#include <unordered_map>
#include <systemc>

#include "common/error.h"
#include "common/output_files.h"
#include "models/cim/devices.h"
#include "models/cim/step.h"
#include "models/cim/unit.h"
#include "models/core/energy_ledger.h"
#include "models/core/sim_time.h"
#include "models/core/stats.h"
#include "models/core/vcd.h"
#include "models/link/pcie_link.h"
#include "platforms/systems/cim_plan.h"
#include "platforms/systems/isp_selection.h"
#include "platforms/systems/metrics.h"
#include "platforms/systems/run_stats.h"
#include "platforms/systems/stats_output.h"
#include "traces/trace_io.h"

namespace ispsim::systems {
namespace {

using schema::CimParams;

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

std::string mib(uint64_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

sc_core::sc_time ns_time(double ns) {
  return sc_core::sc_time::from_value(static_cast<uint64_t>(std::llround(ns * 1e3)));
}

// The devices of one platform (all of them exist; an architecture uses some).
struct CimSystem : sc_core::sc_module {
  CimSystem(sc_core::sc_module_name name, const CimParams& p, const link::LinkConfig& link_config,
            core::EnergyLedger& ledger)
      : sc_module(name),
        npu("npu", sc_core::SC_ZERO_TIME, &ledger),
        host_cpu("host_cpu", sc_core::SC_ZERO_TIME, &ledger),
        dram("dram", sc_core::SC_ZERO_TIME, &ledger),
        cim_array("cim_array", sc_core::SC_ZERO_TIME, &ledger),
        cim_periphery("cim_periphery", sc_core::SC_ZERO_TIME, &ledger),
        controller("controller", sc_core::SC_ZERO_TIME, &ledger),
        controller_sram("controller_sram", sc_core::SC_ZERO_TIME, &ledger),
        bus("bus", ns_time(p.bus().latency_ns()), &ledger),
        pcie("pcie", link_config, &ledger),
        pcie_to_host("pcie_to_host", pcie, link::Direction::DEVICE_TO_HOST, link::Purpose::OTHER),
        pcie_to_ssd("pcie_to_ssd", pcie, link::Direction::HOST_TO_DEVICE, link::Purpose::OTHER) {}

  CimResources resources() {
    return {&npu, &host_cpu, &dram, &cim_array, &cim_periphery, &controller, &controller_sram, &bus,
            &pcie_to_host, &pcie_to_ssd};
  }
  void flush_energy() {
    for (cim::Unit* u : {&npu, &host_cpu, &dram, &cim_array, &cim_periphery, &controller, &controller_sram, &bus})
      u->flush_energy();
  }
  void trace(vcd::Writer& w) {
    for (cim::Unit* u : {&npu, &host_cpu, &dram, &cim_array, &cim_periphery, &controller, &controller_sram, &bus})
      u->trace(w);
    pcie.trace(w);
  }

  cim::Unit npu, host_cpu, dram, cim_array, cim_periphery, controller, controller_sram, bus;
  link::PcieLink pcie;
  cim::PcieResource pcie_to_host, pcie_to_ssd;
};

// The ops a platform runs, streamed from the trace in file order: its program,
// or the decode steps of FULL_PREFILL (ProgramSource).
class OpStream {
 public:
  OpStream(const std::string& path, const ProgramSource& source) : reader_(path), source_(source) {}
  bool next(trace::Op& op) {
    while (reader_.next(op))
      if (op.program() == source_.program && (!source_.decode_phase_only || op.phase() == trace::PHASE_DECODE))
        return true;
    return false;
  }

 private:
  trace::TraceReader reader_;
  ProgramSource source_;
};

// Walks the program's op DAG while it streams: an op starts when its
// dependencies completed, runs its steps one after another, and releases its
// dependants. At most `window` ops are held at once, read ahead as others
// finish, so memory does not grow with the number of decode steps. A
// dependency names an earlier op (the trace validator checks it), so one that
// is not held has completed, or is outside the ops run (the prefill of a
// FULL_PREFILL program), and counts as met; the earliest op held therefore
// can always start, and the walk never stalls.
class CimRuntime {
 public:
  static constexpr size_t kWindow = 4096;

  CimRuntime(OpStream& ops, const CimPlanner& planner) : ops_(ops), planner_(planner) {}

  void start() { read_ahead(); }

  struct StageTotals {
    double sim_ns = 0, analytic_ns = 0, energy_pj = 0;
  };
  const std::array<StageTotals, cim::kStageCount>& stages() const { return stages_; }
  uint64_t completed() const { return completed_; }
  uint64_t end_ps() const { return end_ps_; }
  size_t most_held() const { return most_held_; }
  double analytic_ns() const {
    double t = 0;
    for (const StageTotals& s : stages_) t += s.analytic_ns;
    return t;
  }

 private:
  struct Running {
    std::vector<cim::Step> steps;
    size_t next = 0;
    uint64_t step_start_ps = 0;
    std::unique_ptr<cim::StepRunner> runner;
  };
  struct Node {
    trace::Op op;  // until it is issued
    uint32_t waiting = 0;
    std::vector<uint64_t> dependants;
    std::unique_ptr<Running> running;
  };

  void read_ahead() {
    if (reading_) return;  // an op that finished while issuing: the loop below goes on
    reading_ = true;
    trace::Op op;
    while (held_.size() < kWindow && !exhausted_) {
      if (!ops_.next(op)) {
        exhausted_ = true;
        break;
      }
      const uint64_t id = op.id();
      Node& node = held_[id];
      node.op = std::move(op);
      for (uint64_t dep : node.op.deps()) {
        auto it = held_.find(dep);
        if (it == held_.end()) continue;
        ++node.waiting;
        it->second.dependants.push_back(id);
      }
      most_held_ = std::max(most_held_, held_.size());
      if (node.waiting == 0) issue(id);
    }
    reading_ = false;
  }

  void issue(uint64_t id) {
    Node& node = held_.at(id);
    node.running = std::make_unique<Running>();
    node.running->steps = planner_.plan(node.op);
    node.op.Clear();
    for (const cim::Step& s : node.running->steps) {
      StageTotals& t = stages_[static_cast<int>(s.stage)];
      t.analytic_ns += s.analytic_ns();
      t.energy_pj += s.energy_pj();
    }
    next_step(id);
  }

  void next_step(uint64_t id) {
    Running& r = *held_.at(id).running;
    const uint64_t now = sc_core::sc_time_stamp().value();
    if (r.next > 0) stages_[static_cast<int>(r.steps[r.next - 1].stage)].sim_ns += (now - r.step_start_ps) / 1e3;
    if (r.next == r.steps.size()) return finish(id);
    r.step_start_ps = now;
    r.runner = std::make_unique<cim::StepRunner>(r.steps[r.next++], [this, id] { next_step(id); });
    r.runner->start();
  }

  void finish(uint64_t id) {
    end_ps_ = std::max<uint64_t>(end_ps_, sc_core::sc_time_stamp().value());
    ++completed_;
    auto node = held_.find(id);
    // The runner that called us is still on the stack: release the op's state later.
    finished_.push_back(std::move(node->second.running));
    if (finished_.size() > 64) finished_.erase(finished_.begin(), finished_.begin() + 32);
    const std::vector<uint64_t> dependants = std::move(node->second.dependants);
    held_.erase(node);
    for (uint64_t j : dependants)
      if (--held_.at(j).waiting == 0) issue(j);
    read_ahead();
  }

  OpStream& ops_;
  const CimPlanner& planner_;
  std::unordered_map<uint64_t, Node> held_;
  bool reading_ = false, exhausted_ = false;
  std::vector<std::unique_ptr<Running>> finished_;
  std::array<StageTotals, cim::kStageCount> stages_{};
  uint64_t completed_ = 0, end_ps_ = 0;
  size_t most_held_ = 0;
};

trace::Program own_program(const schema::Platform& platform) {
  trace::Program program = trace::PROGRAM_UNSPECIFIED;
  trace::Program_Parse(schema::Platform::Program_Name(platform.program()), &program);
  return program;
}

void check_architecture(const schema::LoadedPlatform& loaded) {
  const trace::Program program = own_program(loaded.platform);
  const bool dense = loaded.platform.cim().architecture() == CimParams::NPU_DENSE_KV;
  if (dense != (program == trace::DECODE_ONLY))
    throw BadInput(loaded.file, "architecture " + CimParams::Architecture_Name(loaded.platform.cim().architecture()) +
                                    " runs program " + (dense ? "DECODE_ONLY" : "DECODE_ONLY_DICTIONARY") + ", not " +
                                    trace::Program_Name(program));
}

// The footprint check: storage that does not fit ends the run as out of memory.
std::string capacity_problem(const CimPlanner& planner, const CimParams& p, const CimFootprint& f,
                             uint64_t max_context, std::string& note) {
  const uint64_t dram = p.dram().capacity_bytes(), flash = p.array().capacity_bytes(),
                 sram = p.controller().sram_bytes();
  if (planner.is_cim()) {
    note = p.architecture() == CimParams::CIM_CODES_IN_SRAM
               ? "controller SRAM " + mib(sram) + " holds the codes of " + std::to_string(f.sram_code_capacity_tokens) +
                     " compressed tokens next to the window (" + mib(f.kv_bytes) + ") and pursuit state (" +
                     mib(f.pursuit_state_bytes) + ")"
               : "codes in host DRAM: " + mib(f.code_bytes) + "; controller SRAM holds the window (" +
                     mib(f.kv_bytes) + ") and pursuit state (" + mib(f.pursuit_state_bytes) + ")";
    if (f.flash_bytes > flash)
      return "weights and dictionaries (" + mib(f.flash_bytes) + ") exceed the flash (" + mib(flash) + ")";
    if (f.sram_bytes > sram)
      return "controller SRAM overflow at " + std::to_string(max_context) + " tokens: window, pursuit state and " +
             (p.architecture() == CimParams::CIM_CODES_IN_SRAM ? "codes (" + mib(f.code_bytes) + ") " : std::string()) +
             "need " + mib(f.sram_bytes) + " of " + mib(sram) + " (cim.controller.sram_bytes); " + note;
    if (f.dram_bytes > dram)
      return "codes (" + mib(f.dram_bytes) + ") exceed the host DRAM (" + mib(dram) + ", cim.dram.capacity_bytes)";
    return "";
  }
  if (f.dram_bytes > dram)
    return "weights, KV" + std::string(planner.is_dictionary() ? ", dictionaries and codes" : "") + " need " +
           mib(f.dram_bytes) + " of DRAM at " + std::to_string(max_context) + " tokens; the platform has " + mib(dram) +
           " (cim.dram.capacity_bytes)";
  return "";
}

}  // namespace

std::string ProgramSource::name() const {
  return trace::Program_Name(program) + (decode_phase_only ? " (decode steps)" : "");
}

ProgramSource program_source(const schema::Platform& platform, const trace::Header& header,
                             const std::string& trace_path) {
  const trace::Program own = own_program(platform);
  bool has_own = false, has_full_prefill = false;
  for (const trace::ProgramInfo& info : header.programs()) {
    has_own |= info.program() == own;
    has_full_prefill |= info.program() == trace::FULL_PREFILL;
  }
  if (has_own) return {own, false};
  const bool decode_system = is_cim_platform(platform);
  if (decode_system && has_full_prefill && header.request().answer_tokens() > 0) return {trace::FULL_PREFILL, true};
  throw BadInput(trace_path, "has no " + trace::Program_Name(own) + " program" +
                                 (decode_system ? " (nor decode steps in a FULL_PREFILL program)" : "") +
                                 ", which platform '" + platform.name() + "' runs");
}

bool is_cim_platform(const schema::Platform& platform) {
  return platform.program() == schema::Platform::DECODE_ONLY ||
         platform.program() == schema::Platform::DECODE_ONLY_DICTIONARY;
}

std::vector<std::string> ignored_settings(const schema::LoadedPlatform& loaded) {
  const CimParams::Architecture a = loaded.platform.cim().architecture();
  const bool cim = a == CimParams::CIM_CODES_IN_SRAM || a == CimParams::CIM_CODES_IN_HOST_DRAM;
  std::vector<std::string> unused = {"cim.architecture"};  // set by the platform file, not a knob
  if (!cim)
    for (const char* p : {"cim.array.", "cim.controller.", "cim.bus.", "cim.throughput_meaning", "cim.nonlinear_device",
                          "cim.pcie_score_bits", "cim.pcie_setup_ns", "cim.rho_cim", "link."})
      unused.push_back(p);
  if (a == CimParams::NPU_DENSE_KV) unused.push_back("cim.pass_sharing");
  if (a != CimParams::NPU_DICTIONARY_KV) unused.push_back("cim.b2_pursuit_device");
  if (a != CimParams::CIM_CODES_IN_HOST_DRAM) unused.push_back("cim.pcie_score_bits");
  if (a == CimParams::CIM_CODES_IN_SRAM) unused.push_back("cim.dram.");
  std::vector<std::string> ignored;
  for (const std::string& path : loaded.from_overrides) {
    bool skip = !starts_with(path, "cim.") && !starts_with(path, "link.");
    for (const std::string& u : unused) skip |= path == u || (u.back() == '.' && starts_with(path, u));
    if (skip) ignored.push_back(path);
  }
  return ignored;
}

namespace {

// What a run reads before simulating: the trace's header, the program it
// runs, and the longest context a decode step sees.
struct CimInput {
  trace::Header header;
  ProgramSource source;
  uint64_t max_context = 0;
};

CimInput read_cim_input(const schema::LoadedPlatform& loaded, const std::string& trace_path) {
  CimInput in;
  in.header = trace::TraceReader(trace_path).header();
  in.source = program_source(loaded.platform, in.header, trace_path);
  const schema::Platform& platform = loaded.platform;
  if (platform.program() == schema::Platform::DECODE_ONLY_DICTIONARY &&
      in.header.request().kv_format() != trace::KV_DICTIONARY)
    throw BadInput(trace_path, "its request has no dictionary KV (kv_format KV_DICTIONARY), which platform '" +
                                   platform.name() + "' needs; 'ispsim trace gen --decode' writes such traces");
  uint64_t context = 0;
  for (const auto& doc : in.header.request().documents()) context += doc.tokens();
  in.max_context = context + in.header.request().query_tokens() + in.header.request().answer_tokens();
  return in;
}

// The simulated parts of one run; every op is decode, and the energy is
// folded while the run streams (bounded memory).
// The run's outcome: the decode steps' simulated and analytic time and, once
// summarised, their energy and power.
void declare_outcome_stats(stats::Group& group, const CimRuntime& runtime,
                           const core::EnergyLedger::Summary& energy) {
  group.formula("latency", "ns", "simulated time of the decode steps",
                [&runtime] { return static_cast<double>(runtime.end_ps()) / 1e3; });
  group.formula("analytic_latency", "ns", "the same steps timed with paper 1's eq. (4) model",
                [&runtime] { return runtime.analytic_ns(); });
  group.formula("energy", "J", "energy of the decode steps, dynamic and static", [&energy] { return energy.total_j; });
  group.formula("average_power", "W", "energy / simulated time", [&energy] { return energy.average_w; });
  group.formula("peak_power", "W", "largest mean power over an aligned 1 us window",
                [&energy] { return energy.peak_w; });
}

// Each stage's simulated and eq. (4) time and energy over the run, and the
// decode steps they serve.
void declare_stage_stats(stats::Group& root, const CimRuntime& runtime, uint64_t decode_tokens) {
  root.formula_integer(kRunDecodeTokens, "count", "decode steps simulated (tokens answered)",
                       [decode_tokens] { return decode_tokens; });
  for (int s = 0; s < cim::kStageCount; ++s) {
    const std::string key = metric_key(cim::to_string(static_cast<cim::Stage>(s)));
    const auto& stage = runtime.stages()[s];
    root.formula(family_member(kRunStageTime, key), "ns", "simulated time of the stage's steps, summed over the run",
                 [&stage] { return stage.sim_ns; });
    root.formula(family_member(kRunStageAnalyticTime, key), "ns", "the stage's time by paper 1's eq. (4) model",
                 [&stage] { return stage.analytic_ns; });
    root.formula(family_member(kRunStageEnergy, key), "J", "energy of the stage's steps",
                 [&stage] { return stage.energy_pj * 1e-12; });
  }
}

struct CimRun {
  CimRun(const CimParams& p, const link::LinkConfig& link, const CimInput& in, const std::string& file,
         const std::string& trace_path)
      : ledger(decode_ledger()),
        system("system", p, link, ledger),
        planner(p, link, in.header, system.resources(), file),
        ops(trace_path, in.source),
        runtime(ops, planner) {
    declare_outcome_stats(run_stats, runtime, energy);
    declare_stage_stats(outcome_stats, runtime, in.header.request().answer_tokens());
  }
  static core::EnergyLedger decode_ledger() {
    core::EnergyLedger ledger;
    ledger.set_clock([] { return sc_core::sc_time_stamp().value(); });
    ledger.set_phase("decode", 0);
    return ledger;
  }
  core::EnergyLedger ledger;
  CimSystem system;
  const CimPlanner planner;
  OpStream ops;
  CimRuntime runtime;
  core::EnergyLedger::Summary energy;  // set when the run is summarised
  stats::Group run_stats{"system.run"};
  stats::Group outcome_stats{""};  // stages; phases and energy when the run is summarised (run_stats.h)
};

// Every op runnable before simulating: a first pass over the stream. Returns the op count.
uint64_t check_ops(const CimPlanner& planner, const std::string& trace_path, const ProgramSource& source) {
  uint64_t count = 0;
  OpStream check(trace_path, source);
  for (trace::Op o; check.next(o); ++count) planner.plan(o);
  return count;
}

// The waveform's files join the run's outputs, committed with them or not at all.
void simulate(CimRun& run, const std::string& trace_path, uint64_t op_count, const vcd::Options& waveform_options,
              OutputFiles& outputs) {
  std::unique_ptr<vcd::Writer> waveform;
  if (!waveform_options.path.empty()) {
    waveform = std::make_unique<vcd::Writer>(waveform_options);
    run.system.trace(*waveform);
    waveform->require_signals();
  }
  run.runtime.start();
  sc_core::sc_start();
  core::refuse_if_time_overflowed(trace_path);
  if (run.runtime.completed() != op_count)
    throw std::logic_error("cim system: " + std::to_string(run.runtime.completed()) + " of " +
                           std::to_string(op_count) + " ops completed");
  if (waveform) waveform->close({}, outputs);
  run.system.flush_energy();
}

void summarise(CimRun& run, RunSummary& summary) {
  const CimRuntime& runtime = run.runtime;
  declare_phase_times(run.outcome_stats, {{"decode", static_cast<double>(runtime.end_ps()) / 1e3}});
  run.energy = run.ledger.summarize(runtime.end_ps());
  // The units' dynamic energy: the decode systems charge no static energy to a component.
  declare_energy(run.outcome_stats, run.energy.dynamic_j_by_component, run.energy.j_by_phase);
  capture_stats(summary);
}

void write_run_stats(const CimRun& run, const RunSummary& summary, uint64_t max_context, AtomicFile& file,
                     const std::optional<StatsProvenance>& provenance) {
  stats::Group group("system.run");
  const double decode_tokens = std::max(1.0, summary.statistic(kRunDecodeTokens));
  group.formula("time_between_tokens", "ns", "simulated latency / decode steps",
                [&] { return summary.statistic(kRunLatency, "ns") / decode_tokens; });
  group.formula("energy_per_token", "J", "energy / decode steps",
                [&] { return summary.statistic(kRunEnergy) / decode_tokens; });
  group.formula_integer("ops_completed", "count", "ops of the program that completed",
                        [&] { return run.runtime.completed(); });
  group.formula_integer("ops_held_at_most", "count",
                        "ops read ahead of their completion at once (the runtime's window bounds it)",
                        [&] { return static_cast<uint64_t>(run.runtime.most_held()); });
  if (run.planner.is_cim())
    group.formula_integer("sram_code_capacity_tokens", "count",
                          "compressed tokens whose codes fit in controller SRAM beside window and pursuit state",
                          [&] { return run.planner.footprint(max_context).sram_code_capacity_tokens; });
  write_stats(file, provenance, &summary);
}

}  // namespace

RunSummary run_cim_system(const schema::LoadedPlatform& loaded, const std::string& trace_path,
                          const RunOptions& options) {
  const schema::Platform& platform = loaded.platform;
  check_architecture(loaded);
  check_isp_accelerator(loaded, false, "paper 1's decode system: NPU, host CPU and CIM flash array");
  const CimParams& p = platform.cim();  // resolved by the loader
  const link::LinkConfig link_config = link::LinkConfig::from_params(platform.link(), loaded.file + ": link");
  const CimInput in = read_cim_input(loaded, trace_path);

  RunSummary summary;
  summary.platform = platform.name();
  summary.program = in.source.name();
  {  // capacity check before anything is simulated
    const CimPlanner probe(p, link_config, in.header, CimResources{}, loaded.file);
    summary.failure = capacity_problem(probe, p, probe.footprint(in.max_context), in.max_context, summary.note);
    if (!summary.failure.empty()) {
      summary.out_of_memory = true;
      return summary;
    }
  }

  OutputFiles outputs;
  AtomicFile* stats_file = open_stats_file(outputs, options.stats_path);
  if (!options.timeline_path.empty()) throw BadInput("--timeline", "the decode systems of paper 1 write no timeline");
  CimRun run(p, link_config, in, loaded.file, trace_path);
  simulate(run, trace_path, check_ops(run.planner, trace_path, in.source), options.waveform, outputs);
  summarise(run, summary);
  if (stats_file) write_run_stats(run, summary, in.max_context, *stats_file, options.stats_provenance);
  if (options.before_commit) options.before_commit(summary);
  outputs.commit();
  return summary;
}

}  // namespace ispsim::systems
