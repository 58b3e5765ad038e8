// The devices of a MemLLM-study platform and the runtime's ports to them,
// shared by the single-request run (blend_system.cc) and the request stream
// server (serving_blend.cc).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "models/core/energy_ledger.h"
#include "models/core/timeline.h"
#include "models/host/gpu.h"
#include "models/host/host_config.h"
#include "models/host/host_memory.h"
#include "models/host/storage_read_path.h"
#include "models/link/nvme.h"
#include "models/link/pcie_link.h"
#include "models/ssd/ssd.h"
#include "platforms/systems/isp_selection.h"
#include "platforms/systems/runtime.h"
#include "schema/platform_loader.h"
#include "traces/trace.pb.h"

namespace ispsim::systems {

inline uint64_t now_ps() { return sc_core::sc_time_stamp().value(); }

// The program's ops, checked for what this system can run, their HKVD masks
// held once per distinct mask as they are read.
trace::InternedOps read_program(const std::string& path, trace::Program program, const std::string& platform,
                               trace::Header& header);

// Sizes of the KV regions the SSD must hold: the context (precomputed, per
// layer) and the most entries any layer appends.
ssd::KvSpace kv_space(const trace::Header& header, const std::vector<trace::Op>& ops);

// The runtime's background-write chunk: one page on every die.
uint64_t write_chunk_bytes(ssd::Ssd& ssd);

// An energy ledger that folds up to the simulation's current time.
struct SimulationLedger : core::EnergyLedger {
  SimulationLedger() { set_clock([] { return sc_core::sc_time_stamp().value(); }); }
};

class GpuPort : public HostComputePort {
 public:
  GpuPort(host::Gpu& gpu, const trace::ModelShape& shape, bool grows_kv_by_copy)
      : gpu_(gpu), shape_(shape), grows_kv_by_copy_(grows_kv_by_copy) {}
  bool grows_kv_by_copy() const override { return grows_kv_by_copy_; }
  sc_core::sc_time compute(const trace::Op& op, Done done) override {
    const sc_core::sc_time start = gpu_.free_at();
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

// One request's port: its appended KV goes to slot `slot` of the SSD's
// appended region (ssd::KvSpace::appended_slots).
class SsdPort : public StoragePort {
 public:
  SsdPort(ssd::Ssd& ssd, link::Nvme& nvme, host::StorageReadPath& load_path, host::StorageReadPath& swap_path,
          core::Timeline* timeline, uint32_t slot = 0)
      : ssd_(ssd),
        nvme_(nvme),
        load_path_(load_path),
        swap_path_(swap_path),
        timeline_(timeline),
        slot_(slot),
        appended_base_(ssd.appended_base(slot)) {}

  // The SSD read, then one of the host's software paths (models/host/storage_read_path.h).
  void read_to_host(uint32_t layer, trace::KvRegion region, uint64_t token_begin, uint64_t token_end, uint64_t bytes,
                    HostReadPath path, Done done) override {
    Done usable =
        traced("SSD to host KV reads", "kv read L" + std::to_string(layer), std::move(done), args(layer, bytes));
    host::StorageReadPath& host_path = path == HostReadPath::kLoad ? load_path_ : swap_path_;
    ssd_.host_read(
        layer, region, token_begin, token_end,
        [&host_path, bytes, usable = std::move(usable)]() mutable { host_path.deliver(bytes, std::move(usable)); },
        slot_);
  }
  void write_from_host(uint32_t layer, uint64_t tokens, uint64_t bytes, Done done) override {
    ssd_.host_write(layer, 0, tokens, bytes,
                    traced("background KV writes", "write-through L" + std::to_string(layer), std::move(done),
                           args(layer, bytes)),
                    slot_);
  }
  void append_in_ssd(uint32_t layer, uint64_t tokens, uint64_t bytes, Done done) override {
    ssd_.append(layer, tokens, bytes,
                traced("background KV writes", "append L" + std::to_string(layer), std::move(done),
                       args(layer, bytes)),
                slot_);
  }
  void prefetch_attention(const SsdAttention& w) override { ssd_.prefetch_attention(placed(w)); }
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
  // `work` over this request's slot: its appended KV at the slot's entries.
  SsdAttention placed(SsdAttention work) const override {
    work.appended_base = appended_base_;
    return work;
  }
  void attention(const SsdAttention& work, Done done) override { attention_batch({placed(work)}, std::move(done)); }
  // The requests' masks, Q, supplied KV and outputs cross PCIe together; the
  // SSD runs each request's attention over its own KV in the given order (its
  // flash job queue is first come, first served). Each work is as its
  // request's port placed it, so its appended KV is that request's slot's.
  void attention_batch(const std::vector<SsdAttention>& works, Done done) override {
    link::FusedAttentionCommand cmd;  // what crosses PCIe
    for (const SsdAttention& work : works) {
      cmd.mask_bytes += work.mask_bytes;
      cmd.q_bytes += work.q_bytes;
      cmd.kv_bytes += work.supplied_kv_bytes;
      cmd.output_bytes += work.output_bytes;
    }
    const SsdAttention& first = works.front();
    std::string name = "attention L" + std::to_string(first.layer) + " rows " + std::to_string(first.query_rows);
    if (works.size() > 1) name += " x " + std::to_string(works.size()) + " requests";
    nvme_.fused_attention(
        cmd,
        [this, works, name](Done backend_done) {
          auto left = std::make_shared<size_t>(works.size());
          Done all = traced("SSD ISP attention", name, std::move(backend_done), {-1, works.front().layer, -1});
          for (const SsdAttention& work : works)
            ssd_.attention(work, [left, all] {
              if (--*left == 0) all();
            });
        },
        traced("NVMe fused-attention commands", name, std::move(done),
               args(first.layer, cmd.mask_bytes + cmd.q_bytes + cmd.kv_bytes + cmd.output_bytes)));
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
  const uint32_t slot_;
  const uint64_t appended_base_;
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

}  // namespace ispsim::systems
