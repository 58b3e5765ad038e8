// Continuous batching (platforms/systems/serving_batch.h): host runtimes of
// generated FULL_PREFILL requests on a roofline GPU, with every KV byte staged
// on the host, so that each token time is a sum of GPU op durations: prefills
// alone, decode steps as batched kernels (host::Gpu::cost of a batch).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <memory>
#include <systemc>
#include <vector>

#include "models/host/gpu.h"
#include "platforms/systems/serving_batch.h"
#include "schema/resolve.h"
#include "tests/support/files.h"
#include "traces/workload/request_trace.h"
#include "traces/workload/stream_gen.h"
#include "traces/workload/stream_io.h"

namespace ispsim::systems {
namespace {

using ispsim::testing::scratch_dir;

// Holds everything (a staging area larger than any request).
struct AllStaged : StagingPort {
  void plan(uint64_t) override {}
  uint64_t lookup(uint32_t, trace::KvRegion, uint64_t bytes) override { return bytes; }
  void append(uint32_t, trace::KvRegion, uint64_t) override {}
  void overwrite(uint32_t, trace::KvRegion, uint64_t) override {}
  void fetched(uint32_t, trace::KvRegion, uint64_t, uint64_t) override {}
};

// No storage work happens: KV stays in host memory.
struct NoStorage : StoragePort {
  void read_to_host(uint32_t, trace::KvRegion, uint64_t, uint64_t, uint64_t, HostReadPath, Done) override { fail(); }
  void write_from_host(uint32_t, uint64_t, uint64_t, Done) override { fail(); }
  void attention(const SsdAttention&, Done) override { fail(); }
  void append_in_ssd(uint32_t, uint64_t, uint64_t, Done) override { fail(); }
  static void fail() { ADD_FAILURE() << "storage used"; }
};

// A request's storage port over the slot whose appended entries start at `base`.
struct SlotPort : NoStorage {
  explicit SlotPort(uint64_t slot_base) : base(slot_base) {}
  SsdAttention placed(SsdAttention work) const override {
    work.appended_base = base;
    return work;
  }
  const uint64_t base;
};

// Sends the batched attention commands: records where each work's appended KV starts.
struct CommandPort : NoStorage {
  void attention_batch(const std::vector<SsdAttention>& works, Done) override {
    for (const SsdAttention& w : works) bases.push_back(w.appended_base);
  }
  std::vector<uint64_t> bases;
};

bool on_gpu(const trace::Op& op) { return !op.has_kv_append() && !op.has_kv_load(); }

// Identical requests: one 256-token document, 16 query tokens, 4 answer tokens.
std::vector<workload::RequestProgram> programs(size_t n) {
  const std::string spec = (scratch_dir() / "w.txtpb").string(), out = (scratch_dir() / "w.stream").string();
  std::ofstream(spec) << "model: 'SmolLM2-135M' dataset: 'hpt' documents: 1 top_k: 1 document_tokens: 256 "
                         "query_tokens: 16 answer_tokens: 4 requests: "
                      << n << " poisson { rate_per_s: 1 }";
  workload::generate_stream(spec, out);
  workload::StreamReader reader(out);
  std::vector<workload::RequestProgram> result;
  workload::StreamRecord record;
  while (reader.next(record))
    if (record.has_request())
      result.push_back(workload::request_program(reader.header(), record.request(), trace::FULL_PREFILL, "test"));
  return result;
}

struct Rig : sc_core::sc_module {
  SC_HAS_PROCESS(Rig);
  Rig(sc_core::sc_module_name name, std::vector<workload::RequestProgram> requests)
      : sc_module(name),
        programs(std::move(requests)),
        gpu("gpu", host::HostConfig::from_params(schema::resolved(schema::HostParams(), "host"), "host")),
        batcher("batcher", gpu, programs.front().header.model(), false, storage) {
    placement = schema::resolved(schema::PlacementParams(), "placement");
    placement.set_prefill_attention(schema::PlacementParams::HOST_GPU);
    placement.set_decode_attention(schema::PlacementParams::HOST_GPU);
    placement.set_kv_resident_in_host_memory(true);
    SC_METHOD(admit_later);
    sensitive << later_;
    dont_initialize();
  }
  // Admits request `id` now (before sc_start: at 0) or at `at_ps`.
  void admit(uint64_t id, uint64_t at_ps = 0) {
    if (at_ps == 0) return admit_now(id);
    later_id_ = id;
    later_.notify(sc_core::sc_time::from_value(at_ps));
  }
  void admit_now(uint64_t id) {
    ports[id] = batcher.ports(id, storage);
    workload::RequestProgram& p = programs[id];
    runtimes[id] = std::make_unique<Runtime>(p.header, p.ops, placement, *ports[id], staging, *ports[id], 4096);
    Runtime& r = *runtimes[id];
    r.set_completion_listener([this, id, &r](size_t index) {
      if (!r.ops()[index].has_lm_head()) return;
      if (tokens[id].empty()) batcher.first_token(id);
      tokens[id].push_back(sc_core::sc_time_stamp().value());
      if (r.finished()) batcher.finished(id);
    });
    batcher.admit(id, [&r] { r.start(); });
  }
  void admit_later() { admit_now(later_id_); }

  // Durations (ps) on an idle GPU: the prefill of request `id`, and decode step
  // `steps[i]` of request `ids[i]` for every i as one batched step.
  uint64_t prefill_ps(uint64_t id) const {
    uint64_t ps = 0;
    for (const trace::Op& op : programs[id].ops.ops)
      if (op.phase() != trace::PHASE_DECODE && on_gpu(op)) ps += gpu.cost(op, model()).duration.value();
    return ps;
  }
  uint64_t step_ps(const std::vector<uint64_t>& ids, const std::vector<uint32_t>& steps) const {
    std::vector<std::vector<const trace::Op*>> per_request;
    for (size_t i = 0; i < ids.size(); ++i) {
      per_request.emplace_back();
      for (const trace::Op& op : programs[ids[i]].ops.ops)
        if (op.phase() == trace::PHASE_DECODE && op.decode_step() == steps[i] && on_gpu(op))
          per_request.back().push_back(&op);
    }
    uint64_t ps = 0;
    for (size_t k = 0; k < per_request.front().size(); ++k) {
      std::vector<const trace::Op*> batch;
      for (const auto& ops : per_request) batch.push_back(ops.at(k));
      ps += gpu.cost(batch, model()).duration.value();
    }
    return ps;
  }
  const trace::ModelShape& model() const { return programs.front().header.model(); }

  std::vector<workload::RequestProgram> programs;
  schema::PlacementParams placement;
  host::Gpu gpu;
  AllStaged staging;
  NoStorage storage;
  DecodeBatcher batcher;
  std::map<uint64_t, std::unique_ptr<DecodeBatcher::Ports>> ports;
  std::map<uint64_t, std::unique_ptr<Runtime>> runtimes;
  std::map<uint64_t, std::vector<uint64_t>> tokens;  // ps of each request's tokens
  sc_core::sc_event later_;
  uint64_t later_id_ = 0;
};

// Two identical requests arriving together: the second prefills after the
// first (prefills run alone), then every decode step of both is one batched
// step whose time is the roofline's of the batch of two (weights once): more
// than one request's step, less than two.
TEST(DecodeBatcher, TwoRequestsArrivingTogetherDecodeInBatchedSteps) {
  Rig rig("rig", programs(2));
  rig.admit(0);
  rig.admit(1);
  sc_core::sc_start();
  const uint64_t prefill = rig.prefill_ps(0);
  ASSERT_EQ(prefill, rig.prefill_ps(1));
  const std::vector<uint64_t>& a = rig.tokens[0];
  const std::vector<uint64_t>& b = rig.tokens[1];
  ASSERT_EQ(a.size(), 5u);  // the prefill's token and 4 decode steps
  ASSERT_EQ(b.size(), 5u);
  EXPECT_EQ(a[0], prefill);
  EXPECT_EQ(b[0], 2 * prefill);
  uint64_t t = 2 * prefill;
  for (uint32_t s = 0; s < 4; ++s) {
    const uint64_t batched = rig.step_ps({0, 1}, {s, s});
    t += batched;
    EXPECT_EQ(a[s + 1], t) << "step " << s;
    EXPECT_EQ(b[s + 1], t) << "step " << s;
    const uint64_t alone = rig.step_ps({0}, {s});
    EXPECT_GT(batched, alone);
    EXPECT_LT(batched, 2 * alone);
  }
  EXPECT_EQ(rig.batcher.steps(), 4u);
  EXPECT_EQ(rig.batcher.largest_batch(), 2u);
}

// A request arriving in the middle of another's first decode step waits for
// that step to end, prefills alone, then joins: the first one's next step is
// batched with the newcomer's first.
TEST(DecodeBatcher, ARequestArrivingMidStepJoinsAtTheNextStepBoundary) {
  Rig rig("rig", programs(2));
  const uint64_t prefill = rig.prefill_ps(0), first_step = rig.step_ps({0}, {0});
  rig.admit(0);
  rig.admit(1, prefill + first_step / 2);
  sc_core::sc_start();
  const std::vector<uint64_t>& a = rig.tokens[0];
  const std::vector<uint64_t>& b = rig.tokens[1];
  ASSERT_EQ(a.size(), 5u);
  ASSERT_EQ(b.size(), 5u);
  EXPECT_EQ(a[1], prefill + first_step);         // not delayed by the arrival
  EXPECT_EQ(b[0], a[1] + rig.prefill_ps(1));     // prefill at the step boundary, alone
  EXPECT_EQ(a[2], b[0] + rig.step_ps({0, 1}, {1, 0}));  // then one batched step
  EXPECT_EQ(b[1], a[2]);
  // The first request leaves after its last step; the second finishes alone.
  EXPECT_EQ(b[4], a[4] + rig.step_ps({1}, {3}));
}

// Two requests in a decode step, each over its own slot: the step's one NVMe
// command carries each request's attention placed by that request's port, so
// the SSD reads each one's appended KV from its own slot.
TEST(DecodeBatcher, ABatchedAttentionCommandServesEachRequestFromItsOwnSlot) {
  host::Gpu gpu("gpu", host::HostConfig::from_params(schema::resolved(schema::HostParams(), "host"), "host"));
  CommandPort command;
  DecodeBatcher batcher("batcher", gpu, programs(1).front().header.model(), false, command);
  SlotPort first(1000), second(2000);
  const std::unique_ptr<DecodeBatcher::Ports> a = batcher.ports(0, first), b = batcher.ports(1, second);
  batcher.admit(0, [] {});
  batcher.admit(1, [] {});
  sc_core::sc_start(1, sc_core::SC_PS);  // request 0 prefills
  batcher.first_token(0);
  sc_core::sc_start(1, sc_core::SC_PS);  // request 1 prefills
  batcher.first_token(1);
  sc_core::sc_start(1, sc_core::SC_PS);  // both join a step
  SsdAttention work;
  work.layer = 3;
  a->attention(work, [] {});
  b->attention(work, [] {});
  sc_core::sc_start(1, sc_core::SC_PS);
  EXPECT_EQ(command.bases, (std::vector<uint64_t>{1000, 2000}));
}

}  // namespace
}  // namespace ispsim::systems
