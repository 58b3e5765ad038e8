// The host's KV budget against the memory accounting (traces/memory_accounting.h,
// what `ispsim trace gen --budget-table` prints): for the programs the GPU
// baselines run, the KV the runtime plans its staging for is one copy of every
// token of the request (context + query + answer) in every layer, CacheBlend's
// recomputed entries overwriting their precomputed ones in place.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/core/server.h"
#include "platforms/systems/runtime.h"
#include "traces/memory_accounting.h"
#include "traces/gen/shape_generator.h"
#include "traces/trace_io.h"

namespace ispsim::systems {
namespace {

struct IdleHost : HostComputePort {
  core::Server gpu{"gpu", 0.0, sc_core::SC_ZERO_TIME};
  sc_core::sc_time compute(const trace::Op&, Done done) override {
    return gpu.submit(sc_core::sc_time(1, sc_core::SC_NS), 0, std::move(done));
  }
};
struct PlanOnly : StagingPort {
  uint64_t planned = 0;
  void plan(uint64_t kv_bytes) override { planned = kv_bytes; }
  uint64_t lookup(uint32_t, trace::KvRegion, uint64_t) override { return 0; }
  void append(uint32_t, trace::KvRegion, uint64_t) override {}
  void overwrite(uint32_t, trace::KvRegion, uint64_t) override {}
  void fetched(uint32_t, trace::KvRegion, uint64_t, uint64_t) override {}
};
struct NoStorage : StoragePort {
  void read_to_host(uint32_t, trace::KvRegion, uint64_t, uint64_t, uint64_t, HostReadPath, Done) override {}
  void write_from_host(uint32_t, uint64_t, uint64_t, Done) override {}
  void attention(const SsdAttention&, Done) override {}
  void append_in_ssd(uint32_t, uint64_t, uint64_t, Done) override {}
};

TEST(RuntimeBudget, TheHostHoldsOneKvCopyAsTheMemoryAccountingCounts) {
  tracegen::ShapeOptions options;
  options.model = "OPT-350M";
  options.dataset = "hpt";
  options.context_tokens = 300;  // per document, 5 documents
  options.query_tokens = 12;
  options.answer_tokens = 4;
  const std::string path = ::testing::TempDir() + "budget.trace";
  tracegen::generate_shape_trace(options, path);
  IdleHost host;  // one SystemC object for both programs (the runs are not simulated)
  for (const trace::Program program : {trace::FULL_PREFILL, trace::PRECOMPUTED_BLEND}) {
    SCOPED_TRACE(trace::Program_Name(program));
    trace::TraceReader reader(path);
    const trace::Header header = reader.header();
    std::vector<trace::Op> ops;
    trace::Op op;
    while (reader.next(op))
      if (op.program() == program) ops.push_back(op);
    schema::PlacementParams placement;
    placement.set_prefill_attention(schema::PlacementParams::HOST_GPU);
    placement.set_decode_attention(schema::PlacementParams::HOST_GPU);
    PlanOnly staging;
    NoStorage storage;
    Runtime runtime(header, std::move(ops), placement, host, staging, storage, 1 << 20);
    runtime.start();
    const uint64_t tokens = 5 * 300 + 12 + 4;
    EXPECT_EQ(staging.planned, tokens * accounting::kv_bytes_per_token(header.model()));
    accounting::MemoryAccounting one_copy;  // the accounting's physical default: one KV copy, no workspace
    EXPECT_EQ(staging.planned, accounting::request_bytes(tokens, header.model(), one_copy) -
                                   accounting::fixed_bytes(header.model(), one_copy));
  }
}

}  // namespace
}  // namespace ispsim::systems
