// The host runtime (DESIGN.md, "The execution model"): walks the op DAG of the
// program a platform runs, sends each op to a device by the platform's placement
// policy, moves KV where the op needs it, and issues an op's dependants when it
// completes.
//
// Placement (schema/placement.proto):
// - gemm, nonlinear, embedding, lm_head, hkvd_select: the host GPU, in issue order.
// - attention of HKVD identification and of a full prefill: the host GPU (the KV
//   is fresh in GPU memory); recomputation / query prefill / fused prefill: the
//   `prefill_attention` device; decode: the `decode_attention` device.
// - Host attention needs every KV byte it reads in host memory: what the staging
//   area (host DRAM, FlexGen-style) does not hold is read from the SSD over PCIe
//   first, then through the host's load path (precomputed KV in prefill) or swap
//   path (everything else). Up to `prefetch_layers` later host attention ops have
//   their reads issued ahead, overlapping SSD-to-host transfers with compute: the
//   precomputed region, and in decode also the appended region but for the rows
//   the op's own step appends (still in the making). Fetched KV is treated as
//   pinned until its op runs (an eviction in between is not replayed).
// - The host holds one copy of each token's KV (CacheBlend): HKVD tokens
//   recomputed for host attention overwrite their precomputed entries in place.
// - SSD attention is one fused-attention command: the KV that the kv_append of
//   the same layer and phase produced since the previous command travels with
//   it (host to device), the SSD reads the rest from flash; afterwards that KV
//   is programmed out of place in the background.
// - kv_append for host attention: the KV is staged in host memory at once and
//   written through to the SSD in the background. kv_load: a staging hit is free;
//   otherwise an SSD read over PCIe.
//
// - Inter-layer NAND prefetch (placement.ssd_prefetch_layers = 1): when an SSD
//   attention op completes, the next SSD attention op (by id) gets its pages
//   read ahead (StoragePort::prefetch_attention), during the host's compute in
//   between, provided it is certain to be the next SSD attention command: it
//   depends on the op that completed and the SSD attention op after it depends
//   on it (the unfused CacheBlend passes, which may interleave, are not
//   prefetched where they do). The KV it will be sent is known from the trace
//   (the kv_append ops of its layer and phase since the previous command, in
//   trace order); every command carries that KV, whatever order the appends
//   were issued in.
// - Decode-phase weight GEMVs (gemm with a weight operand, LM head) go to the
//   flash with placement.decode_linear = IN_FLASH (StoragePort::gemv_in_flash).
//
// Background writes (write-through of host-staged KV, out-of-place programs of
// KV that came with a command) collect in a write buffer and go to the SSD in
// chunks of `write_chunk_bytes` (one page per die) only while no foreground
// storage work (a read or an attention) is in flight, so they fill the gaps
// between layers; a chunk under way delays a foreground job that arrives
// meanwhile (programs are not suspended). KV still in the write buffer is read
// as if it were in flash. What remains after the last op is flushed then; the
// request's latency is the completion of its last op, drained_ps() the end of
// the background writes.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <systemc>
#include <vector>

#include "models/isp/attention_engine.h"
#include "schema/placement.pb.h"
#include "traces/hkvd_masks.h"
#include "traces/trace.pb.h"

namespace ispsim::systems {

using Done = std::function<void()>;

// The host compute device (GPU). Ops run in the order given; returns the time the
// op starts (its end is when `done` runs).
class HostComputePort {
 public:
  virtual ~HostComputePort() = default;
  virtual sc_core::sc_time compute(const trace::Op& op, Done done) = 0;
  // Whether a KV append copies the layer's cache (the framework grows it by
  // concatenation): then the append is a GPU op too.
  virtual bool grows_kv_by_copy() const { return false; }
};

// Host DRAM staging of KV, per (layer, region), in bytes (models/host/host_memory.h).
class StagingPort {
 public:
  virtual ~StagingPort() = default;
  // The KV the host will hold for the request, one copy per token.
  virtual void plan(uint64_t kv_bytes) = 0;
  // A read of `bytes` of the key: returns how many of them are in host memory
  // (and marks the key used).
  virtual uint64_t lookup(uint32_t layer, trace::KvRegion region, uint64_t bytes) = 0;
  // `bytes` of new KV appended to the key.
  virtual void append(uint32_t layer, trace::KvRegion region, uint64_t bytes) = 0;
  // `bytes` of the key's entries overwritten in place.
  virtual void overwrite(uint32_t layer, trace::KvRegion region, uint64_t bytes) = 0;
  // `read_bytes` of the key arrived from the SSD; the op needed `key_bytes` of it.
  virtual void fetched(uint32_t layer, trace::KvRegion region, uint64_t read_bytes, uint64_t key_bytes) = 0;
};

// The host software path a KV read from the SSD takes (models/host/storage_read_path.h):
// precomputed KV loaded from the RAG store in prefill, or KV the host offloaded
// itself (every read in decode, and every read of appended KV).
enum class HostReadPath { kLoad, kSwap };

// One attention op sent to the SSD: the ISP's own op type (its layer, rows,
// KV spans and mask, and the fused command's operand sizes).
using SsdAttention = isp::AttentionWork;

// The storage device and the link to it.
class StoragePort {
 public:
  virtual ~StoragePort() = default;
  // Conventional read of stored KV into host memory (NAND, then PCIe device to
  // host, then the host's `path`).
  virtual void read_to_host(uint32_t layer, trace::KvRegion region, uint64_t token_begin, uint64_t token_end,
                            uint64_t bytes, HostReadPath path, Done done) = 0;
  // KV offload: PCIe host to device, then programmed out of place; `done` when programmed.
  virtual void write_from_host(uint32_t layer, uint64_t tokens, uint64_t bytes, Done done) = 0;
  // Fused-attention NVMe command; `done` when the output is back in host memory.
  virtual void attention(const SsdAttention& work, Done done) = 0;
  // Programs KV that is already in the SSD (it came with a command); `done` when programmed.
  virtual void append_in_ssd(uint32_t layer, uint64_t tokens, uint64_t bytes, Done done) = 0;
  // `work` as this port's storage addresses it (an SSD port: over its
  // request's slot of the appended region); attention() places its work itself.
  virtual SsdAttention placed(SsdAttention work) const { return work; }
  // One fused-attention command for the attention of several requests (a
  // batched decode step, serving_batch.h), each work placed by its request's
  // port (placed()); the SSD runs them in the given order.
  virtual void attention_batch(const std::vector<SsdAttention>& works, Done done) {
    throw std::logic_error("this storage cannot batch attention commands");
  }
  // Reads `work`'s KV ahead of its attention() call (inter-layer prefetch).
  virtual void prefetch_attention(const SsdAttention& work) {
    throw std::logic_error("this storage cannot prefetch attention KV");
  }
  // A weight GEMV computed in the flash; `done` when its output is in host memory.
  virtual void gemv_in_flash(uint64_t weight_bytes, uint64_t weight_elements, uint64_t rows, uint64_t input_bytes,
                             uint64_t output_bytes, Done done) {
    throw std::logic_error("this storage cannot compute a GEMV in flash");
  }
};

// Times of one op, in picoseconds.
struct OpTiming {
  uint64_t issued_ps = 0, start_ps = 0, end_ps = 0;
  bool on_gpu = false;
};

class Runtime {
 public:
  // The ops' HKVD masks are held once per distinct mask (trace::HkvdMasks).
  Runtime(const trace::Header& header, std::vector<trace::Op> ops, const schema::PlacementParams& placement,
          HostComputePort& host, StagingPort& staging, StoragePort& storage, uint64_t write_chunk_bytes);
  Runtime(const trace::Header& header, trace::InternedOps ops, const schema::PlacementParams& placement,
          HostComputePort& host, StagingPort& staging, StoragePort& storage, uint64_t write_chunk_bytes);

  // Issues the ops without dependencies; call from sc_main before sc_start().
  void start();
  bool finished() const { return completed_ == ops_.size(); }
  size_t ops_completed() const { return completed_; }
  // Throws std::logic_error naming an op that never completed (a deadlock).
  void check_finished() const;
  // Empty, or why the run stopped early: an op read KV that its dependencies
  // had not appended when it ran (a trace problem only the run's order shows;
  // the caller reports it as bad input naming the trace).
  const std::string& refusal() const { return refusal_; }

  // The ops without their HKVD masks: hkvd_mask(index) is op `index`'s (null: none).
  const std::vector<trace::Op>& ops() const { return ops_; }
  const trace::BitVector* hkvd_mask(size_t index) const { return masks_.of(index); }
  size_t distinct_hkvd_masks() const { return masks_.distinct(); }
  const std::vector<OpTiming>& timing() const { return timing_; }
  uint64_t latency_ps() const { return last_end_ps_; }
  uint64_t drained_ps() const { return drained_ps_; }
  // KV bytes the host read from the SSD, and host attention's staging hits.
  uint64_t kv_bytes_read_to_host() const { return kv_read_bytes_; }
  uint64_t kv_bytes_staging_hits() const { return staging_hit_bytes_; }
  uint64_t ssd_prefetches() const { return ssd_prefetches_; }
  uint64_t kv_bytes_per_token() const { return kv_bytes_per_token_; }

  // Device of the attention of the op's phase under this placement.
  schema::PlacementParams::Device attention_device(const trace::Op& op) const;

  // Called at every change of the phase of the earliest op (by id) in flight,
  // from its issue to its completion (nullopt: nothing in flight). Several calls
  // may come at one time; the last one holds from then on.
  using PhaseListener = std::function<void(std::optional<trace::Phase>, uint64_t at_ps)>;
  void set_phase_listener(PhaseListener listener) { phase_listener_ = std::move(listener); }
  // Called after each op completes, with its index in ops().
  void set_completion_listener(std::function<void(size_t)> listener) { completion_listener_ = std::move(listener); }
  // Called once, when the last op has completed and the background writes have drained.
  void set_drained_listener(Done listener) { drained_listener_ = std::move(listener); }

 private:
  struct Fetch {
    bool precomputed_started = false, appended_started = false;
    unsigned outstanding = 0;
    bool op_waiting = false;
  };
  struct Pending {  // KV appended for an SSD attention of one layer, not yet sent
    uint64_t tokens = 0, bytes = 0;
  };

  void issue(size_t index);
  void complete(size_t index);
  void run_ready();
  void issue_host_attention(size_t index);
  // Reads what host attention `index` misses; the appended region only once the
  // op is ready (before that its newest KV may not exist yet).
  void start_fetch(size_t index, bool appended_too);
  void fetch_arrived(size_t index);
  void issue_ssd_attention(size_t index);
  // The SSD command of attention op `index`, sent the given appended KV.
  SsdAttention ssd_work(size_t index, const Pending& supplied) const;
  void plan_ssd_prefetch();
  // The SSD attention commands' KV, as the trace validator guarantees it
  // (trace::attention_kv_problem); std::logic_error for ops that bypassed it.
  void check_kv_reads() const;
  void prefetch_after(size_t index);
  size_t index_before(size_t end, uint64_t id) const;
  bool depends_on(size_t later, size_t earlier) const;
  bool in_flash_gemv(const trace::Op& op) const;
  void issue_in_flash_gemv(size_t index);
  void issue_kv_append(size_t index);
  void issue_kv_load(size_t index);
  // Reads `bytes` of the key (of the `key_bytes` its op needs) into host memory.
  void read_kv(uint32_t layer, trace::KvRegion region, uint64_t token_begin, uint64_t token_end, uint64_t bytes,
               uint64_t key_bytes, HostReadPath path, Done done);
  static HostReadPath read_path(trace::Phase phase, trace::KvRegion region);
  // Whether a host kv_append overwrites precomputed entries in place (HKVD tokens).
  bool appends_in_place(const trace::KvTransfer& t) const;
  // The host's KV of the request, one copy per token: the precomputed context
  // of every layer whose precomputed KV the host reads, and what each layer appends.
  uint64_t host_kv_bytes() const;
  void compute_on_host(size_t index);
  // Op `index` as the host gets it: with its HKVD mask.
  const trace::Op& op_for_host(size_t index);
  void buffer_write(bool from_host, uint32_t layer, uint64_t tokens, uint64_t bytes);
  void foreground_done();
  void flush_writes(bool all);
  // Sends every buffered write of `layer` now (the host is about to read them
  // back, an exception to the idle-time rule); `then` runs once they are written.
  void flush_layer_writes(uint32_t layer, Done then);
  void in_flight_changed();

  const trace::Header header_;
  std::vector<trace::Op> ops_;  // without their HKVD masks
  trace::HkvdMasks masks_;
  // Host ops with a mask, from their compute to their completion: the host
  // reads an attention's mask from its op and may hold the op until it runs.
  std::map<size_t, trace::Op> lent_to_host_;
  const schema::PlacementParams placement_;
  HostComputePort& host_;
  StagingPort& staging_;
  StoragePort& storage_;
  uint64_t kv_bytes_per_token_;
  uint64_t context_tokens_ = 0;  // precomputed tokens of the request's documents

  std::vector<std::vector<size_t>> dependants_;
  std::vector<uint32_t> waiting_on_;
  std::vector<OpTiming> timing_;
  std::vector<uint8_t> completed_flag_;
  std::vector<size_t> host_attention_order_;  // indices of host attention ops, in id order
  std::map<size_t, size_t> host_attention_rank_;
  std::map<size_t, Fetch> fetches_;
  std::map<uint32_t, uint64_t> appended_tokens_;  // by layer: tokens of the kv_append ops issued so far
  std::vector<size_t> ssd_attention_order_;         // indices of SSD attention ops, in id order
  std::map<size_t, size_t> ssd_attention_rank_;
  std::vector<uint8_t> prefetchable_;               // by rank: certain to be the next SSD command
  std::map<size_t, Pending> predicted_supplied_;    // by index: the appended KV its command will carry
  std::map<size_t, SsdAttention> prefetched_;       // by index: prefetch sent, command not yet
  uint64_t ssd_prefetches_ = 0;
  std::string refusal_;
  size_t ssd_attention_issued_ = 0, ssd_attention_completed_ = 0;
  std::map<std::pair<uint32_t, int>, std::vector<Done>> reads_in_flight_;  // waiters per (layer, region)
  std::vector<size_t> ready_queue_;
  std::set<size_t> in_flight_;
  std::optional<trace::Phase> phase_now_;
  PhaseListener phase_listener_;
  std::function<void(size_t)> completion_listener_;
  Done drained_listener_;
  bool running_ready_ = false;
  size_t completed_ = 0;
  uint64_t last_end_ps_ = 0;
  uint64_t drained_ps_ = 0;
  struct BufferedWrite {
    bool from_host;
    uint32_t layer;
    uint64_t tokens, bytes;
  };
  void send_write(const BufferedWrite& w, Done then = nullptr);
  const uint64_t write_chunk_bytes_;
  std::vector<BufferedWrite> write_buffer_;  // in arrival order
  uint64_t buffered_bytes_ = 0;
  unsigned foreground_in_flight_ = 0;
  unsigned writes_in_flight_ = 0;
  bool draining_ = false;
  uint64_t kv_read_bytes_ = 0;
  uint64_t staging_hit_bytes_ = 0;
};

}  // namespace ispsim::systems
