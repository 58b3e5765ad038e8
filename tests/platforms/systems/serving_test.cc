// The request stream server (platforms/systems/serving.h) with an executor of
// fixed service times: the queue against M/D/1 (Pollaczek-Khinchine) and the
// closed-loop interactive response-time law; TTFT, TBT and queueing exactly
// for a hand-made stream.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <systemc>

#include "common/error.h"
#include "platforms/systems/serving.h"
#include "platforms/systems/serving_store.h"
#include "platforms/systems/slo_search.h"
#include "schema/textproto_file.h"
#include "tests/support/files.h"
#include "traces/gen/model_presets.h"
#include "traces/workload/stream_gen.h"
#include "traces/workload/workload_file.h"

using namespace ispsim;
using namespace ispsim::systems;
using ispsim::testing::scratch_dir;

namespace {

// Serves every request in `prefill_ps`, then one token every `decode_ps` per
// answer token: tokens at prefill, prefill + decode, ...; done with the last.
// Charges each request 1 J and 4096 NAND bytes per output token.
class FixedExecutor : public sc_core::sc_module, public RequestExecutor {
 public:
  SC_HAS_PROCESS(FixedExecutor);
  FixedExecutor(sc_core::sc_module_name name, uint64_t prefill_ps, uint64_t decode_ps)
      : sc_module(name), prefill_ps_(prefill_ps), decode_ps_(decode_ps) {
    SC_METHOD(step);
    sensitive << event_;
    dont_initialize();
  }
  void execute(const workload::StreamRequest& request, Callbacks callbacks) override {
    callbacks_ = std::move(callbacks);
    left_ = request.answer_tokens();
    tokens_ = left_ + 1;
    event_.notify(sc_core::sc_time::from_value(prefill_ps_));
  }
  void store(const workload::StreamRecord& event) override {
    stored.push_back({sc_core::sc_time_stamp().value(), event});
  }
  std::vector<std::pair<uint64_t, workload::StreamRecord>> stored;  // (when handed over, ps; the event)

 private:
  void step() {
    callbacks_.token();
    if (left_ == 0) {
      callbacks_.done();
      RequestUsage usage;
      usage.energy_j = 1;
      usage.nand_read_bytes = 4096 * tokens_;
      return callbacks_.settled(usage);
    }
    --left_;
    event_.notify(sc_core::sc_time::from_value(decode_ps_));
  }
  uint64_t prefill_ps_, decode_ps_, left_ = 0, tokens_ = 0;
  Callbacks callbacks_;
  sc_core::sc_event event_;
};

std::string stream_of(const std::string& text) {
  const std::string spec = (scratch_dir() / "w.txtpb").string(), out = (scratch_dir() / "w.stream").string();
  std::ofstream(spec) << text;
  workload::generate_stream(spec, out);
  return out;
}

// M/D/1 at ρ = 0.5: S = 10 ms, λ = 50/s. Pollaczek-Khinchine: the mean wait is
// ρ S / (2 (1 - ρ)) = 5 ms. The run's 95 % confidence interval comes from 20
// batch means of 5,000 requests (the first batch, the warm-up, dropped).
TEST(Serving, PoissonArrivalsWithDeterministicServiceMatchPollaczekKhinchine) {
  workload::StreamReader stream(stream_of("model: 'SmolLM2-135M' dataset: 'hpt' documents: 10 requests: 105000 "
                                          "answer_tokens: 0 poisson { rate_per_s: 50 }"));
  FixedExecutor executor("executor", 10'000'000'000, 0);
  const uint64_t batch = 5000;
  std::vector<double> batch_sum(21, 0.0);
  Server server("server", stream, executor, 1, [&](const ServedRequest& r) {
    batch_sum[r.index / batch] += static_cast<double>(r.queueing_ps()) * 1e-9;  // ms
  });
  sc_core::sc_start();
  ASSERT_EQ(server.statistics().requests, 105000u);
  double mean = 0, square = 0;
  for (size_t b = 1; b < batch_sum.size(); ++b) mean += batch_sum[b] / batch / 20;
  for (size_t b = 1; b < batch_sum.size(); ++b) square += std::pow(batch_sum[b] / batch - mean, 2);
  const double half_width = 2.093 * std::sqrt(square / 19 / 20);  // Student t, 19 degrees of freedom
  const double rho = 0.5, service_ms = 10, pk_ms = rho * service_ms / (2 * (1 - rho));
  EXPECT_NEAR(mean, pk_ms, half_width) << "half width " << half_width << " ms";
  EXPECT_LT(half_width, 0.1 * pk_ms);  // the interval is tight enough to mean something
  EXPECT_DOUBLE_EQ(server.statistics().latency.min(), 10e6);  // ns: an idle server serves at once
}

// Closed loop: N users, think time Z: throughput X = N / (R + Z), R the mean
// response time, exact up to the end of the run (every user busy or thinking).
TEST(Serving, ClosedLoopThroughputIsUsersOverResponsePlusThinkTime) {
  workload::StreamReader stream(stream_of("model: 'SmolLM2-135M' dataset: 'hpt' documents: 10 requests: 20000 "
                                          "answer_tokens: 0 closed_loop { users: 8 think_time_s: 0.05 }"));
  FixedExecutor executor("executor", 10'000'000'000, 0);
  double think_s = 0;
  Server server("server", stream, executor, 1, [](const ServedRequest&) {});
  sc_core::sc_start();
  const ServingStatistics& s = server.statistics();
  ASSERT_EQ(s.requests, 20000u);
  // The generated think times' mean (the law uses the realized Z).
  workload::StreamReader again((scratch_dir() / "w.stream").string());
  workload::StreamRecord record;
  while (again.next(record)) think_s += record.has_request() ? record.request().think_ns() * 1e-9 : 0.0;
  think_s /= 20000;
  const double response_s = s.latency.mean() * 1e-9;
  const double law = 8 / (response_s + think_s);
  EXPECT_NEAR(s.throughput_per_s(), law, 0.01 * law);
  // Saturated: 8 users thinking 50 ms keep a 10 ms server about 100 % busy: X ≈ 1/S.
  EXPECT_NEAR(s.throughput_per_s(), 100, 5);
}

// Arrivals at 0 and 1 ms, prefill 2 ms, two decode tokens of 0.5 ms each: the
// second waits 1 ms (2 ms - 1 ms) and then takes 3 ms.
TEST(Serving, QueueingTtftAndTbtOfAHandMadeStream) {
  std::ofstream((scratch_dir() / "arrivals.txt").string()) << "0\n0.001\n";
  workload::StreamReader stream(stream_of("model: 'SmolLM2-135M' dataset: 'hpt' documents: 10 answer_tokens: 2 "
                                          "arrival_list { file: 'arrivals.txt' }"));
  FixedExecutor executor("executor", 2'000'000'000, 500'000'000);
  std::vector<ServedRequest> served;
  Server server("server", stream, executor, 1, [&](const ServedRequest& r) { served.push_back(r); });
  sc_core::sc_start();
  ASSERT_EQ(served.size(), 2u);
  EXPECT_EQ(served[0].queueing_ps(), 0u);
  EXPECT_EQ(served[0].ttft_ps(), 2'000'000'000u);
  EXPECT_EQ(served[0].latency_ps(), 3'000'000'000u);
  EXPECT_EQ(served[0].tokens, 3u);
  EXPECT_EQ(served[0].mean_tbt_ps(), 500'000'000.0);
  EXPECT_EQ(served[1].arrival_ps, 1'000'000'000u);
  EXPECT_EQ(served[1].queueing_ps(), 2'000'000'000u);
  EXPECT_EQ(served[1].ttft_ps(), 4'000'000'000u);
  EXPECT_EQ(served[1].latency_ps(), 5'000'000'000u);
  EXPECT_EQ(server.statistics().tbt.count(), 4u);
  EXPECT_EQ(server.statistics().tbt.max(), 0.5e6);  // ns
  EXPECT_DOUBLE_EQ(server.statistics().throughput_per_s(), 2 / 6e-3);
  EXPECT_EQ(served[1].usage.nand_read_bytes, 3 * 4096u);  // what the executor charged reaches the sink
  EXPECT_EQ(server.statistics().energy.sum(), 2.0);
  EXPECT_EQ(server.statistics().nand_read.max(), 3 * 4096.0);
}

// Ingestions (and the evictions they cause) reach the executor at their own
// times, in stream order, each once, while the requests are served.
TEST(Serving, StoreEventsReachTheExecutorAtTheirTimes) {
  workload::StreamReader stream(stream_of("model: 'SmolLM2-135M' dataset: 'hpt' documents: 10 requests: 30 "
                                          "poisson { rate_per_s: 20 } ingestion { rate_per_s: 50 "
                                          "capacity_documents: 12 }"));
  FixedExecutor executor("executor", 1'000'000'000, 0);
  Server server("server", stream, executor, 1, [](const ServedRequest&) {});
  sc_core::sc_start();
  ASSERT_EQ(server.statistics().requests, 30u);
  workload::StreamReader again((scratch_dir() / "w.stream").string());
  workload::StreamRecord record;
  size_t i = 0;
  while (again.next(record)) {
    if (!record.has_ingest() && !record.has_evict()) continue;
    ASSERT_LT(i, executor.stored.size());
    const auto& [at_ps, event] = executor.stored[i++];
    EXPECT_EQ(event.SerializeAsString(), record.SerializeAsString());
    EXPECT_EQ(at_ps, (record.has_ingest() ? record.ingest().at_ns() : record.evict().at_ns()) * 1000);
  }
  EXPECT_EQ(i, executor.stored.size());
  EXPECT_EQ(server.store_events(), i);
  EXPECT_GT(i, 20u);
}

// The ring of ingested documents: runs in order, a wrap-around split in two,
// the oldest evicted first, a corpus document freeing nothing.
TEST(DocumentStore, RingRunsWrapAndOldestFirstEviction) {
  DocumentStore store(1000, 10, 5);  // logical pages 1000-1009; ids 0-4 the corpus
  using Runs = std::vector<std::pair<uint64_t, uint64_t>>;
  const auto runs = [](const std::vector<DocumentStore::Run>& r) {
    Runs out;
    for (const DocumentStore::Run& x : r) out.push_back({x.lpn, x.count});
    return out;
  };
  EXPECT_EQ(runs(store.ingest(5, 4)), (Runs{{1000, 4}}));
  EXPECT_EQ(runs(store.ingest(6, 4)), (Runs{{1004, 4}}));
  EXPECT_THROW(store.ingest(7, 3), std::logic_error);  // 2 pages left
  EXPECT_TRUE(store.evict(0, "test").empty());       // the corpus
  EXPECT_THROW(store.evict(6, "test"), BadInput);       // 5 is older
  EXPECT_EQ(runs(store.evict(5, "test")), (Runs{{1000, 4}}));
  EXPECT_EQ(runs(store.ingest(7, 5)), (Runs{{1008, 2}, {1000, 3}}));
  EXPECT_EQ(store.used_pages(), 9u);
  EXPECT_EQ(runs(store.evict(6, "test")), (Runs{{1004, 4}}));
  EXPECT_EQ(runs(store.evict(7, "test")), (Runs{{1008, 2}, {1000, 3}}));
  EXPECT_EQ(store.used_pages(), 0u);
}

// SmolLM2-135M (30 layers, 3 KV heads of 64, FP16): T = 16384 / 256 = 64
// tokens per page, 768 bytes of K and V per token and layer.
TEST(DocumentStore, FootprintOfADocumentsKvAndOfItsText) {
  trace::ModelShape shape;
  shape.set_layers(30);
  shape.set_heads(9);
  shape.set_kv_heads(3);
  shape.set_head_dim(64);
  shape.set_kv_bits(16);
  const DocumentFootprint kv = document_footprint(shape, 16384, 300, false);
  EXPECT_EQ(kv.pages, 30u * 5 * 3);  // ceil(300 / 64) = 5 tiles per head and layer
  EXPECT_EQ(kv.bytes, 30u * 300 * 768);
  const DocumentFootprint text = document_footprint(shape, 16384, 5000, true);
  EXPECT_EQ(text.bytes, 5000u * kTextBytesPerToken);
  EXPECT_EQ(text.pages, 2u);  // 20,000 bytes in 16 KiB pages
}

// The KV of a 300-token document of SmolLM2-135M (30 layers, hidden h = 576,
// 9 heads and 3 KV heads of d = 64, FFN f = 1536): the forward pass over its
// 300 tokens through layer 28, and layer 29 up to its K and V. Its GEMMs
// multiply T x (sum of the weights' sizes): per full layer the QKV (h x (9 + 6)
// d), O (9d x h), gate and up (h x 2f) and down (f x h) projections; layer 29
// only its QKV projection.
TEST(DocumentStore, PrecomputingADocumentsKvIsTheForwardPassUpToTheLastLayersKv) {
  const trace::ModelShape shape = tracegen::find_model_preset("SmolLM2-135M");
  const std::vector<trace::Op> ops = document_precompute_ops(shape, 300);
  const double h = 576, d = 64, f = 1536, qkv = h * 15 * d;
  double weights_times_rows = 0;
  for (const trace::Op& op : ops) {
    ASSERT_TRUE(op.has_gemm() || op.has_attention() || op.has_nonlinear()) << op.label();
    if (op.layer() == 29) {
      EXPECT_TRUE(op.label() == "input_norm" || op.label() == "qkv_proj" || op.label() == "rope");
    }
    if (op.has_gemm()) weights_times_rows += double(op.gemm().m()) * op.gemm().n() * op.gemm().k();
  }
  EXPECT_EQ(weights_times_rows, 300 * (29 * (qkv + 9 * d * h + h * 2 * f + f * h) + qkv));
  EXPECT_THROW(document_precompute_ops(shape, 1), std::logic_error);
}

}  // namespace

namespace {

// Bisection against a closed form: an M/M/1 mean response time S / (1 - λS),
// S = 0.1 s, within an SLO of 1 s up to λ = 9/s.
TEST(SloSearch, BracketsTheClosedFormRate) {
  const auto response_ns = [](double rate) { return rate >= 10 ? 1e30 : 0.1e9 / (1 - rate * 0.1); };
  const SloResult r = search_slo(0.1, 20, 10, 1e9, response_ns);
  EXPECT_FALSE(r.fails_at_low || r.meets_at_high);
  EXPECT_LE(r.met_rate_per_s, 9.0);
  EXPECT_GT(r.missed_rate_per_s, 9.0);
  EXPECT_LE(r.missed_rate_per_s - r.met_rate_per_s, (20 - 0.1) / 1024 * (1 + 1e-12));
  EXPECT_EQ(r.probes.size(), 12u);
  EXPECT_TRUE(search_slo(0.1, 5, 3, 1e9, response_ns).meets_at_high);
  const SloResult low = search_slo(9.5, 20, 3, 1e9, response_ns);
  EXPECT_TRUE(low.fails_at_low);
  EXPECT_EQ(low.probes.size(), 1u);
}

}  // namespace
