// Continuous batching of decode steps for a request stream on a RAG platform
// whose host batches (host.batch_limit > 1): iteration-level scheduling as in
// Orca (Yu et al., OSDI 2022) and vLLM, where requests join and leave the
// batch between decode steps.
//
// Each request in service has its own host runtime (serving_blend.h), which
// sends its ops to the devices through ports this batcher gives it:
// - Prefill runs alone, one request at a time in admission order, and only
//   between decode steps: a request's runtime starts at a step boundary, and
//   decode steps wait until its prefill has produced its first token (vLLM's
//   scheduler without chunked prefill also runs waiting prefills first).
// - After its first token a request joins the decode batch at the next step
//   boundary. Within a step every member's GPU ops and SSD attention commands
//   form one chain (traces/gen/program_builder.cc), so the k-th of each member
//   is the same op of the model: once every member has sent it, they run as
//   one. A GPU op becomes one batched kernel (host::Gpu::cost of a batch:
//   weights read once, rows stacked; attention over each request's own KV). An
//   SSD attention becomes one fused NVMe command carrying every member's Q
//   and appended KV; the SSD serves the members' KV streams one after another
//   in admission order (first come, first served).
// - The step ends when its batched LM head completes; a request whose last
//   token that was leaves the batch.
// Everything else a runtime does (KV reads to the host, background writes)
// goes to the devices through its own storage port (on a request stream, its
// slot of the SSD's appended region) as it would alone, competing first come,
// first served. A held SSD attention is placed by that port, so a batched
// command serves each member's appended KV from the member's own slot.
//
// Held ops are decided one delta cycle later, so a decision sees every
// member's reaction to a completion; no simulated time passes.
//
// Statistics (system.serving.batch): steps, ops (the batched GPU kernels and
// NVMe commands of the steps), largest (most requests in one step).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <systemc>
#include <vector>

#include "models/core/stats.h"
#include "models/host/gpu.h"
#include "platforms/systems/runtime.h"

namespace ispsim::systems {

class DecodeBatcher : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(DecodeBatcher);
  // `ssd` sends the batched attention commands.
  DecodeBatcher(sc_core::sc_module_name name, host::Gpu& gpu, const trace::ModelShape& shape, bool grows_kv_by_copy,
                StoragePort& ssd);

  // What one request's runtime sends its ops to (both ports in one object);
  // its storage ops outside the steps go to `storage`.
  class Ports;
  std::unique_ptr<Ports> ports(uint64_t id, StoragePort& storage);

  // Request `id` is in service; `start` (its runtime's start) runs when its prefill may begin.
  void admit(uint64_t id, Done start);
  // Its prefill produced the first token.
  void first_token(uint64_t id);
  // Its last op completed.
  void finished(uint64_t id);

  uint64_t steps() const { return steps_.value(); }
  uint64_t largest_batch() const { return largest_batch_; }

 private:
  friend class Ports;
  enum class Stage { kWaiting, kPrefill, kJoining, kDecoding };
  struct Held {  // a member's next op of the step: a GPU op or an SSD attention
    const trace::Op* op = nullptr;
    SsdAttention work;
    Done done;
  };
  struct Request {
    Stage stage = Stage::kWaiting;
    Done start;
    std::optional<Held> held;
  };

  sc_core::sc_time compute(uint64_t id, const trace::Op& op, Done done);
  void attention(uint64_t id, StoragePort& storage, const SsdAttention& work, Done done);
  bool in_decode(uint64_t id) const;
  void hold(uint64_t id, Held held);
  void advance();  // the decision process (see the header comment)
  void begin_step();
  void run_step_op();
  void step_op_done(const std::vector<uint64_t>& ids, bool step_end);

  host::Gpu& gpu_;
  const trace::ModelShape shape_;
  const bool grows_kv_by_copy_;
  StoragePort& ssd_;
  std::map<uint64_t, Request> requests_;  // in service, by id (= admission order)
  std::deque<uint64_t> waiting_;          // admitted, prefill not begun
  std::optional<uint64_t> prefilling_;
  std::vector<uint64_t> members_;         // of the step under way, in admission order
  bool step_open_ = false, op_in_flight_ = false;
  uint64_t largest_batch_ = 0;
  sc_core::sc_event advance_event_;
  stats::Group stats_{"system.serving.batch"};
  stats::Counter& steps_ = stats_.counter("steps", "count", "decode steps run as one batched step");
  stats::Counter& ops_ = stats_.counter("ops", "count", "batched GPU kernels and NVMe attention commands of the steps");
};

// Both ports of one request's runtime; decode ops go to the batcher, the rest
// straight to the devices through the request's storage port.
class DecodeBatcher::Ports : public HostComputePort, public StoragePort {
 public:
  Ports(DecodeBatcher& batcher, uint64_t id, StoragePort& storage) : batcher_(batcher), id_(id), storage_(storage) {}
  sc_core::sc_time compute(const trace::Op& op, Done done) override {
    return batcher_.compute(id_, op, std::move(done));
  }
  bool grows_kv_by_copy() const override { return batcher_.grows_kv_by_copy_; }
  void read_to_host(uint32_t layer, trace::KvRegion region, uint64_t token_begin, uint64_t token_end, uint64_t bytes,
                    HostReadPath path, Done done) override {
    storage_.read_to_host(layer, region, token_begin, token_end, bytes, path, std::move(done));
  }
  void write_from_host(uint32_t layer, uint64_t tokens, uint64_t bytes, Done done) override {
    storage_.write_from_host(layer, tokens, bytes, std::move(done));
  }
  void append_in_ssd(uint32_t layer, uint64_t tokens, uint64_t bytes, Done done) override {
    storage_.append_in_ssd(layer, tokens, bytes, std::move(done));
  }
  void attention(const SsdAttention& work, Done done) override {
    batcher_.attention(id_, storage_, work, std::move(done));
  }

 private:
  DecodeBatcher& batcher_;
  const uint64_t id_;
  StoragePort& storage_;
};

}  // namespace ispsim::systems
