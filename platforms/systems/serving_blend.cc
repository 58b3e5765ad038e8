#include "platforms/systems/serving_blend.h"

#include <algorithm>
#include <exception>
#include <list>
#include <map>
#include <memory>
#include <sstream>
#include <utility>

#include "common/error.h"
#include "common/output_files.h"
#include "models/core/sim_time.h"
#include "platforms/systems/blend_devices.h"
#include "platforms/systems/blend_system.h"
#include "platforms/systems/report_cells.h"
#include "platforms/systems/serving_batch.h"
#include "platforms/systems/serving_staging.h"
#include "platforms/systems/stats_output.h"
#include "traces/trace_validator.h"
#include "traces/workload/request_trace.h"

namespace ispsim::systems {
namespace {

trace::Program platform_program(const schema::LoadedPlatform& loaded) {
  trace::Program program;
  const std::string name = schema::Platform::Program_Name(loaded.platform.program());
  if (!trace::Program_Parse(name, &program) ||
      (program != trace::FULL_PREFILL && program != trace::PRECOMPUTED_BLEND &&
       program != trace::PRECOMPUTED_BLEND_FUSED))
    throw BadInput(loaded.file, "program " + name + " does not serve request streams (the MemLLM-study "
                                "platforms do: FULL_PREFILL, PRECOMPUTED_BLEND, PRECOMPUTED_BLEND_FUSED)");
  return program;
}

// Where a request's checks point: the stream's request.
std::string request_where(const workload::StreamRequest& request) {
  return "request " + std::to_string(request.index()) + " of the stream";
}

// The KV regions the SSD must hold for the stream (a first pass over its
// requests' shapes): the longest context, and every request's appended KV one
// after the other (the drive does not trim a finished request's KV yet).
ssd::KvSpace stream_kv_space(const std::string& stream_path) {
  workload::StreamReader reader(stream_path);
  ssd::KvSpace space;
  space.shape = reader.header().model();
  workload::StreamRecord record;
  while (reader.next(record)) {
    if (!record.has_request()) continue;
    const workload::RequestKvTokens one = workload::request_kv_tokens(record.request());
    space.precomputed_tokens = std::max(space.precomputed_tokens, one.precomputed);
    space.appended_capacity += one.appended;
  }
  return space;
}

// Why the platform cannot hold a request of the stream, "" when it can: as
// `run` refuses a request, the weights do not fit the host DRAM budget, or a
// request's KV must stay in host memory (placement.kv_resident_in_host_memory)
// and does not fit what the weights leave: its context plus C + Q + A appended
// entries (request_kv_tokens) in every layer.
std::string memory_shortfall(const schema::LoadedPlatform& loaded, const std::string& stream_path) {
  const host::HostConfig host = host::HostConfig::from_params(loaded.platform.host(), loaded.file + ": host");
  workload::StreamReader reader(stream_path);
  const trace::ModelShape& model = reader.header().model();
  const host::HostMemory memory("serving_probe", host, model);
  if (!memory.weights_fit())
    return "model weights of " + std::to_string(memory.weight_bytes()) + " bytes plus the " +
           std::to_string(host.workspace_bytes) + "-byte workspace exceed the host DRAM budget of " +
           std::to_string(host.dram_capacity_bytes) + " bytes (host.dram_capacity_bytes)";
  if (!loaded.platform.placement().kv_resident_in_host_memory()) return "";
  const uint64_t per_token = trace::dense_kv_bytes_per_token(model, trace::KV_PARTS_K_AND_V, model.kv_bits());
  workload::StreamRecord record;
  uint64_t largest = 0;
  while (reader.next(record)) {
    if (!record.has_request()) continue;
    const workload::RequestKvTokens kv = workload::request_kv_tokens(record.request());
    const uint64_t bytes = uint64_t{model.layers()} * (kv.precomputed + kv.appended) * per_token;
    largest = std::max(largest, bytes);
    if (bytes > memory.staging_capacity())
      return request_where(record.request()) + ": its KV of " + std::to_string(bytes) +
             " bytes must stay in GPU/host memory (placement.kv_resident_in_host_memory) but only " +
             std::to_string(memory.staging_capacity()) +
             " bytes of the host DRAM budget are left (host.dram_capacity_bytes)";
  }
  // Requests in service together hold their KV together (conservatively, the largest one's each).
  const uint64_t limit = loaded.platform.host().batch_limit();
  if (limit > 1 && largest > memory.staging_capacity() / limit)
    return std::to_string(limit) + " requests in service together (host.batch_limit) must keep their KV in "
           "GPU/host memory (placement.kv_resident_in_host_memory): " + std::to_string(limit) +
           " x the largest request's " + std::to_string(largest) + " bytes exceed the " +
           std::to_string(memory.staging_capacity()) + " bytes of the host DRAM budget left (host.dram_capacity_bytes)";
  return "";
}

// What the devices have done since the start of the simulation.
struct DeviceTotals {
  uint64_t at_ps = 0;
  double dynamic_j = 0;
  uint64_t nand_read = 0, nand_written = 0, pcie_host_to_device = 0, pcie_device_to_host = 0;
};

DeviceTotals device_totals(System& system, const core::EnergyLedger& ledger) {
  DeviceTotals t;
  t.at_ps = now_ps();
  t.dynamic_j = ledger.dynamic_j();
  t.nand_read = system.ssd.nand_bytes_read();
  t.nand_written = system.ssd.nand_bytes_programmed();
  t.pcie_host_to_device = system.pcie.bytes(link::Direction::HOST_TO_DEVICE);
  t.pcie_device_to_host = system.pcie.bytes(link::Direction::DEVICE_TO_HOST);
  return t;
}

class BlendExecutor : public RequestExecutor {
 public:
  BlendExecutor(const schema::LoadedPlatform& loaded, const workload::StreamHeader& stream, trace::Program program,
                const ssd::KvSpace& space)
      : loaded_(loaded),
        stream_(stream),
        program_(program),
        host_config_(host::HostConfig::from_params(loaded.platform.host(), loaded.file + ": host")),
        system_("system", loaded, host_config_, stream.model(), space, ledger_),
        gpu_port_(system_.gpu, stream.model(), host_config_.kv_grows_by_copy),
        ssd_port_(system_.ssd, system_.nvme, system_.load_path, system_.swap_path, nullptr),
        memory_("system.serving.host_memory", host_config_, stream.model()) {
    if (loaded.platform.host().batch_limit() > 1)
      batcher_ = std::make_unique<DecodeBatcher>("batcher", system_.gpu, stream.model(),
                                                 host_config_.kv_grows_by_copy, ssd_port_);
  }

  // A request the program builder refuses stops the simulation; rethrow_failure() throws it.
  void execute(const workload::StreamRequest& request, Callbacks callbacks) override {
    try {
      start(request, std::move(callbacks));
    } catch (const BadInput&) {
      failure_ = std::current_exception();
      sc_core::sc_stop();
    }
  }

  void rethrow_failure() const {
    if (failure_) std::rethrow_exception(failure_);
  }

  // Every runtime still held (the last ones) completed its ops and drained its writes.
  void check_drained() {
    for (const InFlight& r : in_flight_) r.runtime->check_finished();
  }

 private:
  void start(const workload::StreamRequest& request, Callbacks callbacks) {
    prune();
    workload::RequestProgram p = workload::request_program(stream_, request, program_, request_where(request));
    const uint64_t id = next_id_++;
    const uint64_t kv_per_token =
        trace::dense_kv_bytes_per_token(stream_.model(), trace::KV_PARTS_K_AND_V, stream_.model().kv_bits());
    InFlight& r = in_flight_.emplace_back();
    r.staging = std::make_unique<DocumentStaging>(memory_, request, id, kv_per_token, host_config_.staging_policy,
                                                  batcher_ ? &share_ : nullptr);
    if (batcher_) r.ports = batcher_->ports(id);
    HostComputePort& host = batcher_ ? static_cast<HostComputePort&>(*r.ports) : gpu_port_;
    StoragePort& storage = batcher_ ? static_cast<StoragePort&>(*r.ports) : ssd_port_;
    r.runtime = std::make_unique<Runtime>(p.header, std::move(p.ops), loaded_.platform.placement(), host, *r.staging,
                                          storage, write_chunk_bytes(system_.ssd));
    Runtime& runtime = *r.runtime;
    runtime.set_completion_listener([this, &runtime, callbacks, id, tokens = uint64_t{0}](size_t index) mutable {
      if (runtime.ops()[index].has_lm_head()) {
        callbacks.token();
        if (tokens++ == 0 && batcher_) batcher_->first_token(id);
      }
      if (runtime.finished()) {
        ops_done(id);
        callbacks.done();
      }
    });
    runtime.set_drained_listener([this, id] {
      const auto it = charged_.find(id);
      if (it != charged_.end()) {
        charge_interval();
        settle(it);
      }
    });
    auto begin = [this, id, &runtime, settled = std::move(callbacks.settled), started = callbacks.started] {
      begin_service(id, settled);
      started();
      runtime.start();
    };
    if (batcher_)
      batcher_->admit(id, std::move(begin));
    else
      begin();
  }

  // Request `id`'s service starts: the requests whose ops are done stop being
  // charged (their writes still running are this request's now), and it starts.
  void begin_service(uint64_t id, std::function<void(const RequestUsage&)> settled) {
    charge_interval();
    for (auto it = charged_.begin(); it != charged_.end();) it = it->second.ops_done ? settle(it) : std::next(it);
    charged_[id].settled = std::move(settled);
  }

  // A request is charged from the start of its service until its writes
  // drained or, its ops done, another request started; what the devices do
  // in each interval is split equally among the requests charged in it.
  struct Charged {
    RequestUsage usage;
    bool ops_done = false;
    std::function<void(const RequestUsage&)> settled;
  };

  // Charges what the devices did since the last call to the requests charged now.
  void charge_interval() {
    const DeviceTotals to = device_totals(system_, ledger_);
    const DeviceTotals& from = last_totals_;
    const uint64_t n = charged_.size();
    if (n > 0) {
      const double energy = ledger_.total_j(to.dynamic_j - from.dynamic_j, to.at_ps - from.at_ps) / double(n);
      const uint64_t diff[4] = {to.nand_read - from.nand_read, to.nand_written - from.nand_written,
                                to.pcie_host_to_device - from.pcie_host_to_device,
                                to.pcie_device_to_host - from.pcie_device_to_host};
      bool first = true;  // whole bytes each, the remainder to the earliest request
      for (auto& [id, c] : charged_) {
        RequestUsage& u = c.usage;
        u.energy_j += energy;
        uint64_t* fields[4] = {&u.nand_read_bytes, &u.nand_written_bytes, &u.pcie_host_to_device_bytes,
                               &u.pcie_device_to_host_bytes};
        for (int f = 0; f < 4; ++f) *fields[f] += diff[f] / n + (first ? diff[f] % n : 0);
        first = false;
      }
    }
    last_totals_ = to;
  }

  std::map<uint64_t, Charged>::iterator settle(std::map<uint64_t, Charged>::iterator it) {
    const RequestUsage usage = it->second.usage;
    const auto settled = std::move(it->second.settled);
    const auto next = charged_.erase(it);
    settled(usage);
    return next;
  }

  void ops_done(uint64_t id) {
    charged_.at(id).ops_done = true;
    share_.remove(id);
    if (batcher_) batcher_->finished(id);
  }

  // A request's runtime and its view of the staging area, held until its writes drained.
  struct InFlight {
    std::unique_ptr<DocumentStaging> staging;
    std::unique_ptr<DecodeBatcher::Ports> ports;  // with a batching host
    std::unique_ptr<Runtime> runtime;
  };

  // Drops the runtimes that finished and drained their background writes.
  void prune() {
    in_flight_.remove_if([](const InFlight& r) { return r.runtime->finished() && r.runtime->drained_ps() > 0; });
  }

  const schema::LoadedPlatform& loaded_;
  const workload::StreamHeader stream_;
  const trace::Program program_;
  const host::HostConfig host_config_;
  SimulationLedger ledger_;
  System system_;
  GpuPort gpu_port_;
  SsdPort ssd_port_;
  host::HostMemory memory_;  // the stream's staging area (serving_staging.h)
  std::unique_ptr<DecodeBatcher> batcher_;  // null: one request at a time (host.batch_limit = 1)
  StagingShare share_;                      // the requests in service, with a batching host
  std::list<InFlight> in_flight_;
  uint64_t next_id_ = 0;
  std::map<uint64_t, Charged> charged_;
  DeviceTotals last_totals_;
  std::exception_ptr failure_;
};

}  // namespace

std::string served_csv_header() {
  return "request,arrival_s,start_s,queueing_s,ttft_s,mean_tbt_s,max_tbt_s,latency_s,end_s,output_tokens,"
         "context_tokens,query_tokens,answer_tokens,energy_j,nand_read_bytes,nand_written_bytes,"
         "pcie_host_to_device_bytes,pcie_device_to_host_bytes";
}

std::string served_csv_row(const ServedRequest& r) {
  std::ostringstream s;
  // Seconds, SI like every machine output, in the shortest form that reads back exactly.
  const auto sec = [](double ps) { return shortest_number(ps / 1e12); };
  s << r.index << ',' << sec(r.arrival_ps) << ',' << sec(r.start_ps) << ',' << sec(r.queueing_ps()) << ','
    << sec(r.ttft_ps()) << ',' << sec(r.mean_tbt_ps()) << ',' << sec(r.max_token_gap_ps) << ','
    << sec(r.latency_ps()) << ',' << sec(r.end_ps) << ',' << r.tokens << ',' << r.context_tokens << ','
    << r.query_tokens << ',' << r.answer_tokens << ',' << shortest_number(r.usage.energy_j) << ','
    << r.usage.nand_read_bytes << ',' << r.usage.nand_written_bytes << ',' << r.usage.pcie_host_to_device_bytes
    << ',' << r.usage.pcie_device_to_host_bytes;
  return s.str();
}

void check_serves_streams(const schema::LoadedPlatform& loaded) {
  platform_program(loaded);
  check_blend_platform(loaded);
  const uint32_t limit = loaded.platform.host().batch_limit();
  if (limit == 1) return;
  const schema::PlacementParams& placement = loaded.platform.placement();
  const std::string what = "host.batch_limit = " + std::to_string(limit);
  if (placement.decode_linear() == schema::PlacementParams::IN_FLASH)
    throw BadInput(loaded.file, what + " cannot be honoured: decode GEMVs computed in the flash "
                                       "(placement.decode_linear = IN_FLASH) are not batched; use 1");
  const bool ssd_attention = placement.prefill_attention() == schema::PlacementParams::SSD_ISP ||
                             placement.decode_attention() == schema::PlacementParams::SSD_ISP;
  if (ssd_attention && placement.ssd_prefetch_layers() > 0)
    throw BadInput(loaded.file, what + " needs placement.ssd_prefetch_layers = 0: the SSD reads one command's KV "
                                       "ahead only for the command that follows, which requests in service "
                                       "together cannot promise");
}

ServingStatistics serve_blend_stream(const schema::LoadedPlatform& loaded, const std::string& stream_path,
                                     const ServeOptions& options) {
  const trace::Program program = platform_program(loaded);
  check_serves_streams(loaded);
  ServingStatistics refused;
  refused.out_of_memory = memory_shortfall(loaded, stream_path);
  if (!refused.out_of_memory.empty()) return refused;
  const ssd::KvSpace space = stream_kv_space(stream_path);
  OutputFiles outputs;  // opened before the simulation, so that an unwritable path fails at once
  AtomicFile* stats_file = open_stats_file(outputs, options.stats_path);
  AtomicFile* csv = outputs.open(options.requests_csv);
  if (csv) csv->stream() << served_csv_header() << '\n';
  workload::StreamReader stream(stream_path);
  BlendExecutor executor(loaded, stream.header(), program, space);
  Server server("server", stream, executor, loaded.platform.host().batch_limit(), [csv](const ServedRequest& r) {
    if (csv) csv->stream() << served_csv_row(r) << '\n';
  });
  sc_core::sc_start();
  executor.rethrow_failure();
  core::refuse_if_time_overflowed(stream_path);
  if (server.unfinished() != 0)
    throw std::logic_error("serve: " + std::to_string(server.unfinished()) + " requests never completed");
  executor.check_drained();
  stats::Group group("system.serving");
  server.statistics().declare(group);
  if (stats_file) write_stats(*stats_file, options.stats_provenance);
  if (options.before_commit) options.before_commit(server.statistics());
  outputs.commit();
  return server.statistics();
}

}  // namespace ispsim::systems
