// HostMemory: parameter counts of real models, the DRAM budget, and LRU KV
// staging on small capacities.
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>
#include <string>

#include "models/host/host_memory.h"

namespace ispsim::host {
namespace {

trace::ModelShape shape_from_text(const std::string& text) {
  trace::ModelShape s;
  if (!google::protobuf::TextFormat::ParseFromString(text, &s)) throw std::runtime_error("bad text: " + text);
  return s;
}

const char* kSmolLm2_135M =
    "family: ARCHITECTURE_LLAMA layers: 30 hidden: 576 heads: 9 kv_heads: 3 head_dim: 64 ffn_dim: 1536 "
    "vocab: 49152 weight_bits: 16 kv_bits: 16 activation_bits: 16";
const char* kOpt125M =
    "family: ARCHITECTURE_OPT layers: 12 hidden: 768 heads: 12 kv_heads: 12 head_dim: 64 ffn_dim: 3072 "
    "vocab: 50272 weight_bits: 16 kv_bits: 16 activation_bits: 16";
const char* kQwen2_05B =
    "family: ARCHITECTURE_QWEN2 layers: 24 hidden: 896 heads: 14 kv_heads: 2 head_dim: 64 ffn_dim: 4864 "
    "vocab: 151936 weight_bits: 16 kv_bits: 16 activation_bits: 16";

TEST(HostMemory, ParameterCountsMatchPublishedModels) {
  // The parameter counts Hugging Face reports for these checkpoints.
  EXPECT_EQ(model_parameters(shape_from_text(kSmolLm2_135M), true), 134515008u);
  EXPECT_EQ(model_parameters(shape_from_text(kOpt125M), false), 125239296u);  // OPT ties regardless
  EXPECT_EQ(model_parameters(shape_from_text(kQwen2_05B), true), 494032768u);
  // An untied head adds vocab x hidden.
  EXPECT_EQ(model_parameters(shape_from_text(kSmolLm2_135M), false), 134515008u + 49152u * 576);
  EXPECT_EQ(model_weight_bytes(shape_from_text(kSmolLm2_135M), true), 2u * 134515008);
}

HostConfig budget(uint64_t dram, uint64_t workspace) {
  HostConfig c;
  c.dram_capacity_bytes = dram;
  c.workspace_bytes = workspace;
  c.tied_lm_head = true;
  return c;
}

TEST(HostMemory, StagingCapacityIsWhatWeightsAndWorkspaceLeave) {
  const trace::ModelShape s = shape_from_text(kSmolLm2_135M);
  const uint64_t weights = 2u * 134515008;
  HostMemory m("mem", budget(8ull << 30, 1ull << 30), s);
  EXPECT_EQ(m.weight_bytes(), weights);
  EXPECT_TRUE(m.weights_fit());
  EXPECT_EQ(m.staging_capacity(), (8ull << 30) - (1ull << 30) - weights);

  HostMemory tight("tight", budget(weights + 100, 100), s);
  EXPECT_TRUE(tight.weights_fit());
  EXPECT_EQ(tight.staging_capacity(), 0u);
  HostMemory over("over", budget(weights + 99, 100), s);
  EXPECT_FALSE(over.weights_fit());
  EXPECT_EQ(over.staging_capacity(), 0u);
  // Nothing can be staged: every lookup misses.
  EXPECT_EQ(over.insert({1, trace::KV_REGION_PRECOMPUTED}, 50), 0u);
  EXPECT_EQ(over.resident({1, trace::KV_REGION_PRECOMPUTED}), 0u);
  EXPECT_EQ(over.lookup({1, trace::KV_REGION_PRECOMPUTED}, 50), 0u);
  EXPECT_EQ(over.miss_bytes(), 50u);
}

TEST(HostMemory, LruHitsMissesAndEvictions) {
  const trace::ModelShape s = shape_from_text(kSmolLm2_135M);
  HostMemory m("mem", budget(2u * 134515008 + 1000, 0), s);
  ASSERT_EQ(m.staging_capacity(), 1000u);
  const StagingKey a{1, trace::KV_REGION_PRECOMPUTED}, b{2, trace::KV_REGION_PRECOMPUTED},
      c{1, trace::KV_REGION_APPENDED}, d{3, trace::KV_REGION_PRECOMPUTED};

  EXPECT_EQ(m.insert(a, 400), 0u);
  EXPECT_EQ(m.insert(b, 400), 0u);
  EXPECT_EQ(m.lookup(a, 400), 400u);  // a becomes most recently used
  EXPECT_EQ(m.insert(c, 400), 200u);  // b, least recently used, shrinks to 200
  EXPECT_EQ(m.resident(a), 400u);
  EXPECT_EQ(m.resident(b), 200u);
  EXPECT_EQ(m.resident(c), 400u);
  EXPECT_EQ(m.resident_bytes(), 1000u);
  EXPECT_EQ(m.evictions(), 1u);

  EXPECT_EQ(m.lookup(b, 400), 200u);  // partially staged: 200 hit, 200 miss
  EXPECT_EQ(m.hit_bytes(), 600u);
  EXPECT_EQ(m.miss_bytes(), 200u);

  // Order now (most recent first): b, c, a. Growing c to 700 needs 300 more:
  // a (400) is the victim and shrinks to 100.
  EXPECT_EQ(m.insert(c, 700), 300u);
  EXPECT_EQ(m.resident(a), 100u);
  EXPECT_EQ(m.resident(b), 200u);
  EXPECT_EQ(m.resident(c), 700u);

  m.touch(a);  // order: a, c, b
  // A key larger than the capacity keeps `capacity` bytes and evicts everything.
  EXPECT_EQ(m.insert(d, 5000), 1000u);
  EXPECT_EQ(m.resident(d), 1000u);
  EXPECT_EQ(m.resident(a) + m.resident(b) + m.resident(c), 0u);
  EXPECT_EQ(m.evicted_bytes(), 200u + 300u + 1000u);
  EXPECT_EQ(m.lookup(d, 5000), 1000u);
  EXPECT_EQ(m.miss_bytes(), 200u + 4000u);
  EXPECT_EQ(m.lookup(a, 10), 0u);  // evicted: a miss

  std::ostringstream csv;
  stats::Registry::global().write_csv(csv);
  const std::string text = csv.str();
  EXPECT_NE(text.find("mem.hit_bytes,1600,bytes,"), std::string::npos) << text;
  EXPECT_NE(text.find("mem.miss_bytes,4210,bytes,"), std::string::npos);
  EXPECT_NE(text.find("mem.evicted_bytes,1500,bytes,"), std::string::npos);
  EXPECT_EQ(m.evictions(), 5u);  // b shrunk, a shrunk, then a, c, b dropped for d
  EXPECT_NE(text.find("mem.evictions,5,count,"), std::string::npos);
  EXPECT_NE(text.find("mem.staging_capacity,1000,bytes,"), std::string::npos);
  EXPECT_NE(text.find("mem.resident_bytes,1000,bytes,"), std::string::npos);
}

TEST(HostMemory, ReinsertingAKeyReplacesItsSize) {
  const trace::ModelShape s = shape_from_text(kSmolLm2_135M);
  HostMemory m("mem", budget(2u * 134515008 + 1000, 0), s);
  const StagingKey a{1, trace::KV_REGION_APPENDED}, b{2, trace::KV_REGION_APPENDED};
  m.insert(a, 600);
  m.insert(b, 300);
  EXPECT_EQ(m.insert(a, 100), 0u);  // shrinking never evicts
  EXPECT_EQ(m.resident(a), 100u);
  EXPECT_EQ(m.resident_bytes(), 400u);
  EXPECT_EQ(m.insert(a, 0), 0u);  // zero bytes: the key is dropped
  EXPECT_EQ(m.resident(a), 0u);
  EXPECT_EQ(m.resident_bytes(), 300u);
  m.touch({9, trace::KV_REGION_APPENDED});  // absent: no effect
  EXPECT_EQ(m.resident_bytes(), 300u);
}

}  // namespace
}  // namespace ispsim::host
