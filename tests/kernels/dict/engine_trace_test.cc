// The engine's decode trace with dictionary ops: it round-trips through
// TraceReader (which validates every op), and its dict_encode / dict_attention
// ops carry exactly the window bookkeeping of the run (brute-force count).
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/dict/engine_trace.h"
#include "kernels/int/random_model.h"
#include "kernels/rag/trace/engine_trace.h"
#include "traces/trace_io.h"

namespace ispsim::dict {
namespace {

model::Config tiny_config() {
  model::Config c;
  c.vocab_size = 97;
  c.hidden_size = 64;
  c.ffn_size = 96;
  c.num_layers = 2;
  c.num_heads = 4;
  c.num_kv_heads = 2;
  c.head_dim = 16;
  c.max_positions = 64;
  c.rope_theta = 10000.0f;
  c.tie_word_embeddings = true;
  return c;
}

TEST(DictTrace, EngineDecodeTraceCarriesTheRunsBookkeeping) {
  const model::Model m = integer::make_random_model(tiny_config(), 31);
  std::mt19937 rng(32);
  std::normal_distribution<float> n(0.0f, 1.0f);
  std::vector<Dictionary> dicts(4);
  for (Dictionary& d : dicts) {
    d.atoms = 48;
    d.dim = 16;
    d.data.resize(48 * 16);
    for (float& v : d.data) v = n(rng);
    normalize_atoms(d);
  }
  CacheSettings s;
  s.window_tokens = 8;
  s.unit_tokens = 4;
  s.k_high = 6;
  s.k_low = 2;
  s.hierarchical = true;
  s.refine_fraction = 0.25;
  const std::vector<int> prompt = {5, 17, 3, 88, 40, 2, 9, 61, 33, 12};  // 2 documents (4 + 3) and a query of 3
  const int steps = 12;
  const DictionaryRun run = run_dictionary_decode(m, dicts, s, 48, prompt, steps);
  ASSERT_EQ(static_cast<int>(run.answer.size()), steps);

  const std::string path = ::testing::TempDir() + "dict_engine.trace";
  write_dictionary_trace(path, rag::model_shape(m.config, "tiny"), {4, 3}, 3, run,
                         rag::engine_producer("test", {}));
  trace::TraceReader reader(path);
  EXPECT_EQ(reader.header().request().kv_format(), trace::KV_DICTIONARY);
  EXPECT_EQ(reader.header().request().dictionary().window_tokens(), 8u);
  EXPECT_EQ(reader.header().request().dictionary().k_low(), 2u);

  // Brute force: tokens in the cache after each append, compressed in units of U past W.
  auto compressed_after = [&](int tokens) {
    int c = 0;
    while (tokens - c > s.window_tokens) c += s.unit_tokens;
    return c;
  };
  int attentions = 0;
  uint64_t encoded = 0;
  trace::Op op;
  while (reader.next(op)) {
    if (op.has_dict_encode()) {
      EXPECT_EQ(op.dict_encode().heads(), 2u);
      EXPECT_EQ(op.dict_encode().pursuit_iterations(), 6u);
      EXPECT_EQ(op.dict_encode().method(), trace::PURSUIT_PROJECTION);
      encoded += op.dict_encode().tokens();
    }
    if (op.has_dict_attention()) {
      const int tokens = static_cast<int>(prompt.size()) + static_cast<int>(op.decode_step()) + 1;
      const trace::DictAttention& a = op.dict_attention();
      EXPECT_EQ(a.compressed_tokens(), static_cast<uint64_t>(compressed_after(tokens))) << "step " << op.decode_step();
      EXPECT_EQ(a.compressed_tokens() + a.window_tokens(), static_cast<uint64_t>(tokens));
      EXPECT_EQ(a.k_high(), 6u);
      EXPECT_EQ(a.k_low(), 2u);
      if (a.compressed_tokens() > 0) {  // each query head refines ceil(25 %); two share a KV head
        EXPECT_GE(a.refine_fraction(), 0.25);
        EXPECT_LE(a.refine_fraction(), 2 * (0.25 + 1.0 / a.compressed_tokens()));
      }
      ++attentions;
    }
    EXPECT_FALSE(op.has_attention() && op.phase() == trace::PHASE_DECODE);
  }
  EXPECT_EQ(attentions, steps * 2);
  // Every layer encodes everything that left its window by the end: prompt + steps tokens.
  EXPECT_EQ(encoded, 2u * static_cast<uint64_t>(compressed_after(static_cast<int>(prompt.size()) + steps)));
  std::remove(path.c_str());
}

}  // namespace
}  // namespace ispsim::dict
