#include "platforms/systems/serving_blend.h"

#include <algorithm>
#include <deque>
#include <exception>
#include <list>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <map>
#include <memory>
#include <set>
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
#include "platforms/systems/serving_store.h"
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

// What serving the stream needs, from one pass over its requests' shapes.
struct StreamNeeds {
  // The KV regions the SSD must hold: the longest context, and a slot of the
  // most appended KV of a request for each request that can hold one at once:
  // those served (`concurrency`) and one whose writes still drain. A finished
  // request's slot is trimmed and taken by a later request (BlendExecutor).
  ssd::KvSpace space;
  // Why the platform cannot hold a request of the stream, "" when it can: as
  // `run` refuses a request, the weights do not fit the host DRAM budget, or a
  // request's KV must stay in host memory (placement.kv_resident_in_host_memory)
  // and does not fit what the weights leave: its context plus C + Q + A
  // appended entries (request_kv_tokens) in every layer.
  std::string out_of_memory;
};

// The most pages the documents ingested and not yet evicted hold at once
// (serving_store.h), counted on `event`, one after the other: `held` the pages now.
void count_store_pages(const workload::StreamRecord& event, const schema::LoadedPlatform& loaded,
                       const workload::StreamHeader& header, uint64_t& held, uint64_t& most) {
  const bool ingest = event.has_ingest();
  const workload::DocumentRef& d = ingest ? event.ingest().document() : event.evict().document();
  if (!ingest && d.id() < header.workload().documents()) return;  // the corpus has no pages of its own
  const uint64_t pages = document_footprint(header.model(), loaded.platform.nand().page_bytes(), d.tokens(),
                                            loaded.platform.program() == schema::Platform::FULL_PREFILL)
                             .pages;
  held = ingest ? held + pages : held - std::min(held, pages);
  most = std::max(most, held);
}

StreamNeeds stream_needs(const schema::LoadedPlatform& loaded, const std::string& stream_path, unsigned concurrency) {
  const host::HostConfig host = host::HostConfig::from_params(loaded.platform.host(), loaded.file + ": host");
  workload::StreamReader reader(stream_path);
  const trace::ModelShape& model = reader.header().model();
  const host::HostMemory memory("serving_probe", host, model);
  StreamNeeds needs;
  needs.space.shape = model;
  needs.space.appended_slots = concurrency + 1;
  if (!memory.weights_fit()) {
    needs.out_of_memory = "model weights of " + std::to_string(memory.weight_bytes()) + " bytes plus the " +
                          std::to_string(host.workspace_bytes) + "-byte workspace exceed the host DRAM budget of " +
                          std::to_string(host.dram_capacity_bytes) + " bytes (host.dram_capacity_bytes)";
    return needs;
  }
  const bool resident = loaded.platform.placement().kv_resident_in_host_memory();
  const uint64_t per_token = trace::dense_kv_bytes_per_token(model, trace::KV_PARTS_K_AND_V, model.kv_bits());
  workload::StreamRecord record;
  uint64_t held = 0, largest = 0;
  while (reader.next(record)) {
    if (record.has_ingest() || record.has_evict())
      count_store_pages(record, loaded, reader.header(), held, needs.space.store_pages);
    if (!record.has_request()) continue;
    const workload::RequestKvTokens kv = workload::request_kv_tokens(record.request());
    needs.space.precomputed_tokens = std::max(needs.space.precomputed_tokens, kv.precomputed);
    needs.space.appended_capacity = std::max(needs.space.appended_capacity, kv.appended);
    const uint64_t bytes = uint64_t{model.layers()} * (kv.precomputed + kv.appended) * per_token;
    largest = std::max(largest, bytes);
    if (resident && bytes > memory.staging_capacity()) {
      needs.out_of_memory = request_where(record.request()) + ": its KV of " + std::to_string(bytes) +
                            " bytes must stay in GPU/host memory (placement.kv_resident_in_host_memory) but only " +
                            std::to_string(memory.staging_capacity()) +
                            " bytes of the host DRAM budget are left (host.dram_capacity_bytes)";
      return needs;
    }
  }
  // Requests in service together hold their KV together (conservatively, the largest one's each).
  if (resident && concurrency > 1 && largest > memory.staging_capacity() / concurrency)
    needs.out_of_memory =
        std::to_string(concurrency) + " requests in service together (host.batch_limit) must keep their KV in "
        "GPU/host memory (placement.kv_resident_in_host_memory): " + std::to_string(concurrency) +
        " x the largest request's " + std::to_string(largest) + " bytes exceed the " +
        std::to_string(memory.staging_capacity()) + " bytes of the host DRAM budget left (host.dram_capacity_bytes)";
  return needs;
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
                const ssd::KvSpace& space, const ssd::DriveStart& drive)
      : loaded_(loaded),
        stream_(stream),
        program_(program),
        host_config_(host::HostConfig::from_params(loaded.platform.host(), loaded.file + ": host")),
        system_("system", loaded, host_config_, stream.model(), space, ledger_),
        gpu_port_(system_.gpu, stream.model(), host_config_.kv_grows_by_copy),
        batch_port_(system_.ssd, system_.nvme, system_.load_path, system_.swap_path, nullptr),
        memory_("system.serving.host_memory", host_config_, stream.model()),
        store_(system_.ssd.placement().total_pages(), space.store_pages, stream.workload().documents()) {
    if (!drive.state_path.empty() || drive.precondition) system_.ssd.start_from(drive);  // else a fresh drive
    for (uint32_t slot = 0; slot < system_.ssd.appended_slots(); ++slot) free_slots_.insert(slot);
    if (loaded.platform.host().batch_limit() > 1)
      batcher_ = std::make_unique<DecodeBatcher>("batcher", system_.gpu, stream.model(),
                                                 host_config_.kv_grows_by_copy, batch_port_);
  }

  // A request waits for a slot of the SSD's appended region when every slot
  // is held (by requests served or draining). One at a time, the wait is part
  // of its service; on a batching host, service starts with its prefill.
  void execute(const workload::StreamRequest& request, Callbacks callbacks) override {
    prune();
    waiting_.emplace_back(request, std::move(callbacks));
    if (free_slots_.empty()) ++slot_waits_;
    start_waiting();
  }

  void upcoming(const workload::StreamRequest& request) override {
    programs_.prepare(request, request_where(request));
  }

  void rethrow_failure() const {
    if (failure_) std::rethrow_exception(failure_);
  }

  // Why a request's runtime stopped the simulation (Runtime::refusal), "" if none did.
  std::string refusal() const {
    for (const InFlight& r : in_flight_)
      if (!r.runtime->refusal().empty()) return "request " + std::to_string(r.index) + ": " + r.runtime->refusal();
    return "";
  }

  // An ingested document is written to the store through the FTL (its KV,
  // computed on the GPU first, or its text on a recompute platform), in the
  // background; an evicted one is TRIMmed. The devices' work is charged to
  // the requests charged then.
  void store(const workload::StreamRecord& event) override {
    try {
      if (event.has_ingest())
        ingest(event.ingest().document());
      else
        evict(event.evict().document());
    } catch (const BadInput&) {
      failure_ = std::current_exception();
      sc_core::sc_stop();
    }
  }

  // Registers what the drive's FTL and the document store did under `group` (system.serving).
  void declare(stats::Group& group) const {
    group.formula_integer("appended_slot_waits", "count",
                          "requests that waited for a slot of the SSD's appended region (all held)",
                          [this] { return slot_waits_; });
    const ftl::Ftl& ftl = system_.ssd.translation().ftl();
    group.formula_integer("ftl_trimmed_pages", "count", "mapped logical pages the SSD's FTL unmapped by TRIM",
                          [&ftl] { return ftl.counters().trimmed_pages; });
    group.formula_integer("ftl_mapped_pages", "count", "logical pages the SSD's FTL maps after the stream",
                          [&ftl] { return ftl.mapping().mapped_pages(); });
    group.formula_integer("ftl_valid_pages", "count", "physical pages the SSD's FTL counts valid after the stream",
                          [&ftl] {
                            uint64_t valid = 0;
                            for (uint64_t b = 0; b < ftl.geometry().blocks(); ++b) valid += ftl.valid_pages(b);
                            return valid;
                          });
    const StoreCounts& c = store_counts_;
    group.formula_integer("ingested_documents", "count", "documents written to the store while the stream ran",
                          [&c] { return c.ingested; });
    group.formula_integer("ingested_pages", "count", "logical pages the ingested documents were written to",
                          [&c] { return c.ingested_pages; });
    group.formula_integer("ingested_bytes", "bytes", "bytes of the ingested documents sent to the SSD (KV, or text)",
                          [&c] { return c.ingested_bytes; });
    group.formula_integer("evicted_documents", "count", "documents evicted from the store (TRIM of ingested ones)",
                          [&c] { return c.evicted; });
    group.formula("ingest_precompute_time", "ns",
                  "GPU time computing the ingested documents' KV (platforms that store KV)",
                  [&c] { return double(c.precompute_ps) * 1e-3; });
  }

  // Every runtime still held (the last ones) completed its ops and drained its writes.
  void check_drained() {
    for (const InFlight& r : in_flight_) r.runtime->check_finished();
  }

 private:
  // What the stream's store events did.
  struct StoreCounts {
    uint64_t ingested = 0, ingested_pages = 0, ingested_bytes = 0, evicted = 0;
    uint64_t precompute_ps = 0;  // the GPU's time for the ingested documents' KV
  };

  void ingest(const workload::DocumentRef& document) {
    const DocumentFootprint f = document_footprint(stream_.model(), system_.ssd.flash().config().page_bytes,
                                                   document.tokens(), program_ == trace::FULL_PREFILL);
    ++store_counts_.ingested;
    store_counts_.ingested_pages += f.pages;
    store_counts_.ingested_bytes += f.bytes;
    std::vector<DocumentStore::Run> runs = store_.ingest(document.id(), f.pages);
    auto write = [this, runs = std::move(runs), f] {
      uint64_t bytes_left = f.bytes;
      for (size_t i = 0; i < runs.size(); ++i) {  // the bytes split over the runs as their pages
        const uint64_t bytes = i + 1 == runs.size() ? bytes_left : f.bytes * runs[i].count / f.pages;
        bytes_left -= bytes;
        system_.ssd.store_write(runs[i].lpn, runs[i].count, bytes, nullptr);
      }
    };
    if (program_ == trace::FULL_PREFILL) return write();  // text: nothing to compute
    precompute(document.tokens(), std::move(write));
  }

  // The document's KV is computed on the GPU, in its in-order stream between
  // the requests' kernels, before it is written.
  void precompute(uint64_t tokens, std::function<void()> then) {
    const std::vector<trace::Op> ops = document_precompute_ops(stream_.model(), tokens);
    for (size_t i = 0; i < ops.size(); ++i) {
      store_counts_.precompute_ps += system_.gpu.cost(ops[i], stream_.model()).duration.value();
      system_.gpu.execute(ops[i], stream_.model(), i + 1 == ops.size() ? then : nullptr);
    }
  }

  void evict(const workload::DocumentRef& document) {
    ++store_counts_.evicted;
    for (const DocumentStore::Run& run : store_.evict(document.id(), "the stream's evict records"))
      system_.ssd.store_trim(run.lpn, run.count);
  }

  // Starts the waiting requests while slots are free. A request the program
  // builder refuses stops the simulation; rethrow_failure() throws it.
  void start_waiting() {
    while (!waiting_.empty() && !free_slots_.empty()) {
      const uint32_t slot = *free_slots_.begin();
      free_slots_.erase(free_slots_.begin());
      auto [request, callbacks] = std::move(waiting_.front());
      waiting_.pop_front();
      try {
        start(request, std::move(callbacks), slot);
      } catch (const BadInput&) {
        failure_ = std::current_exception();
        sc_core::sc_stop();
        return;
      }
    }
    if (!waiting_.empty()) upcoming(waiting_.front().first);
  }

  void start(const workload::StreamRequest& request, Callbacks callbacks, uint32_t slot) {
    workload::RequestProgram p = programs_.take(request, request_where(request));
    const uint64_t id = next_id_++;
    const uint64_t kv_per_token =
        trace::dense_kv_bytes_per_token(stream_.model(), trace::KV_PARTS_K_AND_V, stream_.model().kv_bits());
    InFlight& r = in_flight_.emplace_back();
    r.index = request.index();
    r.staging = std::make_unique<DocumentStaging>(memory_, request, id, kv_per_token, host_config_.staging_policy,
                                                  batcher_ ? &share_ : nullptr);
    r.ssd_port = std::make_unique<SsdPort>(system_.ssd, system_.nvme, system_.load_path, system_.swap_path, nullptr,
                                           slot);
    if (batcher_) r.ports = batcher_->ports(id, *r.ssd_port);
    HostComputePort& host = batcher_ ? static_cast<HostComputePort&>(*r.ports) : gpu_port_;
    StoragePort& storage = batcher_ ? static_cast<StoragePort&>(*r.ports) : *r.ssd_port;
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
    // Its KV is no longer needed: what it used is settled, and the slot is
    // trimmed and taken by the next request (not pruned here: this runtime is
    // still on the call stack).
    runtime.set_drained_listener([this, id, slot] {
      const auto it = charged_.find(id);
      if (it != charged_.end()) {
        charge_interval();
        settle(it);
      }
      system_.ssd.release_slot(slot);
      free_slots_.insert(slot);
      start_waiting();
    });
    auto begin = [this, id, &runtime, settled = std::move(callbacks.settled), started = callbacks.started] {
      begin_service(id, settled);
      if (batcher_) started();  // else its service started when the Server dispatched it
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

  // A request's runtime, its view of the staging area and its port to its
  // slot of the SSD, held until its writes drained.
  struct InFlight {
    uint64_t index = 0;  // the request's in the stream
    std::unique_ptr<DocumentStaging> staging;
    std::unique_ptr<SsdPort> ssd_port;
    std::unique_ptr<DecodeBatcher::Ports> ports;  // with a batching host, over ssd_port
    std::unique_ptr<Runtime> runtime;
  };

  // Drops the runtimes that finished and drained their background writes.
  void prune() {
    in_flight_.remove_if([](const InFlight& r) { return r.runtime->finished() && r.runtime->drained_ps() > 0; });
  }

  const schema::LoadedPlatform& loaded_;
  const workload::StreamHeader stream_;
  const trace::Program program_;
  workload::ProgramsAhead programs_{stream_, program_};
  const host::HostConfig host_config_;
  SimulationLedger ledger_;
  System system_;
  GpuPort gpu_port_;
  SsdPort batch_port_;  // sends the batched attention commands (each work placed by its request's port)
  host::HostMemory memory_;  // the stream's staging area (serving_staging.h)
  std::unique_ptr<DecodeBatcher> batcher_;  // null: one request at a time (host.batch_limit = 1)
  StagingShare share_;                      // the requests in service, with a batching host
  std::list<InFlight> in_flight_;
  DocumentStore store_;            // the documents ingested while the stream is served
  StoreCounts store_counts_;
  std::set<uint32_t> free_slots_;  // of the SSD's appended region, lowest first
  std::deque<std::pair<workload::StreamRequest, Callbacks>> waiting_;  // for a slot, in FCFS order
  uint64_t slot_waits_ = 0;
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
#ifdef __GLIBC__
  // One malloc arena for the process: the programs made ahead on a second
  // thread are freed on this one, and a second arena would keep their memory.
  mallopt(M_ARENA_MAX, 1);
#endif
  // Requests in service at once: each holds a slot of the SSD's appended region.
  const unsigned concurrency = loaded.platform.host().batch_limit();
  const StreamNeeds needs = stream_needs(loaded, stream_path, concurrency);
  if (!needs.out_of_memory.empty()) {
    ServingStatistics refused;
    refused.out_of_memory = needs.out_of_memory;
    return refused;
  }
  OutputFiles outputs;  // opened before the simulation, so that an unwritable path fails at once
  AtomicFile* stats_file = open_stats_file(outputs, options.stats_path);
  AtomicFile* csv = outputs.open(options.requests_csv);
  if (csv) csv->stream() << served_csv_header() << '\n';
  workload::StreamReader stream(stream_path);
  BlendExecutor executor(loaded, stream.header(), program, needs.space,
                         {options.drive_state_in, options.precondition});
  Server server("server", stream, executor, concurrency, [csv](const ServedRequest& r) {
    if (csv) csv->stream() << served_csv_row(r) << '\n';
  });
  sc_core::sc_start();
  executor.rethrow_failure();
  core::refuse_if_time_overflowed(stream_path);
  if (const std::string why = executor.refusal(); !why.empty()) throw BadInput(stream_path, why);
  if (server.unfinished() != 0)
    throw std::logic_error("serve: " + std::to_string(server.unfinished()) + " requests never completed");
  executor.check_drained();
  stats::Group group("system.serving");
  server.statistics().declare(group);
  executor.declare(group);
  if (stats_file) write_stats(*stats_file, options.stats_provenance);
  if (options.before_commit) options.before_commit(server.statistics());
  outputs.commit();
  return server.statistics();
}

}  // namespace ispsim::systems
