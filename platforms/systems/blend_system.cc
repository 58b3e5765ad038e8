#include "platforms/systems/blend_system.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <systemc>

#include "common/error.h"
#include "common/output_files.h"
#include "models/core/energy_ledger.h"
#include "models/core/sim_time.h"
#include "models/core/stats.h"
#include "models/core/timeline.h"
#include "models/core/vcd.h"
#include "models/host/gpu.h"
#include "models/host/host_config.h"
#include "models/host/host_memory.h"
#include "models/host/storage_read_path.h"
#include "models/isp/attention_planner.h"
#include "models/isp/tiling.h"
#include "models/link/nvme.h"
#include "models/link/pcie_link.h"
#include "models/ssd/ftl/drive_state.h"
#include "models/ssd/ssd.h"
#include "platforms/systems/blend_devices.h"
#include "platforms/systems/isp_selection.h"
#include "platforms/systems/metrics.h"
#include "platforms/systems/progress.h"
#include "platforms/systems/run_stats.h"
#include "platforms/systems/runtime.h"
#include "platforms/systems/stats_output.h"
#include "traces/trace_io.h"
#include "traces/trace_validator.h"

namespace ispsim::systems {
namespace {

using sc_core::sc_time;

double ps_to_ns(uint64_t ps) { return static_cast<double>(ps) / 1e3; }

const char* phase_name(trace::Phase phase) {
  switch (phase) {
    case trace::PHASE_HKVD_IDENTIFICATION: return "HKVD identification";
    case trace::PHASE_RECOMPUTATION: return "recomputation";
    case trace::PHASE_QUERY_PREFILL: return "query prefill";
    case trace::PHASE_FUSED_PREFILL: return "fused prefill";
    case trace::PHASE_FULL_PREFILL: return "full prefill";
    case trace::PHASE_DECODE: return "decode";
    default: return "other";
  }
}

const char* op_kind(const trace::Op& op) {
  switch (op.kind_case()) {
    case trace::Op::kGemm: return "gemm";
    case trace::Op::kAttention: return "attention";
    case trace::Op::kNonlinear: return "nonlinear";
    case trace::Op::kKvLoad: return "kv_load";
    case trace::Op::kKvAppend: return "kv_append";
    case trace::Op::kHkvdSelect: return "hkvd_select";
    case trace::Op::kDictEncode: return "dict_encode";
    case trace::Op::kDictAttention: return "dict_attention";
    case trace::Op::kEmbedding: return "embedding";
    case trace::Op::kLmHead: return "lm_head";
    default: return "op";
  }
}

// KV of every layer: the precomputed context plus the most appended entries
// any layer gets (HKVD substitutes, query, answer).
uint64_t resident_kv_bytes(const ssd::KvSpace& space) {
  return uint64_t{space.shape.layers()} * (space.precomputed_tokens + space.appended_capacity) *
         isp::kv_bytes_per_token(space.shape);
}

// Placement values that a field does not take.
void check_placement(const schema::LoadedPlatform& loaded) {
  const schema::PlacementParams& p = loaded.platform.placement();
  using P = schema::PlacementParams;
  auto attention_device = [&](P::Device d, const char* field) {
    if (d != P::HOST_GPU && d != P::SSD_ISP)
      throw BadInput(loaded.file, std::string("placement.") + field + " = " + P::Device_Name(d) +
                                      ": attention runs on HOST_GPU or SSD_ISP");
  };
  attention_device(p.prefill_attention(), "prefill_attention");
  attention_device(p.decode_attention(), "decode_attention");
  if (p.decode_linear() != P::HOST_GPU && p.decode_linear() != P::IN_FLASH)
    throw BadInput(loaded.file, "placement.decode_linear = " + P::Device_Name(p.decode_linear()) +
                                    ": weight GEMVs run on HOST_GPU or IN_FLASH");
}

// The runtime's view of the devices and the devices: blend_devices.h.

// --- the summary ------------------------------------------------------------

struct PhaseSpan {
  std::string name;
  uint64_t start_ps, end_ps;
};

// Each instant belongs to the phase of the earliest op (by id, i.e. in program
// order) that is in flight then, from its issue to its completion; runs of the
// same phase merge into one interval. The intervals are disjoint and cover the
// run, so the phase times add up to the latency even where the unfused
// CacheBlend passes overlap layer by layer. The runtime announces each change as
// it happens; the ledger is told the same, so energy and time per phase agree.
class PhaseTracker {
 public:
  explicit PhaseTracker(core::EnergyLedger& ledger) : ledger_(ledger) {}

  void change(std::optional<trace::Phase> phase, uint64_t at_ps) {
    const std::string name = phase ? phase_name(*phase) : "";
    ledger_.set_phase(name, at_ps);
    if (at_ps > from_ps_ && !name_.empty()) {  // a later change at the same time replaces this one
      if (!spans_.empty() && spans_.back().name == name_ && spans_.back().end_ps == from_ps_)
        spans_.back().end_ps = at_ps;
      else
        spans_.push_back({name_, from_ps_, at_ps});
    }
    name_ = name;
    from_ps_ = at_ps;
  }
  const std::vector<PhaseSpan>& spans() const { return spans_; }
  const std::string& current() const { return name_; }

 private:
  core::EnergyLedger& ledger_;
  std::string name_;  // "" while nothing is in flight
  uint64_t from_ps_ = 0;
  std::vector<PhaseSpan> spans_;
};

// Busy time per phase of the resources that can bound a request (what
// tools/baselines/bottleneck.py reads beside the phases' times): their
// busy-time statistics are read at every phase change and the difference goes
// to the phase that ends. Work is counted when a device books or finishes it,
// so a phase may carry up to one op's work of its neighbour.
class PhaseBusy {
 public:
  struct Resource {
    const char* key;
    const char* statistic;
  };
  static const std::vector<Resource>& resources() {
    static const std::vector<Resource> r = {{"nand_stream", "system.ssd.attention.nand_stream_time"},
                                            {"internal_bus", "system.ssd.bus.busy_time"},
                                            {"controller_dram", "system.ssd.dram.busy_time"},
                                            {"isp_compute", "system.ssd.attention.isp_compute_time"},
                                            {"pcie_host_to_device", "system.pcie.host_to_device.busy_time"},
                                            {"pcie_device_to_host", "system.pcie.device_to_host.busy_time"},
                                            {"host_gpu", "system.gpu.stream.busy_time"}};
    return r;
  }

  // The phase `ending` (a statistics key, "" for none) ends now.
  void change(const std::string& ending) {
    std::vector<double> now(resources().size(), 0.0);
    for (size_t i = 0; i < now.size(); ++i)
      if (const stats::Entry* e = stats::Registry::global().find(resources()[i].statistic)) now[i] = e->read();
    if (!ending.empty()) {
      std::vector<double>& busy = by_phase_[ending];
      busy.resize(now.size(), 0.0);
      for (size_t i = 0; i < now.size(); ++i) busy[i] += now[i] - last_[i];
    }
    last_ = std::move(now);
  }
  const std::map<std::string, std::vector<double>>& by_phase() const { return by_phase_; }

 private:
  std::vector<double> last_ = std::vector<double>(resources().size(), 0.0);
  std::map<std::string, std::vector<double>> by_phase_;  // ns per resource
};

// The waveform view's named markers: where each phase first begins, and each
// decode step (its first op's issue).
std::vector<vcd::Marker> phase_markers(const Runtime& rt, const std::vector<PhaseSpan>& spans) {
  std::vector<vcd::Marker> markers;
  std::set<std::string> marked;
  for (const PhaseSpan& p : spans) {
    if (p.name != phase_name(trace::PHASE_DECODE) && marked.insert(p.name).second)
      markers.push_back({p.start_ps, p.name});
  }
  std::map<uint32_t, uint64_t> step_begin_ps;
  for (size_t i = 0; i < rt.ops().size(); ++i) {
    const trace::Op& op = rt.ops()[i];
    if (op.phase() != trace::PHASE_DECODE || !op.has_decode_step()) continue;
    const auto [it, first] = step_begin_ps.emplace(op.decode_step(), rt.timing()[i].issued_ps);
    if (!first) it->second = std::min(it->second, rt.timing()[i].issued_ps);
  }
  for (const auto& [step, at_ps] : step_begin_ps) markers.push_back({at_ps, "decode step " + std::to_string(step)});
  return markers;
}


// --- assemble ---------------------------------------------------------------

// What one run reads, checked against the platform before anything is built.
struct BlendInput {
  trace::Program program;
  trace::Header header;
  trace::InternedOps ops;  // moved into the runtime when the run is assembled
  host::HostConfig host_config;
};

trace::Program blend_program(const schema::LoadedPlatform& loaded) {
  const std::string name = schema::Platform::Program_Name(loaded.platform.program());
  trace::Program program;
  if (!trace::Program_Parse(name, &program) ||
      (program != trace::FULL_PREFILL && program != trace::PRECOMPUTED_BLEND &&
       program != trace::PRECOMPUTED_BLEND_FUSED))
    throw BadInput(loaded.file, "program " + name +
                                    " is not run by the LLM-inference system (FULL_PREFILL, PRECOMPUTED_BLEND, "
                                    "PRECOMPUTED_BLEND_FUSED)");
  return program;
}

BlendInput read_input(const schema::LoadedPlatform& loaded, const std::string& trace_path) {
  const schema::Platform& platform = loaded.platform;
  BlendInput in;
  in.program = blend_program(loaded);
  in.ops = read_program(trace_path, in.program, platform.name(), in.header);
  check_blend_platform(loaded);
  in.host_config = host::HostConfig::from_params(platform.host(), loaded.file + ": host");
  return in;
}

// Why the model's weights, or a KV that must stay resident, do not fit the
// host's DRAM budget; "" when they fit.
std::string memory_shortfall(const schema::Platform& platform, const BlendInput& in) {
  const host::HostConfig& host = in.host_config;
  host::HostMemory memory("probe", host, in.header.model());
  if (!memory.weights_fit())
    return "model weights of " + std::to_string(memory.weight_bytes()) + " bytes plus the " +
           std::to_string(host.workspace_bytes) + "-byte workspace exceed the host DRAM budget of " +
           std::to_string(host.dram_capacity_bytes) + " bytes (host.dram_capacity_bytes)";
  if (!platform.placement().kv_resident_in_host_memory()) return "";
  const uint64_t kv = resident_kv_bytes(kv_space(in.header, in.ops.ops));
  if (kv <= memory.staging_capacity()) return "";
  return "the request's KV of " + std::to_string(kv) + " bytes must stay in GPU/host memory " +
         "(placement.kv_resident_in_host_memory) but only " + std::to_string(memory.staging_capacity()) +
         " bytes are left of the host DRAM budget of " + std::to_string(host.dram_capacity_bytes) +
         " bytes (host.dram_capacity_bytes) after " + std::to_string(memory.weight_bytes()) +
         " bytes of weights and the " + std::to_string(host.workspace_bytes) +
         "-byte workspace (host.workspace_bytes)";
}


// How many times attention `op` streams its KV: once, or once per row chunk of
// an in-storage attention reduced in the coordinator's SRAM. Rows that do not
// fit at all count once; the run refuses them.
uint64_t kv_passes(const Runtime& runtime, ssd::Ssd& ssd, const trace::ModelShape& model, const trace::Op& op) {
  const isp::AttentionPlanner& planner = ssd.engine().planner();
  if (!op.has_attention() || runtime.attention_device(op) != schema::PlacementParams::SSD_ISP ||
      planner.reduction() != isp::Reduction::GLOBAL_SRAM)
    return 1;
  try {
    return planner.lse().chunk_rows(op.attention().query_rows(), model.heads(), model.head_dim(), model.activation_bits())
        .passes;
  } catch (const BadInput&) {
    return 1;
  }
}

// Each op's simulated work (progress.h) under this SSD's stream model.
std::vector<uint64_t> op_works(const Runtime& runtime, ssd::Ssd& ssd, const trace::ModelShape& model) {
  const uint64_t page_bytes = ssd.config().aggregated_streams ? 0 : ssd.flash().config().page_bytes;
  std::vector<uint64_t> work;
  work.reserve(runtime.ops().size());
  for (const trace::Op& op : runtime.ops())
    work.push_back(op_work(op, runtime.kv_bytes_per_token(), page_bytes, kv_passes(runtime, ssd, model, op)));
  return work;
}


// One run, assembled: the devices, the runtime's ports to them, the runtime,
// and what watches it (phases, progress, waveform). Members are built in order.
// Prefill (every phase but decode): GPU compute vs the time the host waited
// for storage (NAND, PCIe and the ISP), in ps.
struct PrefillTimes {
  uint64_t compute_ps = 0, exposed_ps = 0;
};
PrefillTimes prefill_times(const Runtime& runtime) {
  uint64_t prefill_begin = UINT64_MAX, prefill_end = 0, prefill_gpu = 0;
  for (size_t i = 0; i < runtime.ops().size(); ++i) {
    if (runtime.ops()[i].phase() == trace::PHASE_DECODE) continue;
    const OpTiming& t = runtime.timing()[i];
    prefill_begin = std::min(prefill_begin, t.issued_ps);
    prefill_end = std::max(prefill_end, t.end_ps);
    if (t.on_gpu) prefill_gpu += t.end_ps - t.start_ps;
  }
  if (prefill_end <= prefill_begin) return {};
  const uint64_t prefill = prefill_end - prefill_begin;
  return {prefill_gpu, prefill - std::min(prefill_gpu, prefill)};
}

// The run's statistics that the metric list reads (metrics.h).
void declare_prefill_stats(stats::Group& group, const Runtime& runtime) {
  group.formula("prefill_compute_time", "ns", "GPU compute time during prefill (every phase but decode)",
                [&runtime] { return ps_to_ns(prefill_times(runtime).compute_ps); });
  group.formula("prefill_exposed_nand_time", "ns",
                "prefill time the host waited for storage (NAND, PCIe, ISP) beyond its GPU compute",
                [&runtime] { return ps_to_ns(prefill_times(runtime).exposed_ps); });
}

// The run's outcome: its latency and, once summarised, its energy and power.
void declare_outcome_stats(stats::Group& group, const Runtime& runtime,
                           const core::EnergyLedger::Summary& energy) {
  group.formula("latency", "ns", "end-to-end latency of the request (completion of its last op)",
                [&runtime] { return ps_to_ns(runtime.latency_ps()); });
  group.formula("energy", "J", "energy of the run, dynamic and static, until the background writes finished",
                [&energy] { return energy.total_j; });
  group.formula("average_power", "W", "energy / time until the background writes finished",
                [&energy] { return energy.average_w; });
  group.formula("peak_power", "W", "largest mean power over an aligned 1 us window",
                [&energy] { return energy.peak_w; });
}

struct BlendRun {
  BlendRun(const schema::LoadedPlatform& loaded, BlendInput& in, const RunOptions& options, bool with_timeline)
      : timeline_or_null(with_timeline ? &timeline : nullptr),
        system("system", loaded, in.host_config, in.header.model(), kv_space(in.header, in.ops.ops), ledger),
        gpu_port(system.gpu, in.header.model(), in.host_config.kv_grows_by_copy),
        staging(system.memory),
        ssd_port(system.ssd, system.nvme, system.load_path, system.swap_path, timeline_or_null),
        runtime(in.header, std::move(in.ops), loaded.platform.placement(), gpu_port, staging, ssd_port,
                write_chunk_bytes(system.ssd)),
        phases(ledger),
        progress(loaded.platform.name(), op_works(runtime, system.ssd, in.header.model()), options.progress, options.progress_slot) {
    if (!options.drive_state_in.empty() || options.precondition)  // else the SSD's fresh drive
      system.ssd.start_from({options.drive_state_in, options.precondition});
    system.ssd.engine().set_timeline(timeline_or_null);
    system.ssd.set_timeline(timeline_or_null);
    runtime.set_phase_listener([this](std::optional<trace::Phase> phase, uint64_t at_ps) {
      busy.change(phase_key(phases.current()));
      phases.change(phase, at_ps);
      if (phase) progress.set_phase(phase_name(*phase));
    });
    runtime.set_completion_listener([this](size_t index) { progress.completed(index, now_ps()); });
    if (!options.waveform.path.empty()) trace_waveform(options.waveform);
    declare_prefill_stats(run_stats, runtime);
    declare_outcome_stats(run_stats, runtime, energy);
  }
  BlendRun(const BlendRun&) = delete;
  BlendRun& operator=(const BlendRun&) = delete;

  void trace_waveform(const vcd::Options& waveform_options) {
    waveform = std::make_unique<vcd::Writer>(waveform_options);
    system.pcie.trace(*waveform);
    system.gpu.trace(*waveform);
    system.load_path.trace(*waveform);
    system.swap_path.trace(*waveform);
    system.ssd.trace(*waveform);
    waveform->require_signals();
  }

  core::Timeline timeline;
  core::Timeline* timeline_or_null;  // what the devices record spans into
  SimulationLedger ledger;
  System system;
  GpuPort gpu_port;
  StagingAdapter staging;
  SsdPort ssd_port;
  Runtime runtime;
  PhaseTracker phases;
  PhaseBusy busy;
  Progress progress;
  std::unique_ptr<vcd::Writer> waveform;  // null without --vcd
  core::EnergyLedger::Summary energy;     // set when the run is summarised
  stats::Group run_stats{"system.run"};
  stats::Group outcome_stats{""};  // phases and energy, declared when the run is summarised (run_stats.h)
};

// --- simulate ---------------------------------------------------------------

void simulate(Runtime& runtime, const std::string& trace_path) {
  runtime.start();
  sc_core::sc_start();
  core::refuse_if_time_overflowed(trace_path);
  if (!runtime.refusal().empty()) throw BadInput(trace_path, runtime.refusal());
  runtime.check_finished();
}

// --- summarise --------------------------------------------------------------


// Each component's dynamic and static energy.
std::map<std::string, double> energy_by_component(const core::EnergyLedger::Summary& energy) {
  std::map<std::string, double> j;
  for (const auto& [name, dynamic_j] : energy.dynamic_j_by_component) j[name] += dynamic_j;
  for (const auto& [name, static_j] : energy.static_j_by_component) j[name] += static_j;
  return j;
}

void summarise(BlendRun& run, RunSummary& summary) {
  const Runtime& runtime = run.runtime;
  std::map<std::string, double> ns_by_phase;
  for (const PhaseSpan& p : run.phases.spans()) ns_by_phase[p.name] += ps_to_ns(p.end_ps - p.start_ps);
  declare_phase_times(run.outcome_stats, ns_by_phase);
  // Energy until the background writes finished, which may be after the last op.
  run.energy = run.ledger.summarize(std::max(runtime.latency_ps(), runtime.drained_ps()));
  declare_energy(run.outcome_stats, energy_by_component(run.energy), run.energy.j_by_phase);
  capture_stats(summary);
}

// --- write ------------------------------------------------------------------

// The run's own statistics next to the devices', then all of them.
void write_run_stats(const Runtime& runtime, const RunSummary& summary, const PhaseBusy& phase_busy, AtomicFile& file,
                     const std::optional<StatsProvenance>& provenance) {
  stats::Group run("system.run");
  run.formula("background_writes_end", "ns", "when the last background KV write finished",
              [&] { return ps_to_ns(runtime.drained_ps()); });
  run.formula_integer("ops_completed", "count", "ops of the program that completed (a second completion is an error)",
                      [&] { return runtime.ops_completed(); });
  run.formula_integer("kv_bytes_read_to_host", "bytes", "KV the host read from the SSD (staging misses)",
                      [&] { return runtime.kv_bytes_read_to_host(); });
  run.formula_integer("kv_bytes_staging_hits", "bytes", "KV the host found staged in host DRAM",
                      [&] { return runtime.kv_bytes_staging_hits(); });
  for (const auto& [phase, busy] : phase_busy.by_phase())
    for (size_t i = 0; i < busy.size(); ++i)
      run.formula("phase_busy." + phase + "." + PhaseBusy::resources()[i].key, "ns",
                  "busy time of the resource while the phase ran (tools/baselines/bottleneck.py)",
                  [value = busy[i]] { return value; });
  run.formula_integer("ssd_attention_prefetches", "count",
                      "SSD attention ops whose KV pages were read ahead of their command (inter-layer prefetch)",
                      [&] { return runtime.ssd_prefetches(); });
  write_stats(file, provenance, &summary);
}

// Each phase's average power (its energy over its time) from its start on,
// and zero once the last phase ends: one sample per phase interval.
void add_phase_power(const std::vector<PhaseSpan>& phases, const std::map<std::string, double>& j_by_phase,
                     core::Timeline& timeline) {
  std::map<std::string, uint64_t> phase_ps;
  for (const PhaseSpan& p : phases) phase_ps[p.name] += p.end_ps - p.start_ps;
  for (const PhaseSpan& p : phases) {
    const auto energy = j_by_phase.find(p.name);
    const double joules = energy == j_by_phase.end() ? 0 : energy->second;
    timeline.counter("power by phase (W)", p.start_ps, joules / (static_cast<double>(phase_ps[p.name]) * 1e-12));
  }
  if (!phases.empty()) timeline.counter("power by phase (W)", phases.back().end_ps, 0);
}

// The devices' spans, plus the host GPU's ops, the phases and their power.
void write_timeline(const BlendRun& run, const std::string& platform, core::Timeline& timeline, AtomicFile& file) {
  const Runtime& runtime = run.runtime;
  const std::vector<PhaseSpan>& phases = run.phases.spans();
  timeline.set_process(platform);
  timeline.derive_counters("host GPU");
  for (size_t i = 0; i < runtime.ops().size(); ++i) {
    const trace::Op& op = runtime.ops()[i];
    const OpTiming& t = runtime.timing()[i];
    if (!t.on_gpu) continue;
    std::string name = op.label().empty() ? op_kind(op) : op.label();
    if (op.has_layer()) name += " L" + std::to_string(op.layer());
    const core::SpanArgs args{static_cast<int64_t>(op.id()), op.has_layer() ? static_cast<int64_t>(op.layer()) : -1};
    timeline.span("host GPU", name, phase_name(op.phase()), t.start_ps, t.end_ps, args);
  }
  for (const PhaseSpan& p : phases) timeline.span("phases", p.name, "phase", p.start_ps, p.end_ps);
  add_phase_power(phases, run.energy.j_by_phase, timeline);
  timeline.write(file.stream());
}

// Writes the files that `outputs` commits, the waveform's among them.
void write_outputs(BlendRun& run, const RunSummary& summary, OutputFiles& outputs, AtomicFile* stats_file,
                   AtomicFile* timeline_file, const std::optional<StatsProvenance>& stats_provenance) {
  if (run.waveform) run.waveform->close(phase_markers(run.runtime, run.phases.spans()), outputs);
  if (stats_file) write_run_stats(run.runtime, summary, run.busy, *stats_file, stats_provenance);
  if (timeline_file) write_timeline(run, summary.platform, run.timeline, *timeline_file);
}

}  // namespace

void check_blend_platform(const schema::LoadedPlatform& loaded) {
  check_placement(loaded);
  check_isp_accelerator(loaded, has_isp(loaded.platform), "its attention runs on the host GPU");
}

RunSummary run_blend_system(const schema::LoadedPlatform& loaded, const std::string& trace_path,
                            const RunOptions& options) {
  BlendInput input = read_input(loaded, trace_path);
  RunSummary summary;
  summary.platform = loaded.platform.name();
  summary.program = trace::Program_Name(input.program);
  summary.failure = memory_shortfall(loaded.platform, input);
  if (!summary.failure.empty()) {
    summary.out_of_memory = true;
    return summary;
  }

  OutputFiles outputs;  // opened before the simulation, so that an unwritable path fails at once
  AtomicFile* stats_file = open_stats_file(outputs, options.stats_path);
  AtomicFile* timeline_file = outputs.open(options.timeline_path);
  AtomicFile* drive_file = outputs.open(options.drive_state_out);
  BlendRun run(loaded, input, options, timeline_file != nullptr);
  simulate(run.runtime, trace_path);
  summarise(run, summary);
  write_outputs(run, summary, outputs, stats_file, timeline_file, options.stats_provenance);
  if (drive_file) {
    run.system.ssd.finish_request();
    const std::string state = ftl::DriveState::serialize(run.system.ssd.translation().ftl());
    drive_file->stream().write(state.data(), std::streamsize(state.size()));
  }
  if (options.before_commit) options.before_commit(summary);
  outputs.commit();
  return summary;
}

}  // namespace ispsim::systems
