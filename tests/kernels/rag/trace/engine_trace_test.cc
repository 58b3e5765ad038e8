// Engine-emitted traces and teacher-forced blending on a small random-weight
// Llama: the trace round-trips through TraceReader and carries exactly the
// engine's HKVD selections; teacher forcing by query extension equals decoding.
#include "kernels/rag/trace/engine_trace.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "common/error.h"
#include "kernels/int/random_model.h"
#include "kernels/rag/trace/quality.h"
#include "kernels/rag/trace/teacher_forcing.h"
#include "tests/support/files.h"
#include "traces/trace_io.h"

namespace ispsim::rag {
namespace {

model::Config small_config() {
  model::Config c;
  c.vocab_size = 300;
  c.hidden_size = 64;
  c.ffn_size = 128;
  c.num_layers = 3;
  c.num_heads = 4;
  c.num_kv_heads = 2;
  c.head_dim = 16;
  c.max_positions = 128;
  c.rope_theta = 10000.0f;
  c.tie_word_embeddings = true;
  return c;
}

std::vector<int> random_tokens(int n, int vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int> t(n);
  for (int& v : t) v = static_cast<int>(rng() % static_cast<uint32_t>(vocab));
  return t;
}

std::vector<bool> unpack(const trace::BitVector& v) {
  std::vector<bool> bits(v.bit_length());
  for (size_t i = 0; i < bits.size(); ++i)
    bits[i] = (static_cast<unsigned char>(v.bits()[i / 8]) >> (i % 8)) & 1u;
  return bits;
}

std::string temp_path(const std::string& name) { return (ispsim::testing::scratch_dir() / name).string(); }

class EngineTraceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = integer::make_random_model(small_config(), 7);
    model_.dir.clear();  // no checkpoint directory: the engine fingerprints the weights in memory
    docs_ = {{"alpha", random_tokens(17, 300, 1)}, {"beta", random_tokens(9, 300, 2)},
             {"gamma", random_tokens(23, 300, 3)}};
    query_ = random_tokens(5, 300, 4);
  }
  RagModel fp32() const { return RagModel::fp32(model_); }
  RagModel int16() const { return RagModel::integer(model_, random_tokens(96, 300, 5)); }

  model::Model model_;
  std::vector<Document> docs_;
  std::vector<int> query_;
  const std::vector<std::string> ids_ = {"gamma", "alpha", "beta"};  // retrieval order, not store order
};

TEST(RagTraceShape, ModelShapeFromConfigInFp16) {
  model::Config c = small_config();
  c.ffn_size = 688;
  trace::ModelShape m = model_shape(c, "tiny");
  EXPECT_EQ(m.family(), trace::ARCHITECTURE_LLAMA);
  EXPECT_EQ(m.name(), "tiny");
  EXPECT_EQ(m.layers(), 3u);
  EXPECT_EQ(m.hidden(), 64u);
  EXPECT_EQ(m.heads(), 4u);
  EXPECT_EQ(m.kv_heads(), 2u);
  EXPECT_EQ(m.head_dim(), 16u);
  EXPECT_EQ(m.ffn_dim(), 688u);
  EXPECT_EQ(m.vocab(), 300u);
  EXPECT_EQ(m.weight_bits(), 16u);
  EXPECT_EQ(m.kv_bits(), 16u);
  EXPECT_EQ(m.activation_bits(), 16u);
  c.family = model::Family::kQwen2;
  EXPECT_EQ(model_shape(c, "q").family(), trace::ARCHITECTURE_QWEN2);
  c.family = model::Family::kOpt;
  EXPECT_EQ(model_shape(c, "o").family(), trace::ARCHITECTURE_OPT);
}

// Decoding and teacher forcing by query extension give the same rows when the
// forced tokens are the blend's own answer.
TEST_F(EngineTraceTest, TeacherForcingEqualsDecodingFp32) {
  const RagModel engine = fp32();
  const KvStore store = precompute(engine, docs_);
  BlendOptions o;
  o.ratio = 0.3;
  o.answer_tokens = 4;
  const BlendOutput decoded = blend(engine, store, ids_, query_, o);
  const TeacherForced run = teacher_forced_blend(engine, store, ids_, query_, decoded.answer, o);
  EXPECT_EQ(run.hkvd_count, decoded.hkvd_count());
  const LogitRows& forced = run.rows;
  ASSERT_EQ(forced.size(), 4u);
  for (size_t s = 0; s < forced.size(); ++s) {
    ASSERT_EQ(forced[s].size(), decoded.logits[s].size());
    for (size_t i = 0; i < forced[s].size(); ++i)
      ASSERT_NEAR(forced[s][i], decoded.logits[s][i], 1e-5) << "row " << s << " logit " << i;
  }
}

TEST_F(EngineTraceTest, TeacherForcingEqualsDecodingIntegerBitExact) {
  const RagModel engine = int16();
  const KvStore store = precompute(engine, docs_);
  BlendOptions o;
  o.ratio = 0.3;
  o.answer_tokens = 4;
  o.integer = true;
  const BlendOutput decoded = blend(engine, store, ids_, query_, o);
  const LogitRows forced = teacher_forced_blend(engine, store, ids_, query_, decoded.answer, o).rows;
  ASSERT_EQ(forced.size(), 4u);
  for (size_t s = 0; s < forced.size(); ++s) EXPECT_EQ(forced[s], decoded.logits[s]) << "row " << s;
}

// At ratio 100 % the teacher-forced blend reproduces the full prefill: every
// top-1 agrees and the KL is at rounding level.
TEST_F(EngineTraceTest, FullRatioQualityMatchesFullPrefill) {
  const RagModel engine = fp32();
  const KvStore store = precompute(engine, docs_);
  BlendOptions o;
  o.ratio = 1.0;
  o.answer_tokens = 3;
  const BlendOutput full = full_prefill(engine, store, ids_, query_, o);
  const AnswerQuality q =
      compare_answers(full.logits, teacher_forced_blend(engine, store, ids_, query_, full.answer, o).rows);
  EXPECT_TRUE(q.first_token_agrees);
  EXPECT_EQ(q.positions, 3);
  EXPECT_EQ(q.top1_agreements, 3);
  EXPECT_LT(q.mean_kl_nats(), 1e-9);
}

// Reads every op and checks each mask-carrying op against the engine's masks.
void check_trace(const std::string& path, const EngineRun& run, const std::vector<std::string>& ids,
                 const model::Config& config) {
  trace::TraceReader reader(path);
  const trace::Header& h = reader.header();
  EXPECT_EQ(h.producer().kind(), trace::PRODUCER_FUNCTIONAL_ENGINE);
  ASSERT_EQ(h.producer().settings_size(), 2);
  EXPECT_EQ(h.producer().settings(0).key(), "model");
  EXPECT_EQ(h.producer().settings(1).value(), "0.25");
  EXPECT_EQ(h.model().layers(), static_cast<uint32_t>(config.num_layers));
  EXPECT_EQ(h.model().kv_bits(), 16u);
  ASSERT_EQ(h.request().documents_size(), static_cast<int>(ids.size()));
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(h.request().documents(i).name(), ids[i]);
    EXPECT_EQ(h.request().documents(i).tokens(), run.blend.doc_token_counts[i]);
  }
  EXPECT_EQ(h.request().query_tokens(), run.blend.query_tokens.size());
  EXPECT_EQ(h.request().answer_tokens(), run.blend.answer.size());
  EXPECT_DOUBLE_EQ(h.request().recompute_ratio(), 0.25);
  ASSERT_EQ(h.programs_size(), 3);

  const size_t c = run.blend.context_tokens.size();
  const size_t qn = run.blend.query_tokens.size();
  std::map<std::string, int> checked;  // what was compared, by kind
  trace::Op op;
  while (reader.next(op)) {
    const bool blend_program = op.program() != trace::FULL_PREFILL;
    if (op.has_hkvd_select()) {
      ASSERT_TRUE(blend_program);
      EXPECT_EQ(unpack(op.hkvd_select().mask()), run.blend.hkvd_masks[1]);
      EXPECT_EQ(op.hkvd_select().selected_tokens(), static_cast<uint64_t>(run.blend.hkvd_count()));
      EXPECT_EQ(op.hkvd_select().context_tokens(), c);
      ++checked["hkvd_select"];
    }
    if (op.has_attention() && op.attention().has_hkvd_mask()) {
      ASSERT_TRUE(blend_program);
      ASSERT_TRUE(op.has_layer());
      ASSERT_GE(op.layer(), 1u);
      EXPECT_EQ(unpack(op.attention().hkvd_mask()), run.blend.hkvd_masks[op.layer()]) << "op " << op.id();
      ++checked["attention"];
    }
    if (op.has_kv_append() && op.kv_append().has_token_mask() && op.phase() != trace::PHASE_HKVD_IDENTIFICATION) {
      const std::vector<bool> mask = unpack(op.kv_append().token_mask());
      std::vector<bool> expected = run.blend.hkvd_masks[op.layer()];
      if (op.phase() == trace::PHASE_FUSED_PREFILL) expected.resize(c + qn, true);  // M_l ∪ query
      EXPECT_EQ(mask, expected) << "op " << op.id();
      ++checked["kv_append"];
    }
  }
  const int layers = config.num_layers;
  const int answer = static_cast<int>(run.blend.answer.size());
  EXPECT_EQ(checked["hkvd_select"], 2);  // one per blend program
  // Per blend program: RECOMPUTATION (PRECOMPUTED_BLEND only) + QUERY/FUSED prefill + decode, layers 1..L-1.
  EXPECT_EQ(checked["attention"], (layers - 1) * (2 + answer) + (layers - 1) * (1 + answer));
  EXPECT_EQ(checked["kv_append"], 2 * (layers - 1));
}

TEST_F(EngineTraceTest, TraceRoundTripsWithTheEnginesMasksFp32) {
  const RagModel engine = fp32();
  const KvStore store = precompute(engine, docs_);
  BlendOptions o;
  o.ratio = 0.25;
  o.answer_tokens = 3;
  const EngineRun run = run_request(engine, store, ids_, query_, o);
  EXPECT_EQ(run.blend.hkvd_count(), static_cast<int>(std::lround(0.25 * 49)));  // C = 17 + 9 + 23
  const std::string path = temp_path("fp32.trace");
  write_engine_trace(path, blend_request(model_shape(model_.config, "tiny"), run, o.ratio), ids_,
                     engine_producer("test", {{"model", "random"}, {"ratio", "0.25"}}));
  check_trace(path, run, ids_, model_.config);
  std::filesystem::remove(path);
}

TEST_F(EngineTraceTest, TraceRoundTripsWithTheEnginesMasksInteger) {
  const RagModel engine = int16();
  const KvStore store = precompute(engine, docs_);
  BlendOptions o;
  o.ratio = 0.25;
  o.answer_tokens = 2;
  o.integer = true;
  const EngineRun run = run_request(engine, store, ids_, query_, o);
  const std::string path = temp_path("int16.trace");
  write_engine_trace(path, blend_request(model_shape(model_.config, "tiny"), run, o.ratio), ids_,
                     engine_producer("test", {{"model", "random"}, {"ratio", "0.25"}}));
  check_trace(path, run, ids_, model_.config);
  std::filesystem::remove(path);
}

TEST_F(EngineTraceTest, RatioSelectingNoTokenIsBadInput) {
  const RagModel engine = fp32();
  const KvStore store = precompute(engine, docs_);
  BlendOptions o;
  o.ratio = 0.005;  // round(0.005 * 49) = 0
  EXPECT_THROW(run_request(engine, store, ids_, query_, o), BadInput);
}

}  // namespace
}  // namespace ispsim::rag
