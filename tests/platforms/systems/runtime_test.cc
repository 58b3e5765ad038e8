// The host runtime against fake devices with fixed times, so every expected
// time is a closed form: host ops take 10 ns, an SSD read 100 ns, an SSD
// attention 50 ns, a background write 1000 ns.
#include <gtest/gtest.h>

#include <map>
#include <systemc>

#include "models/core/server.h"
#include "models/host/gpu.h"
#include "platforms/systems/blend_devices.h"
#include "platforms/systems/runtime.h"
#include "schema/resolve.h"

namespace ispsim::systems {
namespace {

using sc_core::SC_NS;
using sc_core::sc_time;

constexpr uint64_t kNs = 1000;  // ps

struct FakeHost : HostComputePort {
  core::Server gpu{"gpu", 0.0, sc_core::SC_ZERO_TIME};
  std::vector<uint64_t> order;
  sc_time compute(const trace::Op& op, Done done) override {
    order.push_back(op.id());
    const sc_time end = gpu.submit(sc_time(10, SC_NS), 0, std::move(done));
    return end - sc_time(10, SC_NS);
  }
};

// Keeps everything it is given (an unbounded staging area).
struct FakeStaging : StagingPort {
  std::map<std::pair<uint32_t, int>, uint64_t> bytes;
  std::map<std::pair<uint32_t, int>, uint64_t> overwritten;
  uint64_t planned = 0;
  void plan(uint64_t kv_bytes) override { planned = kv_bytes; }
  uint64_t lookup(uint32_t layer, trace::KvRegion region, uint64_t b) override {
    return std::min(b, bytes[{layer, region}]);
  }
  void append(uint32_t layer, trace::KvRegion region, uint64_t b) override { bytes[{layer, region}] += b; }
  void overwrite(uint32_t layer, trace::KvRegion region, uint64_t b) override { overwritten[{layer, region}] += b; }
  void fetched(uint32_t layer, trace::KvRegion region, uint64_t read, uint64_t) override {
    bytes[{layer, region}] += read;
  }
};

struct FakeStorage : StoragePort {
  core::Server flash{"flash", 0.0, sc_core::SC_ZERO_TIME};
  std::vector<SsdAttention> attentions;
  uint64_t read_bytes = 0, written_bytes = 0, appended_bytes = 0;
  std::vector<uint64_t> write_starts_ps;
  std::map<HostReadPath, uint64_t> path_bytes;
  void read_to_host(uint32_t, trace::KvRegion, uint64_t, uint64_t, uint64_t bytes, HostReadPath path,
                    Done done) override {
    read_bytes += bytes;
    path_bytes[path] += bytes;
    flash.submit(sc_time(100, SC_NS), bytes, std::move(done));
  }
  void write_from_host(uint32_t, uint64_t, uint64_t bytes, Done done) override {
    written_bytes += bytes;
    write_starts_ps.push_back(flash.free_at().value());
    flash.submit(sc_time(1000, SC_NS), bytes, std::move(done));
  }
  unsigned attentions_in_flight = 0;
  void attention(const SsdAttention& w, Done done) override {
    attentions.push_back(w);
    ++attentions_in_flight;
    flash.submit(sc_time(50, SC_NS), 0, [this, done = std::move(done)] {
      --attentions_in_flight;
      done();
    });
  }
  void append_in_ssd(uint32_t, uint64_t, uint64_t bytes, Done done) override {
    appended_bytes += bytes;
    write_starts_ps.push_back(flash.free_at().value());
    flash.submit(sc_time(1000, SC_NS), bytes, std::move(done));
  }
  std::vector<std::pair<uint64_t, SsdAttention>> prefetches;  // (time in ps, work)
  unsigned prefetches_overtaking = 0;  // sent while an earlier attention command was outstanding
  void prefetch_attention(const SsdAttention& w) override {
    prefetches.emplace_back(sc_core::sc_time_stamp().value(), w);
    if (attentions_in_flight > 0) ++prefetches_overtaking;
  }
  struct Gemv {
    uint64_t weight_bytes, weight_elements, rows, input_bytes, output_bytes;
  };
  std::vector<Gemv> gemvs;
  void gemv_in_flash(uint64_t weight_bytes, uint64_t weight_elements, uint64_t rows, uint64_t input_bytes,
                     uint64_t output_bytes, Done done) override {
    gemvs.push_back({weight_bytes, weight_elements, rows, input_bytes, output_bytes});
    flash.submit(sc_time(30, SC_NS), 0, std::move(done));
  }
};

// A model with 1 KV head of dim 4 at 16 bits: 16 bytes of K and V per token.
trace::Header header() {
  trace::Header h;
  trace::ModelShape* m = h.mutable_model();
  m->set_layers(2);
  m->set_hidden(4);
  m->set_heads(1);
  m->set_kv_heads(1);
  m->set_head_dim(4);
  m->set_kv_bits(16);
  m->set_activation_bits(16);
  m->set_weight_bits(16);
  return h;
}

trace::Header header_with_context(uint64_t tokens) {
  trace::Header h = header();
  h.mutable_request()->add_documents()->set_tokens(tokens);
  return h;
}

trace::Op gemm(uint64_t id, std::vector<uint64_t> deps, trace::Phase phase = trace::PHASE_FULL_PREFILL) {
  trace::Op op;
  op.set_id(id);
  op.set_phase(phase);
  for (uint64_t d : deps) op.add_deps(d);
  op.mutable_gemm()->set_m(1);
  return op;
}

trace::Op attention(uint64_t id, std::vector<uint64_t> deps, trace::Phase phase, uint32_t layer,
                    uint64_t precomputed, uint64_t appended_begin, uint64_t appended_end) {
  trace::Op op = gemm(id, deps, phase);
  op.clear_gemm();
  op.set_layer(layer);
  trace::Attention* a = op.mutable_attention();
  a->set_query_rows(2);
  if (precomputed) {
    trace::KvSpan* s = a->add_kv();
    s->mutable_tokens()->set_end(precomputed);
    s->set_region(trace::KV_REGION_PRECOMPUTED);
  }
  if (appended_end > appended_begin) {
    trace::KvSpan* s = a->add_kv();
    s->mutable_tokens()->set_begin(appended_begin);
    s->mutable_tokens()->set_end(appended_end);
    s->set_region(trace::KV_REGION_APPENDED);
  }
  return op;
}

trace::Op append(uint64_t id, std::vector<uint64_t> deps, trace::Phase phase, uint32_t layer, uint64_t begin,
                 uint64_t end) {
  trace::Op op = gemm(id, deps, phase);
  op.clear_gemm();
  op.set_layer(layer);
  trace::KvTransfer* t = op.mutable_kv_append();
  t->mutable_tokens()->set_begin(begin);
  t->mutable_tokens()->set_end(end);
  t->set_bytes((end - begin) * 16);
  t->set_region(trace::KV_REGION_APPENDED);
  return op;
}

schema::PlacementParams placement(schema::PlacementParams::Device prefill, unsigned prefetch) {
  schema::PlacementParams p;
  p.set_prefill_attention(prefill);
  p.set_decode_attention(prefill);
  p.set_prefetch_layers(prefetch);
  return p;
}

TEST(Runtime, ChainOfHostOpsTakesTheSumOfTheirTimes) {
  FakeHost host;
  FakeStaging staging;
  FakeStorage storage;
  Runtime rt(header(), {gemm(1, {}), gemm(2, {1}), gemm(3, {2})}, placement(schema::PlacementParams::HOST_GPU, 1),
             host, staging, storage, 1 << 20);
  rt.start();
  sc_core::sc_start();
  rt.check_finished();
  EXPECT_EQ(rt.latency_ps(), 30 * kNs);
  EXPECT_EQ(rt.timing()[2].start_ps, 20 * kNs);
  EXPECT_EQ(rt.timing()[2].end_ps, 30 * kNs);
}

TEST(Runtime, IndependentOpsRunInIdOrderOnTheHost) {
  FakeHost host;
  FakeStaging staging;
  FakeStorage storage;
  Runtime rt(header(), {gemm(1, {}), gemm(2, {}), gemm(3, {1, 2})}, placement(schema::PlacementParams::HOST_GPU, 1),
             host, staging, storage, 1 << 20);
  rt.start();
  sc_core::sc_start();
  EXPECT_EQ(host.order, (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(rt.latency_ps(), 30 * kNs);
}

// Two layers of host attention over 8 precomputed tokens (128 bytes each, not
// staged). With prefetch 1 both reads start at 0 on the FIFO flash (done at 100
// and 200 ns); without, layer 1's read starts when its attention is ready.
TEST(Runtime, PrefetchOverlapsTheNextLayersReadWithCompute) {
  FakeHost host;
  FakeStaging staging;
  FakeStorage storage;
  const auto R = trace::PHASE_RECOMPUTATION;
  Runtime rt(header(),
             {gemm(1, {}, R), attention(2, {1}, R, 0, 8, 0, 0), gemm(3, {2}, R), attention(4, {3}, R, 1, 8, 0, 0),
              gemm(5, {4}, R)},
             placement(schema::PlacementParams::HOST_GPU, 1), host, staging, storage, 1 << 20);
  rt.start();
  sc_core::sc_start();
  rt.check_finished();
  // layer 0 read 0..100, attention 100..110, gemm 110..120; layer 1 read 100..200
  // (prefetched at 0, queued behind layer 0's), attention 200..210, gemm 210..220.
  EXPECT_EQ(rt.timing()[1].start_ps, 100 * kNs);
  EXPECT_EQ(rt.timing()[3].start_ps, 200 * kNs);
  EXPECT_EQ(rt.latency_ps(), 220 * kNs);
  EXPECT_EQ(storage.read_bytes, 2 * 8 * 16u);
  EXPECT_EQ(rt.kv_bytes_read_to_host(), 2 * 8 * 16u);
}

TEST(Runtime, WithoutPrefetchTheReadWaitsForItsOp) {
  FakeHost host;
  FakeStaging staging;
  FakeStorage storage;
  const auto R = trace::PHASE_RECOMPUTATION;
  Runtime rt(header(),
             {gemm(1, {}, R), attention(2, {1}, R, 0, 8, 0, 0), gemm(3, {2}, R), attention(4, {3}, R, 1, 8, 0, 0),
              gemm(5, {4}, R)},
             placement(schema::PlacementParams::HOST_GPU, 0), host, staging, storage, 1 << 20);
  rt.start();
  sc_core::sc_start();
  // gemm 0..10, read 10..110, attention 110..120, gemm 120..130, read 130..230,
  // attention 230..240, gemm 240..250.
  EXPECT_EQ(rt.latency_ps(), 250 * kNs);
}

TEST(Runtime, StagedKvIsNotReadAgain) {
  FakeHost host;
  FakeStaging staging;
  FakeStorage storage;
  staging.bytes[{0, trace::KV_REGION_PRECOMPUTED}] = 8 * 16;
  const auto R = trace::PHASE_RECOMPUTATION;
  Runtime rt(header(), {attention(1, {}, R, 0, 8, 0, 0)}, placement(schema::PlacementParams::HOST_GPU, 1), host,
             staging, storage, 1 << 20);
  rt.start();
  sc_core::sc_start();
  EXPECT_EQ(storage.read_bytes, 0u);
  EXPECT_EQ(rt.kv_bytes_staging_hits(), 8 * 16u);
  EXPECT_EQ(rt.latency_ps(), 10 * kNs);
}

// SSD attention: the same layer's append travels with the command and is
// programmed afterwards, in the background, once the storage is idle.
TEST(Runtime, SsdAttentionCarriesTheLayersAppendAndProgramsItAfterwards) {
  FakeHost host;
  FakeStaging staging;
  FakeStorage storage;
  const auto F = trace::PHASE_FUSED_PREFILL;
  Runtime rt(header_with_context(8),
             {gemm(1, {}, F), append(2, {1}, F, 0, 8, 10), attention(3, {1, 2}, F, 0, 8, 8, 10), gemm(4, {3}, F)},
             placement(schema::PlacementParams::SSD_ISP, 1), host, staging, storage, 1 << 20);
  rt.start();
  sc_core::sc_start();
  rt.check_finished();
  ASSERT_EQ(storage.attentions.size(), 1u);
  const SsdAttention& w = storage.attentions[0];
  EXPECT_EQ(w.context_tokens, 8u);
  EXPECT_EQ(w.appended_tokens_supplied, 2u);
  EXPECT_EQ(w.supplied_kv_bytes, 32u);
  EXPECT_EQ(w.appended_tokens_in_flash, 0u);
  EXPECT_EQ(w.q_bytes, 2u * 4 * 2);
  // gemm 0..10, attention 10..60, gemm 60..70; the append (32 B < one chunk)
  // waits for the drain after the last op: 70..1070.
  EXPECT_EQ(rt.latency_ps(), 70 * kNs);
  EXPECT_EQ(storage.appended_bytes, 32u);
  ASSERT_EQ(storage.write_starts_ps.size(), 1u);
  EXPECT_EQ(storage.write_starts_ps[0], 70 * kNs);
  EXPECT_EQ(rt.drained_ps(), 1070 * kNs);
  EXPECT_EQ(staging.bytes.size(), 0u) << "SSD-bound KV is not staged in host memory";
}

// Host-attention appends are staged and written through in chunks while the
// storage has no foreground work.
TEST(Runtime, HostAppendsAreStagedAndWrittenThroughInChunks) {
  FakeHost host;
  FakeStaging staging;
  FakeStorage storage;
  const auto P = trace::PHASE_FULL_PREFILL;
  Runtime rt(header(), {gemm(1, {}, P), append(2, {1}, P, 0, 0, 4), attention(3, {1, 2}, P, 0, 0, 0, 4), gemm(4, {3}, P)},
             placement(schema::PlacementParams::HOST_GPU, 1), host, staging, storage, /*chunk*/ 32);
  rt.start();
  sc_core::sc_start();
  rt.check_finished();
  // 64 bytes staged at 10 ns: two 32-byte chunks, 10..1010 and 1010..2010; the
  // attention finds its KV staged and never waits for them.
  EXPECT_EQ((staging.bytes[{0, trace::KV_REGION_APPENDED}]), 64u);
  EXPECT_EQ(storage.read_bytes, 0u);
  EXPECT_EQ(rt.latency_ps(), 30 * kNs);
  EXPECT_EQ(storage.write_starts_ps, (std::vector<uint64_t>{10 * kNs, 1010 * kNs}));
  EXPECT_EQ(rt.drained_ps(), 2010 * kNs);
}

// Unfused CacheBlend on the SSD: layer 1's recomputation and query prefill each
// send the KV their own phase appended, even though the query's append is ready
// first.
TEST(Runtime, EachPhaseSendsItsOwnAppendsWithItsCommand) {
  FakeHost host;
  FakeStaging staging;
  FakeStorage storage;
  const auto R = trace::PHASE_RECOMPUTATION, Q = trace::PHASE_QUERY_PREFILL;
  trace::Op recompute = attention(4, {1, 2}, R, 1, 8, 0, 0);
  trace::BitVector* mask = recompute.mutable_attention()->mutable_hkvd_mask();
  mask->set_bit_length(8);
  mask->set_bits(std::string(1, '\x03'));  // tokens 0 and 1 recomputed
  trace::Op query = attention(5, {3, 4}, Q, 1, 8, 8, 10);
  *query.mutable_attention()->mutable_hkvd_mask() = *mask;
  Runtime rt(header_with_context(8), {gemm(1, {}, R), append(2, {1}, R, 1, 0, 2), append(3, {1}, Q, 1, 8, 10), recompute, query},
             placement(schema::PlacementParams::SSD_ISP, 1), host, staging, storage, 1 << 20);
  rt.start();
  sc_core::sc_start();
  rt.check_finished();
  ASSERT_EQ(storage.attentions.size(), 2u);
  EXPECT_EQ(storage.attentions[0].appended_tokens_supplied, 2u);
  EXPECT_EQ(storage.attentions[0].appended_tokens_in_flash, 0u);
  EXPECT_EQ(storage.attentions[1].appended_tokens_supplied, 2u);
  EXPECT_EQ(storage.attentions[1].appended_tokens_in_flash, 2u) << "the recomputed entries are read from flash";
  EXPECT_EQ(rt.ops_completed(), 5u);
}

// Two host attention ops of one layer: the second joins the read the first
// started instead of reading the same KV again.
TEST(Runtime, AFetchJoinsTheReadOfItsKeyUnderWay) {
  FakeHost host;
  FakeStaging staging;
  FakeStorage storage;
  const auto R = trace::PHASE_RECOMPUTATION, Q = trace::PHASE_QUERY_PREFILL;
  Runtime rt(header(), {attention(1, {}, R, 0, 8, 0, 0), attention(2, {}, Q, 0, 8, 0, 0)},
             placement(schema::PlacementParams::HOST_GPU, 1), host, staging, storage, 1 << 20);
  rt.start();
  sc_core::sc_start();
  rt.check_finished();
  EXPECT_EQ(storage.read_bytes, 8 * 16u);
  EXPECT_EQ(rt.kv_bytes_read_to_host(), 8 * 16u);
  // read 0..100, then both attentions on the GPU: 100..110, 110..120.
  EXPECT_EQ(rt.latency_ps(), 120 * kNs);
}

// The host reads back appended KV only after the buffered writes of that layer
// have been written.
TEST(Runtime, AppendedKvIsReadBackAfterItsWrites) {
  FakeHost host;
  FakeStorage storage;
  const auto P = trace::PHASE_FULL_PREFILL, D = trace::PHASE_DECODE;
  trace::Op load = gemm(3, {2}, D);
  load.clear_gemm();
  load.set_layer(0);
  trace::KvTransfer* t = load.mutable_kv_load();
  t->mutable_tokens()->set_end(4);
  t->set_bytes(4 * 16);
  t->set_region(trace::KV_REGION_APPENDED);
  // A staging area that keeps nothing: the load must read the 64 bytes back.
  struct Forgetful : FakeStaging {
    void append(uint32_t, trace::KvRegion, uint64_t) override {}
  };
  Forgetful forgetful;
  Runtime rt(header(), {gemm(1, {}, P), append(2, {1}, P, 0, 0, 4), load},
              placement(schema::PlacementParams::HOST_GPU, 0), host, forgetful, storage, 1 << 20);
  rt.start();
  sc_core::sc_start();
  rt.check_finished();
  // gemm 0..10; the append is buffered (64 B < one chunk); the load flushes it:
  // write 10..1010, then the read 1010..1110.
  ASSERT_EQ(storage.write_starts_ps.size(), 1u);
  EXPECT_EQ(storage.write_starts_ps[0], 10 * kNs);
  EXPECT_EQ(rt.timing()[2].end_ps, 1110 * kNs);
  EXPECT_EQ(storage.read_bytes, 64u);
}

// Inter-layer prefetch: when layer 0's SSD attention completes (60 ns), layer
// 1's is prefetched with the KV its command will carry (its append, known from
// the trace); the command then matches. Each SSD attention depends on the
// previous one, so nothing can come between.
TEST(Runtime, NextLayersSsdAttentionIsPrefetchedWhenTheLayerBeforeCompletes) {
  FakeHost host;
  FakeStaging staging;
  FakeStorage storage;
  const auto F = trace::PHASE_FUSED_PREFILL;
  schema::PlacementParams p = placement(schema::PlacementParams::SSD_ISP, 1);
  p.set_ssd_prefetch_layers(1);
  Runtime rt(header_with_context(8),
             {gemm(1, {}, F), append(2, {1}, F, 0, 8, 10), attention(3, {1, 2}, F, 0, 8, 8, 10), gemm(4, {3}, F),
              append(5, {4}, F, 1, 8, 11), attention(6, {4, 5}, F, 1, 8, 8, 11), gemm(7, {6}, F)},
             p, host, staging, storage, 1 << 20);
  rt.start();
  sc_core::sc_start();
  rt.check_finished();
  ASSERT_EQ(storage.prefetches.size(), 1u);
  EXPECT_EQ(storage.prefetches[0].first, 60 * kNs);
  const SsdAttention& w = storage.prefetches[0].second;
  EXPECT_EQ(w.layer, 1u);
  EXPECT_EQ(w.context_tokens, 8u);
  EXPECT_EQ(w.appended_tokens_supplied, 3u);
  EXPECT_EQ(w.supplied_kv_bytes, 48u);
  ASSERT_EQ(storage.attentions.size(), 2u);
  EXPECT_EQ(storage.attentions[1].appended_tokens_supplied, w.appended_tokens_supplied);
  EXPECT_EQ(rt.ssd_prefetches(), 1u);
  // The fake storage takes the same time either way: gemm, attention, gemm, attention, gemm.
  EXPECT_EQ(rt.latency_ps(), (10 + 50 + 10 + 50 + 10) * kNs);
}

// Two SSD attention ops that do not depend on each other (3 and 5) may be
// issued in either order: 5 is not prefetched after 3. Op 8 needs 5 and is the
// last: it is prefetched once 5 completes. Nothing is with ssd_prefetch_layers = 0.
void interleaving_ssd_attentions(unsigned layers) {
  const auto F = trace::PHASE_FUSED_PREFILL;
  FakeHost host;
  FakeStaging staging;
  FakeStorage storage;
  schema::PlacementParams p = placement(schema::PlacementParams::SSD_ISP, 1);
  p.set_ssd_prefetch_layers(layers);
  Runtime rt(header_with_context(8),
             {gemm(1, {}, F), append(2, {1}, F, 0, 8, 10), attention(3, {1, 2}, F, 0, 8, 8, 10),
              append(4, {1}, F, 1, 8, 10), attention(5, {1, 4}, F, 1, 8, 8, 10), gemm(6, {5}, F),
              append(7, {6}, F, 1, 10, 11), attention(8, {6, 7}, F, 1, 8, 8, 11)},
             p, host, staging, storage, 1 << 20);
  rt.start();
  sc_core::sc_start();
  rt.check_finished();
  ASSERT_EQ(storage.prefetches.size(), layers);
  if (layers == 1) {
    EXPECT_EQ(storage.prefetches[0].second.layer, 1u);
    EXPECT_EQ(storage.prefetches[0].second.appended_tokens_supplied, 1u);
    EXPECT_EQ(storage.prefetches[0].second.appended_tokens_in_flash, 2u);
  }
}
TEST(Runtime, SsdAttentionsThatMayInterleaveAreNotPrefetched) { interleaving_ssd_attentions(1); }

// Ops may be issued out of id order: Y (5, layer 1) at 0, X (3, layer 0, after
// a 10 ns GEMM) at 10 ns, queued behind Y. When Y completes (50 ns) every SSD
// attention before Z (8) has been issued, but X is still outstanding: a
// prefetch of Z now could overtake X's command on its way to the SSD, so Z is
// not prefetched (MemLLM-Base's unfused passes hit this).
TEST(Runtime, NoPrefetchWhileAnEarlierSsdAttentionIsOutstanding) {
  const auto F = trace::PHASE_FUSED_PREFILL;
  FakeHost host;
  FakeStaging staging;
  FakeStorage storage;
  schema::PlacementParams p = placement(schema::PlacementParams::SSD_ISP, 1);
  p.set_ssd_prefetch_layers(1);
  Runtime rt(header_with_context(8),
             {gemm(1, {}, F), append(2, {1}, F, 0, 8, 10), attention(3, {1, 2}, F, 0, 8, 8, 10),
              append(4, {}, F, 1, 8, 10), attention(5, {4}, F, 1, 8, 8, 10), gemm(6, {5}, F),
              append(7, {6}, F, 1, 10, 11), attention(8, {6, 7}, F, 1, 8, 8, 11)},
             p, host, staging, storage, 1 << 20);
  rt.start();
  sc_core::sc_start();
  rt.check_finished();
  ASSERT_EQ(storage.attentions.size(), 3u);
  EXPECT_EQ(storage.attentions[0].layer, 1u);  // Y first
  EXPECT_EQ(storage.attentions[1].layer, 0u);  // then X
  EXPECT_EQ(storage.prefetches_overtaking, 0u);
  EXPECT_TRUE(storage.prefetches.empty());
}
TEST(Runtime, NoPrefetchWithZeroPrefetchLayers) { interleaving_ssd_attentions(0); }

// AiF: a decode GEMM with a weight operand and the decode LM head go to the
// flash with their weight and vector bytes; a prefill GEMM stays on the GPU.
TEST(Runtime, DecodeWeightGemvsGoToTheFlashWithInFlashPlacement) {
  FakeHost host;
  FakeStaging staging;
  FakeStorage storage;
  schema::PlacementParams p = placement(schema::PlacementParams::HOST_GPU, 0);
  p.set_decode_linear(schema::PlacementParams::IN_FLASH);
  trace::Op prefill = gemm(1, {});
  prefill.mutable_gemm()->set_b_is_weight(true);
  trace::Op decode = gemm(2, {1}, trace::PHASE_DECODE);
  decode.mutable_gemm()->set_n(12);
  decode.mutable_gemm()->set_k(4);
  decode.mutable_gemm()->set_b_is_weight(true);
  trace::Op head = gemm(3, {2}, trace::PHASE_DECODE);
  head.clear_gemm();
  head.mutable_lm_head()->set_rows(1);
  trace::Header h = header();
  h.mutable_model()->set_vocab(100);
  Runtime rt(h, {prefill, decode, head}, p, host, staging, storage, 1 << 20);
  rt.start();
  sc_core::sc_start();
  rt.check_finished();
  ASSERT_EQ(storage.gemvs.size(), 2u);
  EXPECT_EQ(storage.gemvs[0].weight_elements, 48u);
  EXPECT_EQ(storage.gemvs[0].weight_bytes, 96u);
  EXPECT_EQ(storage.gemvs[0].input_bytes, 8u);
  EXPECT_EQ(storage.gemvs[0].output_bytes, 24u);
  EXPECT_EQ(storage.gemvs[1].weight_elements, 400u);  // hidden 4 x vocab 100
  EXPECT_EQ(storage.gemvs[1].output_bytes, 200u);
  EXPECT_EQ(host.order, (std::vector<uint64_t>{1}));
  EXPECT_EQ(rt.latency_ps(), (10 + 30 + 30) * kNs);
}

// The host reads precomputed KV in prefill through its load path (the RAG
// store), and everything in decode through its swap path (KV it offloaded).
TEST(Runtime, ReadsTakeTheLoadPathInPrefillAndTheSwapPathInDecode) {
  FakeHost host;
  struct KeepsNothing : FakeStaging {
    uint64_t lookup(uint32_t, trace::KvRegion, uint64_t) override { return 0; }
  } staging;
  FakeStorage storage;
  const auto R = trace::PHASE_RECOMPUTATION, D = trace::PHASE_DECODE;
  Runtime rt(header(),
             {attention(1, {}, R, 0, 8, 0, 0), append(2, {}, D, 1, 8, 10), attention(3, {1, 2}, D, 1, 8, 8, 10)},
             placement(schema::PlacementParams::HOST_GPU, 0), host, staging, storage, 1 << 20);
  rt.start();
  sc_core::sc_start();
  rt.check_finished();
  EXPECT_EQ(storage.path_bytes[HostReadPath::kLoad], 8 * 16u);             // layer 0's context
  EXPECT_EQ(storage.path_bytes[HostReadPath::kSwap], 8 * 16u + 2 * 16u);  // layer 1's context and appended KV
}

// An 8-token mask of the set bits of `bits` (bit 0: token 0).
trace::BitVector mask_of_eight(char bits) {
  trace::BitVector mask;
  mask.set_bit_length(8);
  mask.set_bits(std::string(1, bits));
  return mask;
}
trace::BitVector first_two_of_eight() { return mask_of_eight('\x03'); }

// CacheBlend keeps one copy of each token's KV: the HKVD tokens recomputed on
// the host overwrite their precomputed entries in place, so the host holds and
// reads the 8-token context only (not 8 + 2), and plans its staging for it.
TEST(Runtime, RecomputedHkvdTokensOverwriteTheirPrecomputedEntriesInPlace) {
  FakeHost host;
  FakeStaging staging;
  FakeStorage storage;
  const auto R = trace::PHASE_RECOMPUTATION;
  trace::Op recomputed = append(1, {}, R, 1, 0, 8);
  *recomputed.mutable_kv_append()->mutable_token_mask() = first_two_of_eight();
  recomputed.mutable_kv_append()->set_bytes(2 * 16);
  trace::Op attend = attention(2, {1}, R, 1, 8, 0, 0);
  *attend.mutable_attention()->mutable_hkvd_mask() = first_two_of_eight();
  Runtime rt(header_with_context(8), {recomputed, attend}, placement(schema::PlacementParams::HOST_GPU, 0), host,
             staging, storage, 1 << 20);
  rt.start();
  sc_core::sc_start();
  rt.check_finished();
  EXPECT_EQ(staging.planned, 8 * 16u);
  EXPECT_EQ((staging.overwritten[{1, trace::KV_REGION_PRECOMPUTED}]), 2 * 16u);
  EXPECT_EQ((staging.bytes[{1, trace::KV_REGION_APPENDED}]), 0u);
  EXPECT_EQ(storage.read_bytes, 8 * 16u);
  EXPECT_EQ(storage.written_bytes, 2 * 16u) << "the recomputed entries are still written through";
}

// Decode, prefetch 1, nothing staged: layer 1's appended KV but the row its own
// step appends is read ahead when layer 0's attention issues, FlexGen-style.
// Layer 0's, not yet appended when the run starts, is read when its attention
// runs, its own row with it.
TEST(Runtime, DecodePrefetchesTheAppendedKvOfTheNextLayerButItsOwnRow) {
  FakeHost host;
  struct KeepsNothing : FakeStaging {
    uint64_t lookup(uint32_t, trace::KvRegion, uint64_t) override { return 0; }
  } staging;
  FakeStorage storage;
  const auto P = trace::PHASE_FULL_PREFILL, D = trace::PHASE_DECODE;
  trace::Op attend0 = attention(4, {3}, D, 0, 0, 0, 5), attend1 = attention(7, {5, 6}, D, 1, 0, 0, 5);
  attend0.mutable_attention()->set_query_rows(1);
  attend1.mutable_attention()->set_query_rows(1);
  // The prefill's 4 entries per layer are appended first (kept in host memory:
  // no write-through).
  schema::PlacementParams p = placement(schema::PlacementParams::HOST_GPU, 1);
  p.set_kv_resident_in_host_memory(true);
  Runtime rt(header(),
             {append(1, {}, P, 0, 0, 4), append(2, {}, P, 1, 0, 4), append(3, {}, D, 0, 4, 5), attend0,
              gemm(5, {4}, D), append(6, {5}, D, 1, 4, 5), attend1},
             p, host, staging, storage, 1 << 20);
  rt.start();
  sc_core::sc_start();
  rt.check_finished();
  EXPECT_EQ(storage.path_bytes[HostReadPath::kSwap], (5 + 4) * 16u);
  // reads 0..100 (layer 0) and 100..200 (layer 1); attention 100..110, gemm
  // 110..120, layer 1's attention waits for its read: 200..210.
  EXPECT_EQ(rt.timing()[3].start_ps, 100 * kNs);
  EXPECT_EQ(rt.latency_ps(), 210 * kNs);
}

// A decode attention whose layer has not yet got the appended KV it reads
// (an earlier step's append not yet run) is not read ahead: the read waits
// for the op, after the append.
TEST(Runtime, AppendedKvIsNotReadAheadBeforeItIsAppended) {
  FakeHost host;
  struct KeepsNothing : FakeStaging {
    uint64_t lookup(uint32_t, trace::KvRegion, uint64_t) override { return 0; }
  } staging;
  FakeStorage storage;
  const auto D = trace::PHASE_DECODE;
  trace::Op attend0 = attention(2, {1}, D, 0, 0, 0, 1), attend1 = attention(5, {3, 4}, D, 1, 0, 0, 2);
  attend0.mutable_attention()->set_query_rows(1);
  attend1.mutable_attention()->set_query_rows(1);
  schema::PlacementParams p = placement(schema::PlacementParams::HOST_GPU, 1);
  p.set_kv_resident_in_host_memory(true);
  // Layer 1's two entries are appended by op 4 only, after layer 0's attention.
  Runtime rt(header(), {append(1, {}, D, 0, 0, 1), attend0, gemm(3, {2}, D), append(4, {3}, D, 1, 0, 2), attend1},
             p, host, staging, storage, 1 << 20);
  rt.start();
  sc_core::sc_start();
  rt.check_finished();
  // Layer 0's attention reads nothing ahead but its own row (never read):
  // attention 0..10, gemm 10..20; layer 1 reads both its entries when its
  // attention runs: 20..120, attention 120..130. Read ahead, the first entry
  // would have come at 0..100 and the run ended at 110.
  EXPECT_EQ(storage.path_bytes[HostReadPath::kSwap], 2 * 16u);
  EXPECT_EQ(rt.timing()[4].start_ps, 120 * kNs);
  EXPECT_EQ(rt.latency_ps(), 130 * kNs);
}

// A framework that grows the KV cache by concatenation: an append to a cache
// that holds tokens already is a GPU op (the copy); the first append is not.
TEST(Runtime, AppendsToAGrowingCacheRunOnTheGpuWhenTheFrameworkCopies) {
  struct CopyingHost : FakeHost {
    bool grows_kv_by_copy() const override { return true; }
  } host;
  FakeStaging staging;
  FakeStorage storage;
  const auto P = trace::PHASE_FULL_PREFILL, D = trace::PHASE_DECODE;
  Runtime rt(header(), {append(1, {}, P, 0, 0, 4), append(2, {1}, D, 0, 4, 5)},
             placement(schema::PlacementParams::HOST_GPU, 0), host, staging, storage, 1 << 20);
  rt.start();
  sc_core::sc_start();
  rt.check_finished();
  EXPECT_EQ(host.order, (std::vector<uint64_t>{2}));
  EXPECT_EQ(rt.timing()[1].end_ps, 10 * kNs);
  EXPECT_EQ(rt.timing()[0].end_ps, 0u);
}

trace::Op with_mask(trace::Op op, const trace::BitVector& mask) {
  *op.mutable_attention()->mutable_hkvd_mask() = mask;
  return op;
}

// Every decode step's attention of a layer carries the layer's mask: the
// runtime keeps one copy of each distinct mask, and the SSD is sent that copy.
TEST(Runtime, OpsWithEqualMasksShareOneStoredMask) {
  FakeHost host;
  FakeStaging staging;
  FakeStorage storage;
  const auto D = trace::PHASE_DECODE;
  Runtime rt(header_with_context(8),
             {append(1, {}, D, 1, 0, 2), with_mask(attention(2, {1}, D, 1, 8, 0, 0), first_two_of_eight()),
              with_mask(attention(3, {2}, D, 1, 8, 0, 0), first_two_of_eight()),
              with_mask(attention(4, {3}, D, 1, 8, 0, 0), mask_of_eight('\x05'))},
             placement(schema::PlacementParams::SSD_ISP, 1), host, staging, storage, 1 << 20);
  EXPECT_EQ(rt.distinct_hkvd_masks(), 2u);
  for (const trace::Op& op : rt.ops()) EXPECT_FALSE(op.attention().has_hkvd_mask()) << "op " << op.id();
  rt.start();
  sc_core::sc_start();
  rt.check_finished();
  ASSERT_EQ(storage.attentions.size(), 3u);
  EXPECT_EQ(storage.attentions[0].hkvd_mask, storage.attentions[1].hkvd_mask);
  EXPECT_EQ(storage.attentions[0].hkvd_mask, rt.hkvd_mask(1));
  EXPECT_EQ(storage.attentions[2].hkvd_mask, rt.hkvd_mask(3));
  ASSERT_NE(storage.attentions[2].hkvd_mask, nullptr);
  EXPECT_EQ(storage.attentions[0].hkvd_mask->bits(), first_two_of_eight().bits());
  EXPECT_EQ(storage.attentions[2].hkvd_mask->bits(), mask_of_eight('\x05').bits());
  for (const SsdAttention& w : storage.attentions) {
    EXPECT_EQ(w.hkvd_tokens, 2u);
    EXPECT_EQ(w.mask_bytes, 1u);
  }
}

// The host GPU's cost of a causal attention depends on its mask (the pairs
// among the tokens it selects): the host is given the op with its mask, so the
// op takes what the GPU model costs the op as written.
TEST(Runtime, HostAttentionIsTimedWithItsMask) {
  host::Gpu gpu("gpu", host::HostConfig::from_params(schema::resolved(schema::HostParams(), "host"), "host"));
  GpuPort port(gpu, header().model(), false);
  FakeStaging staging;
  FakeStorage storage;
  const auto R = trace::PHASE_RECOMPUTATION;
  trace::Op attend = with_mask(attention(2, {1}, R, 1, 8, 0, 0), first_two_of_eight());
  attend.mutable_attention()->set_causal(true);
  trace::Op unmasked = attend;
  unmasked.mutable_attention()->clear_hkvd_mask();
  const host::OpCost as_written = gpu.cost(attend, header().model());
  ASSERT_NE(as_written.flops, gpu.cost(unmasked, header().model()).flops) << "the mask must change the cost";
  Runtime rt(header_with_context(8), {append(1, {}, R, 1, 0, 2), attend},
             placement(schema::PlacementParams::HOST_GPU, 0), port, staging, storage, 1 << 20);
  rt.start();
  sc_core::sc_start();
  rt.check_finished();
  EXPECT_EQ(gpu.flops(host::OpClass::ATTENTION), as_written.flops);
  EXPECT_EQ(rt.timing()[1].end_ps - rt.timing()[1].start_ps, as_written.duration.value());
}

}  // namespace
}  // namespace ispsim::systems
