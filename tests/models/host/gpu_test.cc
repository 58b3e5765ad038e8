// Gpu: roofline of each op class (compute- and memory-bound), causal pair
// counts, replay of measured kernels, the in-order stream, energy and VCD.
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <systemc>
#include <vector>

#include "common/error.h"
#include "models/core/energy_ledger.h"
#include "models/core/vcd.h"
#include "models/host/gpu.h"
#include "models/host/host_config.h"
#include "tests/support/vcd_check.h"

namespace ispsim::host {
namespace {

using sc_core::sc_time;

// The closed forms below use a memory efficiency of 0.75, set here: the
// schema's default is fitted by tools/calibrate and moves when the fit is rerun
// (the Calibration test checks it).
HostConfig config_from_text(const std::string& text) {
  schema::HostParams params;
  if (!google::protobuf::TextFormat::ParseFromString(text, &params)) throw std::runtime_error("bad text: " + text);
  if (!params.has_memory_efficiency()) params.set_memory_efficiency(0.75);
  return HostConfig::from_params(schema::resolved(params, "test.host"), "test.host");
}

template <typename T>
T parse(const std::string& text) {
  T message;
  if (!google::protobuf::TextFormat::ParseFromString(text, &message)) throw std::runtime_error("bad text: " + text);
  return message;
}

// A Llama-like FP16 model: 32 heads x 128, 8 KV heads.
trace::ModelShape llama_shape() {
  return parse<trace::ModelShape>(
      "family: ARCHITECTURE_LLAMA layers: 32 hidden: 4096 heads: 32 kv_heads: 8 head_dim: 128 ffn_dim: 14336 "
      "vocab: 128256 weight_bits: 16 kv_bits: 16 activation_bits: 16");
}

sc_time ps(double value) { return sc_time::from_value(static_cast<uint64_t>(std::llround(value))); }
// Default roofline rates: 15.04 TFLOPS peak, 102.4 GB/s x 0.75 = 76.8 GB/s.
sc_time compute_ns(double flops, double efficiency) { return ps(flops / (15040.0 * efficiency) * 1e3); }
sc_time memory_ns(double bytes) { return ps(bytes / 76.8 * 1e3); }
const sc_time kLaunch(5, sc_core::SC_US);

// A bit vector with the given bits set.
trace::BitVector mask(uint64_t length, const std::vector<uint64_t>& set) {
  trace::BitVector v;
  std::string bytes((length + 7) / 8, '\0');
  for (uint64_t i : set) bytes[i / 8] = static_cast<char>(bytes[i / 8] | (1 << (i % 8)));
  v.set_bits(bytes);
  v.set_bit_length(length);
  return v;
}

TEST(HostConfig, SchemaDefaults) {
  const HostConfig c = config_from_text("");
  EXPECT_DOUBLE_EQ(c.peak_flops_per_ns, 15040.0);
  EXPECT_NEAR(8 * 1024 * 2 * 0.918 / 1000, 15.04, 0.001);  // 8 SMs x 1024 FMA x 2 FLOP x 0.918 GHz (host.proto)
  EXPECT_DOUBLE_EQ(c.dram_bytes_per_ns, 102.4);
  EXPECT_DOUBLE_EQ(c.gemm_efficiency, 0.6);
  EXPECT_DOUBLE_EQ(c.gemv_efficiency, 0.25);
  EXPECT_DOUBLE_EQ(c.attention_efficiency, 0.4);
  EXPECT_DOUBLE_EQ(c.nonlinear_efficiency, 0.25);
  EXPECT_EQ(c.launch_overhead, kLaunch);
  EXPECT_EQ(c.dram_capacity_bytes, 8ull << 30);
  EXPECT_EQ(c.workspace_bytes, 1ull << 30);
  EXPECT_TRUE(c.tied_lm_head);
  EXPECT_EQ(c.load_path.overhead, sc_time(20, sc_core::SC_US));
  EXPECT_EQ(c.swap_path.overhead, sc_time(10, sc_core::SC_US));
  EXPECT_DOUBLE_EQ(c.swap_path.bytes_per_ns, 102.4 / 2);  // a DRAM-to-DRAM copy reads and writes each byte
  EXPECT_EQ(c.staging_policy, StagingPolicy::kFlexGenPlacement);
  // memory_efficiency and storage_read_gbps are fitted (tools/calibrate): the
  // Calibration test checks that their defaults are the recorded fit.
}

TEST(HostConfig, BadInputNamesParameter) {
  for (const char* text : {"gemm_efficiency: 0", "memory_efficiency: 1.5", "gpu_peak_tflops: -1",
                           "dram_capacity_bytes: 10"}) {
    SCOPED_TRACE(text);
    try {
      config_from_text(text);
      ADD_FAILURE() << "accepted";
    } catch (const BadInput& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("test.host"), std::string::npos) << what;
      EXPECT_NE(what.find(std::string(text).substr(0, std::string(text).find(':'))), std::string::npos) << what;
    }
  }
}

TEST(Gpu, GemmComputeBound) {
  Gpu gpu("gpu", config_from_text(""));
  const auto op = parse<trace::Op>("id: 1 gemm { m: 4096 n: 4096 k: 4096 b_is_weight: true }");
  const OpCost c = gpu.cost(op, llama_shape());
  const double flops = 2.0 * 4096 * 4096 * 4096;
  EXPECT_EQ(c.op_class, OpClass::GEMM);
  EXPECT_EQ(c.flops, static_cast<uint64_t>(flops));
  EXPECT_EQ(c.bytes, 3ull * 4096 * 4096 * 2);
  EXPECT_EQ(c.compute_time, compute_ns(flops, 0.6));  // 15.23 ms
  EXPECT_EQ(c.memory_time, memory_ns(3.0 * 4096 * 4096 * 2));  // 1.31 ms
  EXPECT_EQ(c.duration, kLaunch + c.compute_time);
  EXPECT_NEAR(c.duration.to_seconds() * 1e3, 15.2354, 0.0001);
  EXPECT_FALSE(c.measured);
}

TEST(Gpu, DecodeGemvMemoryBound) {
  Gpu gpu("gpu", config_from_text(""));
  const auto op = parse<trace::Op>("id: 1 gemm { m: 1 n: 6144 k: 4096 b_is_weight: true }");
  const OpCost c = gpu.cost(op, llama_shape());
  const double bytes = 4096 * 2 + 4096.0 * 6144 * 2 + 6144 * 2;
  EXPECT_EQ(c.op_class, OpClass::GEMV);
  EXPECT_EQ(c.bytes, static_cast<uint64_t>(bytes));
  EXPECT_EQ(c.compute_time, compute_ns(2.0 * 6144 * 4096, 0.25));
  EXPECT_EQ(c.memory_time, memory_ns(bytes));
  EXPECT_EQ(c.duration, kLaunch + memory_ns(bytes));  // 5 us + 50.35 MB / 76.8 GB/s = 660.6 us
  EXPECT_NEAR(c.duration.to_seconds() * 1e6, 660.627, 0.001);
  EXPECT_GT(c.memory_time, c.compute_time);
}

// Continuous batching: the decode GEMV of two requests is one kernel over both
// rows, M = 2 (class GEMM), whose weights are read once:
// 5 us + (2 x 4096 x 2 + 4096 x 6144 x 2 + 2 x 6144 x 2) B / 76.8 GB/s, under
// twice the single GEMV's 660.6 us.
TEST(Gpu, BatchedDecodeGemvReadsTheWeightsOnce) {
  Gpu gpu("gpu", config_from_text(""));
  const auto a = parse<trace::Op>("id: 1 gemm { m: 1 n: 6144 k: 4096 b_is_weight: true }");
  const auto b = parse<trace::Op>("id: 7 gemm { m: 1 n: 6144 k: 4096 b_is_weight: true }");
  const OpCost c = gpu.cost({&a, &b}, llama_shape());
  const double bytes = 2 * 4096 * 2 + 4096.0 * 6144 * 2 + 2 * 6144 * 2;
  EXPECT_EQ(c.op_class, OpClass::GEMM);
  EXPECT_EQ(c.flops, 2u * 2 * 6144 * 4096);
  EXPECT_EQ(c.bytes, static_cast<uint64_t>(bytes));
  EXPECT_EQ(c.compute_time, compute_ns(2.0 * 2 * 6144 * 4096, 0.6));
  EXPECT_EQ(c.duration, kLaunch + memory_ns(bytes));
  EXPECT_NEAR(c.duration.to_seconds() * 1e6, 660.893, 0.001);
  EXPECT_LT(c.duration, 2 * gpu.cost(a, llama_shape()).duration);
  EXPECT_EQ(gpu.cost({&a}, llama_shape()).duration, gpu.cost(a, llama_shape()).duration);  // a batch of one
  // The LM head likewise: rows stacked, the vocabulary's weights once.
  const auto head = parse<trace::Op>("id: 2 lm_head { rows: 1 }");
  const OpCost h = gpu.cost({&head, &head, &head}, llama_shape());
  EXPECT_EQ(h.bytes, 4096u * 128256 * 2 + 3u * 4096 * 2 + 3u * 128256 * 2);
  EXPECT_EQ(h.op_class, OpClass::GEMM);
}

// Ops without weights add up: each request's attention reads its own KV, in
// one launch.
TEST(Gpu, BatchedAttentionAddsEachRequestsKv) {
  Gpu gpu("gpu", config_from_text(""));
  const auto shorter = parse<trace::Op>(
      "id: 1 layer: 0 attention { query_rows: 1 kv { tokens { begin: 0 end: 1000 } region: KV_REGION_APPENDED } "
      "causal: true }");
  const auto longer = parse<trace::Op>(
      "id: 2 layer: 0 attention { query_rows: 1 kv { tokens { begin: 0 end: 3000 } region: KV_REGION_APPENDED } "
      "causal: true }");
  const OpCost c = gpu.cost({&shorter, &longer}, llama_shape());
  const double bytes = 2 * (2.0 * 32 * 128 * 2) + 4000.0 * 8 * 128 * 2 * 2;
  EXPECT_EQ(c.op_class, OpClass::ATTENTION);
  EXPECT_EQ(c.bytes, static_cast<uint64_t>(bytes));
  EXPECT_EQ(c.flops, 4u * 4000 * 128 * 32);
  EXPECT_EQ(c.duration, kLaunch + memory_ns(bytes));
  const auto norm = parse<trace::Op>("id: 3 nonlinear { kind: NONLINEAR_RMSNORM elements: 4096 }");
  EXPECT_THROW(gpu.cost({&shorter, &norm}, llama_shape()), BadInput);  // not the same op
}

TEST(Gpu, WeightDtypeOverridesModelWidth) {
  // INT8 weights (b_dtype) halve the weight bytes of the GEMV.
  Gpu gpu("gpu", config_from_text(""));
  const auto op = parse<trace::Op>("id: 1 gemm { m: 1 n: 1024 k: 1024 b_dtype: DTYPE_INT8 b_is_weight: true }");
  EXPECT_EQ(gpu.cost(op, llama_shape()).bytes, 1024u * 2 + 1024u * 1024 + 1024u * 2);
}

TEST(Gpu, AttentionPairsCausalPrefill) {
  const auto a = parse<trace::Attention>(
      "query_rows: 1000 kv { tokens { begin: 0 end: 1000 } region: KV_REGION_APPENDED } causal: true");
  EXPECT_EQ(attention_pairs(a), 1000u * 1001 / 2);
  EXPECT_EQ(attention_kv_tokens(a), 1000u);
  auto full = a;
  full.set_causal(false);
  EXPECT_EQ(attention_pairs(full), 1000u * 1000);
}

TEST(Gpu, AttentionPairsDecodeSeesEverything) {
  // Decode step s = 3 of a blended request: C = 64 precomputed, P = 80.
  auto a = parse<trace::Attention>(
      "query_rows: 1 kv { tokens { begin: 0 end: 64 } region: KV_REGION_PRECOMPUTED } "
      "kv { tokens { begin: 64 end: 84 } region: KV_REGION_APPENDED } causal: true");
  *a.mutable_hkvd_mask() = mask(64, {3, 10});
  EXPECT_EQ(attention_pairs(a), 84u);
}

TEST(Gpu, AttentionPairsJaggedRecomputationAndQuery) {
  const trace::BitVector m = mask(64, {3, 10, 50});
  // Recomputation: the three HKVD rows at positions 3, 10, 50 over [0, 64).
  auto recompute = parse<trace::Attention>(
      "query_rows: 3 kv { tokens { begin: 0 end: 64 } region: KV_REGION_PRECOMPUTED } causal: true");
  *recompute.mutable_hkvd_mask() = m;
  EXPECT_EQ(attention_pairs(recompute), 4u + 11 + 51);
  // Query prefill: rows at 64..71 over precomputed [0, 64) + appended [64, 72).
  auto query = parse<trace::Attention>(
      "query_rows: 8 kv { tokens { begin: 0 end: 64 } region: KV_REGION_PRECOMPUTED } "
      "kv { tokens { begin: 64 end: 72 } region: KV_REGION_APPENDED } causal: true");
  *query.mutable_hkvd_mask() = m;
  EXPECT_EQ(attention_pairs(query), 65u + 66 + 67 + 68 + 69 + 70 + 71 + 72);
  // Fused: both sets of rows in one op.
  auto fused = query;
  fused.set_query_rows(11);
  EXPECT_EQ(attention_pairs(fused), attention_pairs(recompute) + attention_pairs(query));
}

TEST(Gpu, AttentionPairsMaskOverSeveralSpansMatchesRowByRow) {
  // Two precomputed spans (the second's mask bits start mid-byte), set bits in
  // runs that cross bytes and spans, an appended span; each row's count summed
  // row by row from the mask bit by bit.
  const std::vector<std::pair<uint64_t, uint64_t>> spans{{0, 20}, {30, 47}, {47, 50}};
  const std::vector<uint64_t> set{6, 7, 8, 9, 19, 20, 21, 29, 36};
  for (uint64_t rows = 1; rows <= 12; ++rows) {
    auto a = parse<trace::Attention>(
        "query_rows: " + std::to_string(rows) +
        " kv { tokens { begin: 0 end: 20 } region: KV_REGION_PRECOMPUTED } "
        "kv { tokens { begin: 30 end: 47 } region: KV_REGION_PRECOMPUTED } "
        "kv { tokens { begin: 47 end: 50 } region: KV_REGION_APPENDED } causal: true");
    *a.mutable_hkvd_mask() = mask(37, set);
    std::vector<uint64_t> candidates;  // set bit i -> the i-th precomputed position; then appended
    for (uint64_t i : set) candidates.push_back(i < 20 ? i : 30 + (i - 20));
    for (uint64_t p = 47; p < 50; ++p) candidates.push_back(p);
    uint64_t pairs = 0;
    for (size_t r = candidates.size() - std::min<size_t>(rows, candidates.size()); r < candidates.size(); ++r)
      for (const auto& [b, e] : spans)
        for (uint64_t q = b; q < e; ++q) pairs += q <= candidates[r] ? 1 : 0;
    EXPECT_EQ(attention_pairs(a), pairs) << rows << " rows";
  }
}

TEST(Gpu, AttentionPairsOverLongMasksMatchRowByRow) {
  // Masks of hundreds of bits (whole 64-bit words counted at once, ragged ends
  // bit by bit), precomputed spans whose bits start anywhere in a word, rows
  // from one (decode) to more than the candidates.
  uint64_t seed = 7;
  auto next = [&] { return (seed = seed * 6364136223846793005ull + 1442695040888963407ull) >> 33; };
  for (int trial = 0; trial < 40; ++trial) {
    const uint64_t first = 1 + next() % 200, second = next() % 150, appended = next() % 5;
    std::vector<uint64_t> set;
    for (uint64_t i = 0; i < first + second; ++i)
      if (next() % 4 == 0) set.push_back(i);
    const std::vector<std::pair<uint64_t, uint64_t>> spans{
        {0, first}, {first + 9, first + 9 + second}, {first + 9 + second, first + 9 + second + appended}};
    std::vector<uint64_t> candidates;
    for (uint64_t i : set) candidates.push_back(i < first ? i : first + 9 + (i - first));
    for (uint64_t p = spans[2].first; p < spans[2].second; ++p) candidates.push_back(p);
    for (uint64_t rows : {uint64_t(1), uint64_t(3), uint64_t(candidates.size())}) {
      if (rows == 0) continue;
      auto a = parse<trace::Attention>(
          "query_rows: " + std::to_string(rows) + " kv { tokens { begin: 0 end: " + std::to_string(first) +
          " } region: KV_REGION_PRECOMPUTED } kv { tokens { begin: " + std::to_string(spans[1].first) +
          " end: " + std::to_string(spans[1].second) + " } region: KV_REGION_PRECOMPUTED } kv { tokens { begin: " +
          std::to_string(spans[2].first) + " end: " + std::to_string(spans[2].second) +
          " } region: KV_REGION_APPENDED } causal: true");
      *a.mutable_hkvd_mask() = mask(first + second, set);
      uint64_t pairs = 0;
      if (rows <= candidates.size()) {
        for (size_t r = candidates.size() - rows; r < candidates.size(); ++r)
          for (const auto& [b, e] : spans)
            for (uint64_t q = b; q < e; ++q) pairs += q <= candidates[r] ? 1 : 0;
        EXPECT_EQ(attention_pairs(a), pairs) << "trial " << trial << ", " << rows << " rows";
      }
    }
  }
}

TEST(Gpu, AttentionPairsLargeAndSplitSpans) {
  // Closed form, not a loop over rows: a million-row causal prefill is instant.
  const auto big = parse<trace::Attention>(
      "query_rows: 1048576 kv { tokens { begin: 0 end: 1048576 } region: KV_REGION_APPENDED } causal: true");
  EXPECT_EQ(attention_pairs(big), 1048576ull * 1048577 / 2);
  // Rows split across two appended spans with a gap: rows 100..109 and 200..209
  // (only the last 15 rows: 105..109 and 200..209); positions in the gap hold no KV.
  const auto split = parse<trace::Attention>(
      "query_rows: 15 kv { tokens { begin: 0 end: 110 } region: KV_REGION_APPENDED } "
      "kv { tokens { begin: 200 end: 210 } region: KV_REGION_APPENDED } causal: true");
  uint64_t expected = 0;
  for (uint64_t p = 105; p < 110; ++p) expected += p + 1;
  for (uint64_t p = 200; p < 210; ++p) expected += 110 + (p - 200 + 1);
  EXPECT_EQ(attention_pairs(split), expected);
  // More rows than candidates: the last rows below the end of the KV.
  const auto odd = parse<trace::Attention>(
      "query_rows: 4 kv { tokens { begin: 0 end: 10 } region: KV_REGION_PRECOMPUTED } causal: true");
  EXPECT_EQ(attention_pairs(odd), 7u + 8 + 9 + 10);
}

TEST(Gpu, AbsurdOpsAreBadInput) {
  Gpu gpu("gpu", config_from_text(""));
  EXPECT_THROW(gpu.cost(parse<trace::Op>("id: 1 gemm { m: 1125899906842624 n: 1125899906842624 k: 2 }"),
                        llama_shape()),
               BadInput);
  EXPECT_THROW(gpu.cost(parse<trace::Op>("id: 2 nonlinear { kind: NONLINEAR_RELU elements: 1 } "
                                         "measured_duration_ns: 18446744073709551615"),
                        llama_shape()),
               BadInput);
}

TEST(Gpu, AttentionCostComputeAndMemoryBound) {
  Gpu gpu("gpu", config_from_text(""));
  const trace::ModelShape shape = llama_shape();
  // Prefill of 4096 rows: 4 x 4096*4097/2 x 128 x 32 FLOPs, compute-bound.
  const auto prefill = parse<trace::Op>(
      "id: 1 layer: 0 attention { query_rows: 4096 kv { tokens { begin: 0 end: 4096 } region: KV_REGION_APPENDED } "
      "causal: true }");
  const OpCost p = gpu.cost(prefill, shape);
  const double flops = 4.0 * (4096.0 * 4097 / 2) * 128 * 32;
  const double bytes = 2.0 * 4096 * 32 * 128 * 2 + 4096.0 * 8 * 128 * 2 * 2;
  EXPECT_EQ(p.op_class, OpClass::ATTENTION);
  EXPECT_EQ(p.flops, static_cast<uint64_t>(flops));
  EXPECT_EQ(p.bytes, static_cast<uint64_t>(bytes));
  EXPECT_EQ(p.duration, kLaunch + compute_ns(flops, 0.4));
  // Decode over 4096 tokens: reads 16 MiB of KV, memory-bound.
  const auto decode = parse<trace::Op>(
      "id: 2 layer: 0 attention { query_rows: 1 kv { tokens { begin: 0 end: 4096 } region: KV_REGION_APPENDED } "
      "causal: true }");
  const OpCost d = gpu.cost(decode, shape);
  const double decode_bytes = 2.0 * 32 * 128 * 2 + 4096.0 * 8 * 128 * 2 * 2;
  EXPECT_EQ(d.bytes, static_cast<uint64_t>(decode_bytes));
  EXPECT_EQ(d.duration, kLaunch + memory_ns(decode_bytes));
}

TEST(Gpu, NonlinearEmbeddingLmHeadHkvd) {
  Gpu gpu("gpu", config_from_text(""));
  const trace::ModelShape shape = llama_shape();
  const OpCost norm = gpu.cost(parse<trace::Op>("id: 1 nonlinear { kind: NONLINEAR_RMSNORM elements: 1000000 }"), shape);
  EXPECT_EQ(norm.op_class, OpClass::NONLINEAR);
  EXPECT_EQ(norm.flops, 4000000u);
  EXPECT_EQ(norm.bytes, 4000000u);  // read + write, 2 B each
  EXPECT_EQ(norm.duration, kLaunch + memory_ns(4e6));
  const OpCost swiglu = gpu.cost(parse<trace::Op>("id: 2 nonlinear { kind: NONLINEAR_SWIGLU elements: 1000 }"), shape);
  EXPECT_EQ(swiglu.bytes, 6000u);  // gate + up + out
  EXPECT_EQ(swiglu.flops, 5000u);

  const OpCost emb = gpu.cost(parse<trace::Op>("id: 3 embedding { tokens: 100 }"), shape);
  EXPECT_EQ(emb.flops, 0u);
  EXPECT_EQ(emb.bytes, 100u * 4096 * 4);
  EXPECT_EQ(emb.duration, kLaunch + memory_ns(100.0 * 4096 * 4));

  const OpCost head = gpu.cost(parse<trace::Op>("id: 4 lm_head { rows: 1 }"), shape);
  EXPECT_EQ(head.op_class, OpClass::GEMV);
  EXPECT_EQ(head.flops, 2ull * 4096 * 128256);
  EXPECT_EQ(head.bytes, 4096ull * 128256 * 2 + 4096 * 2 + 128256 * 2);
  EXPECT_EQ(head.duration, kLaunch + memory_ns(4096.0 * 128256 * 2 + 4096 * 2 + 128256 * 2));

  const OpCost sel = gpu.cost(
      parse<trace::Op>("id: 5 layer: 1 hkvd_select { context_tokens: 2000 ratio: 0.15 selected_tokens: 300 }"), shape);
  EXPECT_EQ(sel.flops, 3ull * 2000 * 8 * 128 * 2);
  EXPECT_EQ(sel.bytes, 2ull * 2000 * 8 * 128 * 2 * 2);
}

TEST(Gpu, MeasuredDurationIsReplayed) {
  Gpu gpu("gpu", config_from_text(""));
  const auto op = parse<trace::Op>("id: 1 gemm { m: 4096 n: 4096 k: 4096 } measured_duration_ns: 12345");
  const OpCost c = gpu.cost(op, llama_shape());
  EXPECT_TRUE(c.measured);
  EXPECT_EQ(c.duration, sc_time(12345, sc_core::SC_NS));
  EXPECT_EQ(c.flops, 2ull * 4096 * 4096 * 4096);  // still counted for statistics and energy
}

TEST(Gpu, KvOpsAreNotGpuOps) {
  Gpu gpu("gpu", config_from_text(""));
  EXPECT_THROW(gpu.cost(parse<trace::Op>("id: 7 layer: 1 kv_load { tokens { begin: 0 end: 4 } bytes: 64 }"),
                        llama_shape()),
               BadInput);
  EXPECT_THROW(gpu.cost(parse<trace::Op>("id: 8"), llama_shape()), BadInput);
  // A preallocated cache takes the append without a GPU op.
  EXPECT_THROW(gpu.cost(parse<trace::Op>("id: 9 layer: 1 kv_append { tokens { begin: 1000 end: 1001 } bytes: 4096 }"),
                        llama_shape()),
               BadInput);
}

// A framework that grows the cache by concatenation copies the layer's cache
// into a new tensor at every append: 1000 cached tokens read, 1001 written, of
// 8 KV heads x 128 x K and V x 2 B = 4 KiB per token, memory-bound.
TEST(Gpu, AConcatenatingCacheCopiesTheLayerAtEveryAppend) {
  Gpu gpu("gpu", config_from_text("kv_cache_growth: CONCATENATE"));
  const OpCost c = gpu.cost(
      parse<trace::Op>("id: 9 layer: 1 kv_append { tokens { begin: 1000 end: 1001 } bytes: 4096 }"), llama_shape());
  EXPECT_EQ(c.op_class, OpClass::NONLINEAR);
  EXPECT_EQ(c.flops, 0u);
  EXPECT_EQ(c.bytes, (1000u + 1001u) * 4096);
  EXPECT_EQ(c.duration, kLaunch + memory_ns((1000.0 + 1001.0) * 4096));
}

TEST(Gpu, StreamRunsOpsInOrderWithStatsAndEnergy) {
  core::EnergyLedger ledger;
  const HostConfig config = config_from_text("");
  Gpu gpu("gpu", config, &ledger);
  const trace::ModelShape shape = llama_shape();
  const std::vector<trace::Op> ops = {
      parse<trace::Op>("id: 1 gemm { m: 512 n: 4096 k: 4096 b_is_weight: true }"),
      parse<trace::Op>("id: 2 nonlinear { kind: NONLINEAR_ROPE elements: 2097152 }"),
      parse<trace::Op>("id: 3 gemm { m: 1 n: 4096 k: 4096 b_is_weight: true }"),
  };
  std::vector<sc_time> done;
  for (const auto& op : ops) gpu.execute(op, shape, [&] { done.push_back(sc_core::sc_time_stamp()); });
  sc_core::sc_start();
  ASSERT_EQ(done.size(), 3u);
  sc_time t = sc_core::SC_ZERO_TIME;
  double pj = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    const OpCost c = gpu.cost(ops[i], shape);
    t += c.duration;
    EXPECT_EQ(done[i], t) << "op " << i;
    pj += c.flops * 1.1 + c.bytes * 8 * 4.0;
  }
  EXPECT_EQ(gpu.ops(), 3u);
  EXPECT_EQ(gpu.ops(OpClass::GEMM), 1u);
  EXPECT_EQ(gpu.ops(OpClass::NONLINEAR), 1u);
  EXPECT_EQ(gpu.ops(OpClass::GEMV), 1u);
  EXPECT_EQ(gpu.busy_time(), t);
  EXPECT_EQ(gpu.busy_time(OpClass::GEMM) + gpu.busy_time(OpClass::NONLINEAR) + gpu.busy_time(OpClass::GEMV), t);
  EXPECT_EQ(gpu.flops(OpClass::GEMM), 2ull * 512 * 4096 * 4096);
  EXPECT_NEAR(gpu.dynamic_energy_pj(), pj, pj * 1e-12);

  const auto summary = ledger.summarize(t.value(), {});
  EXPECT_GT(summary.dynamic_j_by_component.at("gpu"), 0);
  EXPECT_GT(summary.dynamic_j_by_component.at("gpu.dram"), 0);
  EXPECT_NEAR(summary.dynamic_j_by_component.at("gpu") + summary.dynamic_j_by_component.at("gpu.dram"), pj * 1e-12,
              pj * 1e-24 * 1e3);
  EXPECT_NEAR(summary.static_j_by_component.at("gpu"), 5.0 * t.to_seconds(), 1e-12);
  for (const auto& [name, joules] : summary.dynamic_j_by_component) EXPECT_GE(joules, 0) << name;

  std::ostringstream csv;
  stats::Registry::global().write_csv(csv);
  EXPECT_NE(csv.str().find("gpu.gemm.ops,1,count,"), std::string::npos) << csv.str();
  EXPECT_NE(csv.str().find("gpu.stream.busy_time,"), std::string::npos);
}

TEST(Gpu, OpSubmittedLaterStartsWhenStreamFrees) {
  const HostConfig config = config_from_text("");
  Gpu gpu("gpu", config);
  const trace::ModelShape shape = llama_shape();
  const auto op = parse<trace::Op>("id: 1 nonlinear { kind: NONLINEAR_RELU elements: 1000 }");
  const sc_time d = gpu.duration(op, shape);
  std::vector<sc_time> done;
  gpu.execute(op, shape, [&] {
    done.push_back(sc_core::sc_time_stamp());
    gpu.execute(op, shape, [&] { done.push_back(sc_core::sc_time_stamp()); });
  });
  gpu.execute(op, shape, [&] { done.push_back(sc_core::sc_time_stamp()); });
  sc_core::sc_start();
  EXPECT_EQ(done, (std::vector<sc_time>{d, 2 * d, 3 * d}));
}

TEST(Gpu, VcdOfTheStream) {
  const std::string path = ::testing::TempDir() + "gpu_test.vcd";
  Gpu gpu("gpu", config_from_text(""));
  vcd::Writer writer(vcd::Options{path, {}, 0, UINT64_MAX, {}});
  gpu.trace(writer);
  const auto op = parse<trace::Op>("id: 1 nonlinear { kind: NONLINEAR_RELU elements: 1000 }");
  gpu.execute(op, llama_shape(), nullptr);
  gpu.execute(op, llama_shape(), nullptr);
  sc_core::sc_start();
  writer.close();
  testing::expect_vcd_valid(path);
  std::ifstream in(path);
  const testing::VcdContent content = testing::parse_vcd(in);
  EXPECT_EQ(content.widths.count("gpu.stream.outstanding"), 1u);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace ispsim::host
