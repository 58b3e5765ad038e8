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
#include "models/isp/tiling.h"
#include "models/link/nvme.h"
#include "models/link/pcie_link.h"
#include "models/ssd/ftl/drive_state.h"
#include "models/ssd/ssd.h"
#include "platforms/systems/isp_selection.h"
#include "platforms/systems/progress.h"
#include "platforms/systems/runtime.h"
#include "platforms/systems/stats_output.h"
#include "traces/trace_io.h"
#include "traces/trace_validator.h"

namespace ispsim::systems {
namespace {

using sc_core::sc_time;

uint64_t now_ps() { return sc_core::sc_time_stamp().value(); }

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


// The program's ops, checked for what this system can run.
std::vector<trace::Op> read_program(const std::string& path, trace::Program program, const std::string& platform,
                                    trace::Header& header) {
  trace::TraceReader reader(path);
  header = reader.header();
  bool declared = false;
  for (const auto& p : header.programs()) declared |= p.program() == program;
  if (!declared)
    throw BadInput(path, "has no " + trace::Program_Name(program) + " program, which platform '" + platform +
                             "' runs");
  std::vector<trace::Op> ops;
  trace::Op op;
  while (reader.next(op)) {
    if (op.program() != program) continue;
    if (op.has_dict_encode() || op.has_dict_attention())
      throw BadInput(path, "op " + std::to_string(op.id()) + ": dictionary-compressed KV is not modelled by platform '" +
                               platform + "'");
    ops.push_back(op);
  }
  return ops;
}

// Sizes of the KV regions the SSD must hold: the context (precomputed, per
// layer) and the most entries any layer appends.
ssd::KvSpace kv_space(const trace::Header& header, const std::vector<trace::Op>& ops) {
  ssd::KvSpace space;
  space.shape = header.model();
  for (const auto& d : header.request().documents()) space.precomputed_tokens += d.tokens();
  std::map<uint32_t, uint64_t> appended;
  for (const trace::Op& op : ops)
    if (op.has_kv_append()) {
      const trace::KvTransfer& t = op.kv_append();
      appended[op.layer()] += trace::moved_tokens(t);
    }
  for (const auto& [layer, n] : appended) space.appended_capacity = std::max(space.appended_capacity, n);
  return space;
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

// --- the runtime's view of the devices ----------------------------------------

class GpuPort : public HostComputePort {
 public:
  GpuPort(host::Gpu& gpu, const trace::ModelShape& shape, bool grows_kv_by_copy)
      : gpu_(gpu), shape_(shape), grows_kv_by_copy_(grows_kv_by_copy) {}
  bool grows_kv_by_copy() const override { return grows_kv_by_copy_; }
  sc_time compute(const trace::Op& op, Done done) override {
    const sc_time start = gpu_.free_at();
    gpu_.execute(op, shape_, std::move(done));
    return start;
  }

 private:
  host::Gpu& gpu_;
  const trace::ModelShape shape_;
  const bool grows_kv_by_copy_;
};

class StagingAdapter : public StagingPort {
 public:
  explicit StagingAdapter(host::HostMemory& memory) : memory_(memory) {}
  void plan(uint64_t kv_bytes) override { memory_.plan(kv_bytes); }
  uint64_t lookup(uint32_t layer, trace::KvRegion region, uint64_t bytes) override {
    return memory_.lookup({layer, region}, bytes);
  }
  void append(uint32_t layer, trace::KvRegion region, uint64_t bytes) override { memory_.append({layer, region}, bytes); }
  void overwrite(uint32_t layer, trace::KvRegion region, uint64_t bytes) override {
    memory_.overwrite({layer, region}, bytes);
  }
  void fetched(uint32_t layer, trace::KvRegion region, uint64_t read_bytes, uint64_t key_bytes) override {
    memory_.fetched({layer, region}, read_bytes, key_bytes);
  }

 private:
  host::HostMemory& memory_;
};

class SsdPort : public StoragePort {
 public:
  SsdPort(ssd::Ssd& ssd, link::Nvme& nvme, host::StorageReadPath& load_path, host::StorageReadPath& swap_path,
          core::Timeline* timeline)
      : ssd_(ssd), nvme_(nvme), load_path_(load_path), swap_path_(swap_path), timeline_(timeline) {}

  // The SSD read, then one of the host's software paths (models/host/storage_read_path.h).
  void read_to_host(uint32_t layer, trace::KvRegion region, uint64_t token_begin, uint64_t token_end, uint64_t bytes,
                    HostReadPath path, Done done) override {
    Done usable =
        traced("SSD to host KV reads", "kv read L" + std::to_string(layer), std::move(done), args(layer, bytes));
    host::StorageReadPath& host_path = path == HostReadPath::kLoad ? load_path_ : swap_path_;
    ssd_.host_read(layer, region, token_begin, token_end, [&host_path, bytes, usable = std::move(usable)]() mutable {
      host_path.deliver(bytes, std::move(usable));
    });
  }
  void write_from_host(uint32_t layer, uint64_t tokens, uint64_t bytes, Done done) override {
    ssd_.host_write(layer, 0, tokens, bytes,
                    traced("background KV writes", "write-through L" + std::to_string(layer), std::move(done),
                           args(layer, bytes)));
  }
  void append_in_ssd(uint32_t layer, uint64_t tokens, uint64_t bytes, Done done) override {
    ssd_.append(layer, tokens, bytes,
                traced("background KV writes", "append L" + std::to_string(layer), std::move(done),
                       args(layer, bytes)));
  }
  void prefetch_attention(const SsdAttention& w) override { ssd_.prefetch_attention(w); }
  // AiF's vendor command: the input vector goes in where a fused command's Q
  // goes (PCIe purpose q_fused), the output comes back as its O rows
  // (attention_output).
  void gemv_in_flash(uint64_t weight_bytes, uint64_t weight_elements, uint64_t rows, uint64_t input_bytes,
                     uint64_t output_bytes, Done done) override {
    link::FusedAttentionCommand cmd;
    cmd.q_bytes = input_bytes;
    cmd.output_bytes = output_bytes;
    nvme_.fused_attention(
        cmd,
        [this, weight_bytes, weight_elements, rows, input_bytes, output_bytes](Done backend_done) {
          ssd_.gemv_in_flash(weight_bytes, weight_elements, rows, input_bytes, output_bytes,
                             traced("in-flash GEMV", "gemv", std::move(backend_done),
                                    {-1, -1, static_cast<int64_t>(weight_bytes)}));
        },
        std::move(done));
  }
  void attention(const SsdAttention& work, Done done) override {
    link::FusedAttentionCommand cmd;  // what crosses PCIe
    cmd.mask_bytes = work.mask_bytes;
    cmd.q_bytes = work.q_bytes;
    cmd.kv_bytes = work.supplied_kv_bytes;
    cmd.output_bytes = work.output_bytes;
    const std::string name = "attention L" + std::to_string(work.layer) + " rows " + std::to_string(work.query_rows);
    nvme_.fused_attention(
        cmd,
        [this, work, name](Done backend_done) {
          ssd_.attention(work, traced("SSD ISP attention", name, std::move(backend_done), {-1, work.layer, -1}));
        },
        traced("NVMe fused-attention commands", name, std::move(done),
               args(work.layer, cmd.mask_bytes + cmd.q_bytes + cmd.kv_bytes + cmd.output_bytes)));
  }

 private:
  static core::SpanArgs args(uint32_t layer, uint64_t bytes) {
    return {-1, static_cast<int64_t>(layer), static_cast<int64_t>(bytes)};
  }
  // Wraps `done` so that the span from now to its call lands on `track`, whose
  // spans in flight (and bandwidth, where they carry bytes) become counters.
  Done traced(const char* track, std::string name, Done done, core::SpanArgs span_args) {
    if (!timeline_) return done;
    timeline_->derive_counters(track);
    const uint64_t start = now_ps();
    return [this, track, name = std::move(name), start, done = std::move(done), span_args] {
      timeline_->span(track, name, track, start, now_ps(), span_args);
      done();
    };
  }

  ssd::Ssd& ssd_;
  link::Nvme& nvme_;
  host::StorageReadPath& load_path_;
  host::StorageReadPath& swap_path_;
  core::Timeline* timeline_;
};

// The devices of one platform, children of the SystemC module "system".
struct System : sc_core::sc_module {
  System(sc_core::sc_module_name name, const schema::LoadedPlatform& loaded, const host::HostConfig& host_config,
         const trace::ModelShape& shape, const ssd::KvSpace& kv, core::EnergyLedger& ledger)
      : sc_module(name),
        pcie("pcie", link::LinkConfig::from_params(loaded.platform.link(), loaded.file + ": link"), &ledger),
        nvme("nvme", pcie),
        gpu("gpu", host_config, &ledger),
        load_path("load_path", host_config.load_path),
        swap_path("swap_path", host_config.swap_path),
        memory(std::string(this->name()) + ".host_memory", host_config, shape),
        ssd("ssd", loaded.platform.nand(), loaded.platform.ssd(), loaded.platform.isp(),
            loaded.platform.flash_coordinator(), kv, nvme, &ledger,
            /*computational=*/has_isp(loaded.platform), loaded.platform.modules(), loaded.platform.ftl()) {}
  link::PcieLink pcie;
  link::Nvme nvme;
  host::Gpu gpu;
  host::StorageReadPath load_path;  // precomputed KV from the RAG store
  host::StorageReadPath swap_path;  // KV the host offloaded itself
  host::HostMemory memory;
  ssd::Ssd ssd;
};

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
// tools/baselines/bottleneck.py reads): their busy-time statistics are read at
// every phase change and the difference goes to the phase that ends. Work is
// counted when a device books or finishes it, so a phase may carry up to one
// op's work of its neighbour.
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

  // The phase `ending` (a statistics key, "" for none) ends at `at_ps`.
  void change(const std::string& ending, uint64_t at_ps) {
    std::vector<double> now(resources().size(), 0.0);
    for (size_t i = 0; i < now.size(); ++i)
      if (const stats::Entry* e = stats::Registry::global().find(resources()[i].statistic)) now[i] = e->read();
    if (!ending.empty()) {
      std::vector<double>& busy = by_phase_[ending];
      busy.resize(now.size(), 0.0);
      for (size_t i = 0; i < now.size(); ++i) busy[i] += now[i] - last_[i];
      elapsed_ns_[ending] += ps_to_ns(at_ps - last_ps_);
    }
    last_ = std::move(now);
    last_ps_ = at_ps;
  }
  const std::map<std::string, std::vector<double>>& by_phase() const { return by_phase_; }
  double elapsed_ns(const std::string& phase) const { return elapsed_ns_.at(phase); }

 private:
  std::vector<double> last_ = std::vector<double>(resources().size(), 0.0);
  uint64_t last_ps_ = 0;
  std::map<std::string, std::vector<double>> by_phase_;  // ns per resource
  std::map<std::string, double> elapsed_ns_;
};

// "fused prefill" -> "fused_prefill": a phase's name as a statistics key.
std::string phase_key(const std::string& name) {
  std::string key = name;
  std::replace(key.begin(), key.end(), ' ', '_');
  return key;
}

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
  std::vector<trace::Op> ops;  // moved into the runtime when the run is assembled
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
  const uint64_t kv = resident_kv_bytes(kv_space(in.header, in.ops));
  if (kv <= memory.staging_capacity()) return "";
  return "the request's KV of " + std::to_string(kv) + " bytes must stay in GPU/host memory " +
         "(placement.kv_resident_in_host_memory) but only " + std::to_string(memory.staging_capacity()) +
         " bytes are left of the host DRAM budget of " + std::to_string(host.dram_capacity_bytes) +
         " bytes (host.dram_capacity_bytes) after " + std::to_string(memory.weight_bytes()) +
         " bytes of weights and the " + std::to_string(host.workspace_bytes) +
         "-byte workspace (host.workspace_bytes)";
}

// The runtime's background-write chunk: one page on every die.
uint64_t write_chunk_bytes(ssd::Ssd& ssd) {
  const nand::FlashConfig& flash = ssd.flash().config();
  return uint64_t{flash.page_bytes} * flash.channels * flash.dies_per_channel;
}

// Each op's simulated work (progress.h) under this SSD's stream model.
std::vector<uint64_t> op_works(const Runtime& runtime, ssd::Ssd& ssd) {
  const uint64_t page_bytes = ssd.config().aggregated_streams ? 0 : ssd.flash().config().page_bytes;
  std::vector<uint64_t> work;
  work.reserve(runtime.ops().size());
  for (const trace::Op& op : runtime.ops()) work.push_back(op_work(op, runtime.kv_bytes_per_token(), page_bytes));
  return work;
}

// An energy ledger that folds up to the simulation's current time.
struct SimulationLedger : core::EnergyLedger {
  SimulationLedger() { set_clock([] { return sc_core::sc_time_stamp().value(); }); }
};

// One run, assembled: the devices, the runtime's ports to them, the runtime,
// and what watches it (phases, progress, waveform). Members are built in order.
struct BlendRun {
  BlendRun(const schema::LoadedPlatform& loaded, BlendInput& in, const RunOptions& options, bool with_timeline)
      : timeline_or_null(with_timeline ? &timeline : nullptr),
        system("system", loaded, in.host_config, in.header.model(), kv_space(in.header, in.ops), ledger),
        gpu_port(system.gpu, in.header.model(), in.host_config.kv_grows_by_copy),
        staging(system.memory),
        ssd_port(system.ssd, system.nvme, system.load_path, system.swap_path, timeline_or_null),
        runtime(in.header, std::move(in.ops), loaded.platform.placement(), gpu_port, staging, ssd_port,
                write_chunk_bytes(system.ssd)),
        phases(ledger),
        progress(loaded.platform.name(), op_works(runtime, system.ssd), options.progress, options.progress_slot) {
    if (!options.drive_state_in.empty() || options.precondition)
      system.ssd.start_from({options.drive_state_in, options.precondition});
    system.ssd.engine().set_timeline(timeline_or_null);
    runtime.set_phase_listener([this](std::optional<trace::Phase> phase, uint64_t at_ps) {
      busy.change(phase_key(phases.current()), at_ps);
      phases.change(phase, at_ps);
      if (phase) progress.set_phase(phase_name(*phase));
    });
    runtime.set_completion_listener([this](size_t index) { progress.completed(index, now_ps()); });
    if (!options.waveform.path.empty()) trace_waveform(options.waveform);
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


// Prefill (every phase but decode): GPU compute vs the time the host waited
// for storage (NAND, PCIe and the ISP).
void summarise_prefill(const Runtime& runtime, RunSummary& summary) {
  uint64_t prefill_begin = UINT64_MAX, prefill_end = 0, prefill_gpu = 0;
  for (size_t i = 0; i < runtime.ops().size(); ++i) {
    if (runtime.ops()[i].phase() == trace::PHASE_DECODE) continue;
    const OpTiming& t = runtime.timing()[i];
    prefill_begin = std::min(prefill_begin, t.issued_ps);
    prefill_end = std::max(prefill_end, t.end_ps);
    if (t.on_gpu) prefill_gpu += t.end_ps - t.start_ps;
  }
  if (prefill_end <= prefill_begin) return;
  const uint64_t prefill = prefill_end - prefill_begin;
  summary.compute_ns = ps_to_ns(prefill_gpu);
  summary.exposed_nand_ns = ps_to_ns(prefill - std::min(prefill_gpu, prefill));
}

void summarise_traffic(const link::PcieLink& pcie, ssd::Ssd& ssd, RunSummary& summary) {
  for (link::Direction d : {link::Direction::HOST_TO_DEVICE, link::Direction::DEVICE_TO_HOST})
    for (int p = 0; p < link::kPurposeCount; ++p) {
      const auto purpose = static_cast<link::Purpose>(p);
      const uint64_t bytes = pcie.bytes(d, purpose);
      if (bytes) summary.pcie_bytes[std::string(link::to_string(d)) + "." + link::to_string(purpose)] = bytes;
    }
  summary.nand_read_bytes = ssd.nand_bytes_read();
  summary.nand_written_bytes = ssd.nand_bytes_programmed();
  // The attention datapath's DRAM traffic (what MemLLM's DRAM-less design removes);
  // the write buffer's traffic for appends is in system.ssd.dram_*_bytes.
  summary.controller_dram_bytes = ssd.engine().dram_bytes();
  summary.isp_compute_ns = ps_to_ns(ssd.engine().isp_compute_time().value());
  summary.nand_stream_ns = ps_to_ns(ssd.engine().nand_stream_time().value());
}

void summarise_energy(const core::EnergyLedger::Summary& energy, RunSummary& summary) {
  summary.energy_j = energy.total_j;
  for (const auto& [name, j] : energy.dynamic_j_by_component) summary.energy_j_by_component[name] += j;
  for (const auto& [name, j] : energy.static_j_by_component) summary.energy_j_by_component[name] += j;
  summary.energy_j_by_phase = energy.j_by_phase;
  summary.average_w = energy.average_w;
  summary.peak_w = energy.peak_w;
}

void summarise(BlendRun& run, RunSummary& summary) {
  const Runtime& runtime = run.runtime;
  summary.latency_ns = ps_to_ns(runtime.latency_ps());
  for (const PhaseSpan& p : run.phases.spans()) summary.phase_ns[p.name] += ps_to_ns(p.end_ps - p.start_ps);
  summarise_prefill(runtime, summary);
  summarise_traffic(run.system.pcie, run.system.ssd, summary);
  // Energy until the background writes finished, which may be after the last op.
  summarise_energy(run.ledger.summarize(std::max(runtime.latency_ps(), runtime.drained_ps())), summary);
}

// --- write ------------------------------------------------------------------

// The run's own statistics next to the devices', then all of them.
void write_run_stats(const Runtime& runtime, const RunSummary& summary, const PhaseBusy& phase_busy, AtomicFile& file) {
  stats::Group run("system.run");
  run.formula("latency", "ns", "end-to-end latency of the request (completion of its last op)",
              [&] { return summary.latency_ns; });
  run.formula("background_writes_end", "ns", "when the last background KV write finished",
              [&] { return ps_to_ns(runtime.drained_ps()); });
  run.formula("energy", "J", "energy of the run, dynamic and static, until the background writes finished",
              [&] { return summary.energy_j; });
  run.formula("average_power", "W", "energy / time until the background writes finished",
              [&] { return summary.average_w; });
  run.formula("peak_power", "W", "largest mean power over an aligned 1 us window", [&] { return summary.peak_w; });
  run.formula_integer("ops_completed", "count", "ops of the program that completed (a second completion is an error)",
                      [&] { return runtime.ops_completed(); });
  run.formula_integer("kv_bytes_read_to_host", "bytes", "KV the host read from the SSD (staging misses)",
                      [&] { return runtime.kv_bytes_read_to_host(); });
  run.formula_integer("kv_bytes_staging_hits", "bytes", "KV the host found staged in host DRAM",
                      [&] { return runtime.kv_bytes_staging_hits(); });
  for (const auto& [phase, busy] : phase_busy.by_phase()) {
    run.formula("phase_busy." + phase + ".elapsed", "ns", "time the phase ran",
                [value = phase_busy.elapsed_ns(phase)] { return value; });
    for (size_t i = 0; i < busy.size(); ++i)
      run.formula("phase_busy." + phase + "." + PhaseBusy::resources()[i].key, "ns",
                  "busy time of the resource while the phase ran (tools/baselines/bottleneck.py)",
                  [value = busy[i]] { return value; });
  }
  run.formula_integer("ssd_attention_prefetches", "count",
                      "SSD attention ops whose KV pages were read ahead of their command (inter-layer prefetch)",
                      [&] { return runtime.ssd_prefetches(); });
  write_stats(file);
}

// Each phase's average power (its energy over its time) from its start on,
// and zero once the last phase ends: one sample per phase interval.
void add_phase_power(const std::vector<PhaseSpan>& phases, const RunSummary& summary, core::Timeline& timeline) {
  std::map<std::string, uint64_t> phase_ps;
  for (const PhaseSpan& p : phases) phase_ps[p.name] += p.end_ps - p.start_ps;
  for (const PhaseSpan& p : phases) {
    const auto energy = summary.energy_j_by_phase.find(p.name);
    const double joules = energy == summary.energy_j_by_phase.end() ? 0 : energy->second;
    timeline.counter("power by phase (W)", p.start_ps, joules / (static_cast<double>(phase_ps[p.name]) * 1e-12));
  }
  if (!phases.empty()) timeline.counter("power by phase (W)", phases.back().end_ps, 0);
}

// The devices' spans, plus the host GPU's ops, the phases and their power.
void write_timeline(const Runtime& runtime, const std::vector<PhaseSpan>& phases, const RunSummary& summary,
                    core::Timeline& timeline, AtomicFile& file) {
  timeline.set_process(summary.platform);
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
  add_phase_power(phases, summary, timeline);
  timeline.write(file.stream());
}

// Writes the files that `outputs` commits, the waveform's among them.
void write_outputs(BlendRun& run, const RunSummary& summary, OutputFiles& outputs, AtomicFile* stats_file,
                   AtomicFile* timeline_file) {
  if (run.waveform) run.waveform->close(phase_markers(run.runtime, run.phases.spans()), outputs);
  if (stats_file) write_run_stats(run.runtime, summary, run.busy, *stats_file);
  if (timeline_file) write_timeline(run.runtime, run.phases.spans(), summary, run.timeline, *timeline_file);
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
  write_outputs(run, summary, outputs, stats_file, timeline_file);
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
