// HostMemory: parameter counts of real models, the DRAM budget, and both KV
// staging policies (FlexGen's placement, LRU) on small capacities.
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

HostConfig budget(uint64_t dram, uint64_t workspace, StagingPolicy policy = StagingPolicy::kLru) {
  HostConfig c;
  c.dram_capacity_bytes = dram;
  c.workspace_bytes = workspace;
  c.tied_lm_head = true;
  c.staging_policy = policy;
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

// Keys of other owners are other keys; retain() drops the refused ones and
// frees their bytes, not counting them as evictions.
TEST(HostMemory, RetainDropsTheRefusedOwnersKeys) {
  const trace::ModelShape s = shape_from_text(kSmolLm2_135M);
  HostMemory m("mem", budget(2u * 134515008 + 1000, 0), s);
  const StagingKey a{1, trace::KV_REGION_PRECOMPUTED, 7}, b{1, trace::KV_REGION_PRECOMPUTED, 8};
  m.insert(a, 300);
  m.insert(b, 500);
  EXPECT_EQ(m.resident(a), 300u);
  EXPECT_EQ(m.resident(StagingKey{1, trace::KV_REGION_PRECOMPUTED}), 0u);  // owner 0: another key
  m.retain([](const StagingKey& k) { return k.owner == 7; });
  EXPECT_EQ(m.resident(a), 300u);
  EXPECT_EQ(m.resident(b), 0u);
  EXPECT_EQ(m.resident_bytes(), 300u);
  EXPECT_EQ(m.insert(b, 700), 0u);  // the room b had is free again
  EXPECT_EQ(m.evictions(), 0u);

  HostMemory f("flexgen", budget(2u * 134515008 + 1000, 0, StagingPolicy::kFlexGenPlacement), s);
  f.append(a, 300);
  f.append(b, 500);
  EXPECT_EQ(f.resident_bytes(), 800u);
  f.retain([](const StagingKey& k) { return k.owner == 8; });
  EXPECT_EQ(f.resident(a), 0u);
  EXPECT_EQ(f.resident(b), 500u);
  EXPECT_EQ(f.resident_bytes(), 500u);
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

// FlexGen's placement over cyclic access (every decode step reads layers 0..L-1
// in order): a budget of b bytes for a KV of K bytes keeps floor(b x K_l / K)
// of each layer l resident, so every pass hits b/K of the bytes. LRU, on the
// same access order, evicts each layer just before it is needed and hits none.
TEST(HostMemory, FlexGenPlacementHitsTheBudgetShareOfCyclicAccess) {
  const trace::ModelShape s = shape_from_text(kSmolLm2_135M);
  const uint64_t weights = 2u * 134515008, b = 3000, layers = 10, per_layer = 1000, K = layers * per_layer;
  for (const StagingPolicy policy : {StagingPolicy::kFlexGenPlacement, StagingPolicy::kLru}) {
    const bool flexgen = policy == StagingPolicy::kFlexGenPlacement;
    SCOPED_TRACE(flexgen ? "FlexGen placement" : "LRU");
    HostMemory m(flexgen ? "flexgen" : "lru", budget(weights + b, 0, policy), s);
    ASSERT_EQ(m.staging_capacity(), b);
    m.plan(K);
    const auto key = [](uint64_t layer) { return StagingKey{uint32_t(layer), trace::KV_REGION_APPENDED}; };
    for (uint64_t l = 0; l < layers; ++l) {
      m.append(key(l), per_layer);
      m.lookup(key(l), per_layer);  // the prefill's attention of the layer, on its fresh KV
    }
    EXPECT_LE(m.resident_bytes(), b);
    const uint64_t hits_before = m.hit_bytes();
    const uint64_t steps = 7;
    for (uint64_t step = 0; step < steps; ++step)
      for (uint64_t l = 0; l < layers; ++l) {
        const uint64_t hit = m.lookup(key(l), per_layer);
        m.fetched(key(l), per_layer - hit, per_layer);  // the streamed rest arrives
      }
    const uint64_t hits = m.hit_bytes() - hits_before;
    if (flexgen) {
      EXPECT_EQ(hits, steps * layers * (per_layer * b / K));  // b/K of the bytes, 300 of 1000 per layer
      EXPECT_EQ(m.resident_bytes(), b);
      EXPECT_EQ(m.evictions(), 0u);
    } else {
      EXPECT_EQ(hits, 0u) << "LRU over a cyclic order larger than the capacity thrashes";
    }
  }
}

TEST(HostMemory, FlexGenPlacementKeepsEverythingWhenTheKvFits) {
  const trace::ModelShape s = shape_from_text(kSmolLm2_135M);
  HostMemory m("fits", budget(2u * 134515008 + 5000, 0, StagingPolicy::kFlexGenPlacement), s);
  m.plan(4000);
  const StagingKey a{1, trace::KV_REGION_PRECOMPUTED};
  EXPECT_EQ(m.lookup(a, 4000), 0u);  // not loaded yet
  m.fetched(a, 4000, 4000);
  EXPECT_EQ(m.resident(a), 4000u);
  EXPECT_EQ(m.lookup(a, 4000), 4000u);
}

// The KV an op has just appended or overwritten is in the GPU's working buffer:
// the next lookup of its key finds it, later ones only the resident share.
TEST(HostMemory, JustAppendedKvIsFoundOnceBeyondTheResidentShare) {
  const trace::ModelShape s = shape_from_text(kSmolLm2_135M);
  HostMemory m("fresh", budget(2u * 134515008 + 100, 0, StagingPolicy::kFlexGenPlacement), s);
  m.plan(1000);  // share 1/10
  const StagingKey k{0, trace::KV_REGION_APPENDED}, p{0, trace::KV_REGION_PRECOMPUTED};
  m.append(k, 500);
  EXPECT_EQ(m.resident(k), 50u);
  EXPECT_EQ(m.lookup(k, 500), 500u);  // all of it: just appended
  EXPECT_EQ(m.lookup(k, 500), 50u);   // then its share
  m.fetched(p, 450, 500);             // 500 bytes of context loaded, 50 kept
  m.overwrite(p, 40);                 // 40 bytes recomputed in place
  EXPECT_EQ(m.lookup(p, 500), 90u);
  EXPECT_EQ(m.resident_bytes(), 100u);
}

TEST(HostMemory, LruPrimitivesAreTheLruPolicys) {
  const trace::ModelShape s = shape_from_text(kSmolLm2_135M);
  HostMemory m("policy", budget(2u * 134515008 + 100, 0, StagingPolicy::kFlexGenPlacement), s);
  EXPECT_THROW(m.insert({0, trace::KV_REGION_APPENDED}, 10), std::logic_error);
}

}  // namespace
}  // namespace ispsim::host
