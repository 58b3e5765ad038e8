// The program builder writes exactly the ops of contract4.md ("Trace programs"):
// op counts as closed forms of (L, A), every size of a small case, masks, deps,
// and bad requests.
#include <gtest/gtest.h>

#include <map>

#include "common/error.h"
#include "tests/traces/gen/tracegen_test_util.h"
#include "traces/trace_validator.h"

using namespace ispsim;
using namespace ispsim::tracegen;
using namespace ispsim::tracegen::testing;
using trace::Op;

namespace {

// Toy Llama-like shape: KV per token and layer = 2 KV heads x 16 x 2 (K, V) x 2 B = 128 B.
trace::ModelShape toy_model(trace::ArchitectureFamily family, uint32_t layers) {
  trace::ModelShape m;
  m.set_family(family);
  m.set_name("toy");
  m.set_layers(layers);
  m.set_hidden(64);
  m.set_heads(4);
  m.set_kv_heads(family == trace::ARCHITECTURE_OPT ? 4 : 2);
  m.set_head_dim(16);
  m.set_ffn_dim(128);
  m.set_vocab(100);
  m.set_weight_bits(16);
  m.set_kv_bits(16);
  m.set_activation_bits(16);
  return m;
}

// Two documents of 5 + 7 tokens (C = 12), 3 query tokens (P = 15), `answer` decode
// steps; layer l >= 1 selects H = 3 tokens: {l, l+4, 11}.
BlendRequest toy_request(trace::ArchitectureFamily family, uint32_t layers, uint64_t answer) {
  BlendRequest r;
  r.model = toy_model(family, layers);
  r.doc_tokens = {5, 7};
  r.query_tokens = 3;
  r.answer_tokens = answer;
  r.recompute_ratio = 0.25;
  r.hkvd_masks.resize(layers);
  for (uint32_t l = 1; l < layers; ++l) {
    r.hkvd_masks[l].assign(12, false);
    r.hkvd_masks[l][l % 4] = r.hkvd_masks[l][l % 4 + 4] = r.hkvd_masks[l][11] = true;
  }
  return r;
}

std::vector<bool> unpack(const trace::BitVector& v) {
  std::vector<bool> bits(v.bit_length());
  for (size_t i = 0; i < bits.size(); ++i) bits[i] = (static_cast<unsigned char>(v.bits()[i / 8]) >> (i % 8)) & 1;
  return bits;
}

// Closed forms (derivation in traces/README.md, "Generated traces"): B ops per dense
// block (12 Llama/Qwen, 11 OPT without rope), R = ops before the KV append (3 or 2).
struct Counts {
  uint64_t full, blend, fused;
};
Counts closed_form(bool opt, uint64_t L, uint64_t A) {
  const uint64_t B = opt ? 11 : 12, R = opt ? 2 : 3, decode = A * (L * B + 3);
  return {3 + L * B + decode, 5 + B + 2 * (L - 1) * B - R + decode, 5 + L * B + decode};
}

const Op& find(const std::vector<Op>& ops, trace::Phase phase, const std::string& label, int layer = -1,
               int step = -1) {
  for (const Op& op : ops)
    if (op.phase() == phase && op.label() == label && (layer < 0 || (op.has_layer() && int(op.layer()) == layer)) &&
        (step < 0 || (op.has_decode_step() && int(op.decode_step()) == step)))
      return op;
  throw std::logic_error("no op " + label);
}

bool depends_on(const Op& op, uint64_t id) {
  for (uint64_t d : op.deps())
    if (d == id) return true;
  return false;
}

}  // namespace

TEST(ProgramBuilder, OpCountsAreClosedFormsOfLayersAndAnswerTokens) {
  for (auto family : {trace::ARCHITECTURE_LLAMA, trace::ARCHITECTURE_QWEN2, trace::ARCHITECTURE_OPT})
    for (uint32_t L : {2u, 3u, 5u})
      for (uint64_t A : {0u, 1u, 3u}) {
        const trace::TraceText t = build(toy_request(family, L, A), all_programs());
        const Counts want = closed_form(family == trace::ARCHITECTURE_OPT, L, A);
        SCOPED_TRACE("family " + std::to_string(family) + " L " + std::to_string(L) + " A " + std::to_string(A));
        EXPECT_EQ(ops_of(t, trace::FULL_PREFILL).size(), want.full);
        EXPECT_EQ(ops_of(t, trace::PRECOMPUTED_BLEND).size(), want.blend);
        EXPECT_EQ(ops_of(t, trace::PRECOMPUTED_BLEND_FUSED).size(), want.fused);
        // The header carries the same counts; ids are 0, 1, 2, ... across the file.
        EXPECT_EQ(t.header().programs(0).op_count(), want.full);
        EXPECT_EQ(t.header().programs(1).op_count(), want.blend);
        EXPECT_EQ(t.header().programs(2).op_count(), want.fused);
        for (int i = 0; i < t.op_size(); ++i) ASSERT_EQ(t.op(i).id(), uint64_t(i));
      }
}

TEST(ProgramBuilder, FullPrefillSizes) {
  const auto ops = ops_of(build(toy_request(trace::ARCHITECTURE_LLAMA, 3, 2), all_programs()), trace::FULL_PREFILL);
  const uint64_t P = 15;
  EXPECT_EQ(find(ops, trace::PHASE_FULL_PREFILL, "embedding").embedding().tokens(), P);
  for (int l = 0; l < 3; ++l) {
    const Op& qkv = find(ops, trace::PHASE_FULL_PREFILL, "qkv_proj", l);
    // M = P, N = (4 + 2*2) heads x 16 = 128, K = 64: 2*15*128*64 = 245760 FLOPs.
    EXPECT_EQ(2 * qkv.gemm().m() * qkv.gemm().n() * qkv.gemm().k(), 245760u);
    EXPECT_TRUE(qkv.gemm().b_is_weight());
    EXPECT_EQ(qkv.gemm().a_dtype(), trace::DTYPE_FP16);
    EXPECT_EQ(find(ops, trace::PHASE_FULL_PREFILL, "input_norm", l).nonlinear().elements(), P * 64);
    EXPECT_EQ(find(ops, trace::PHASE_FULL_PREFILL, "input_norm", l).nonlinear().kind(), trace::NONLINEAR_RMSNORM);
    EXPECT_EQ(find(ops, trace::PHASE_FULL_PREFILL, "rope", l).nonlinear().elements(), P * (4 + 2) * 16);
    const Op& append = find(ops, trace::PHASE_FULL_PREFILL, "kv_append", l);
    EXPECT_EQ(append.kv_append().tokens().begin(), 0u);
    EXPECT_EQ(append.kv_append().tokens().end(), P);
    EXPECT_EQ(append.kv_append().bytes(), P * 128);
    EXPECT_FALSE(append.kv_append().has_token_mask());
    const Op& attn = find(ops, trace::PHASE_FULL_PREFILL, "attention", l);
    EXPECT_EQ(attn.attention().query_rows(), P);
    ASSERT_EQ(attn.attention().kv_size(), 1);
    EXPECT_EQ(attn.attention().kv(0).tokens().end(), P);
    EXPECT_EQ(attn.attention().kv(0).region(), trace::KV_REGION_APPENDED);
    EXPECT_TRUE(attn.attention().causal());
    EXPECT_TRUE(depends_on(attn, find(ops, trace::PHASE_FULL_PREFILL, "rope", l).id()));
    EXPECT_TRUE(depends_on(attn, append.id()));
    const Op& o = find(ops, trace::PHASE_FULL_PREFILL, "o_proj", l);
    EXPECT_EQ(o.gemm().m() * o.gemm().n() * o.gemm().k(), P * 64 * 64);
    const Op& up = find(ops, trace::PHASE_FULL_PREFILL, "ffn_up", l);
    EXPECT_EQ(up.gemm().n(), 2 * 128u);  // gate + up
    EXPECT_EQ(find(ops, trace::PHASE_FULL_PREFILL, "swiglu", l).nonlinear().elements(), P * 128);
    const Op& down = find(ops, trace::PHASE_FULL_PREFILL, "ffn_down", l);
    EXPECT_EQ(down.gemm().n(), 64u);
    EXPECT_EQ(down.gemm().k(), 128u);
  }
  EXPECT_EQ(find(ops, trace::PHASE_FULL_PREFILL, "lm_head").lm_head().rows(), 1u);
  EXPECT_EQ(find(ops, trace::PHASE_FULL_PREFILL, "final_norm").nonlinear().elements(), 64u);
  // Decode step 1, layer 2: one row at position P + 1, attention over [0, P + 2).
  const Op& append = find(ops, trace::PHASE_DECODE, "kv_append", 2, 1);
  EXPECT_EQ(append.kv_append().tokens().begin(), P + 1);
  EXPECT_EQ(append.kv_append().bytes(), 128u);
  const Op& attn = find(ops, trace::PHASE_DECODE, "attention", 2, 1);
  EXPECT_EQ(attn.attention().query_rows(), 1u);
  EXPECT_EQ(attn.attention().kv(0).tokens().end(), P + 2);
  EXPECT_EQ(find(ops, trace::PHASE_DECODE, "qkv_proj", 2, 1).gemm().m(), 1u);
  // Step 1 starts after step 0's LM head.
  EXPECT_TRUE(depends_on(find(ops, trace::PHASE_DECODE, "embedding", -1, 1),
                         find(ops, trace::PHASE_DECODE, "lm_head", -1, 0).id()));
  EXPECT_TRUE(depends_on(find(ops, trace::PHASE_DECODE, "embedding", -1, 0),
                         find(ops, trace::PHASE_FULL_PREFILL, "lm_head").id()));
}

TEST(ProgramBuilder, BlendIdentificationRecomputationAndQueryPrefill) {
  const BlendRequest r = toy_request(trace::ARCHITECTURE_LLAMA, 3, 1);
  const auto ops = ops_of(build(r, all_programs()), trace::PRECOMPUTED_BLEND);
  const uint64_t C = 12, P = 15, H = 3, Q = 3;
  const auto ident = trace::PHASE_HKVD_IDENTIFICATION, recomp = trace::PHASE_RECOMPUTATION,
             query = trace::PHASE_QUERY_PREFILL;
  // Identification: layer 0 fully over P, layer 1 up to rope, the stored layer-1 KV, the selection.
  EXPECT_EQ(find(ops, ident, "embedding").embedding().tokens(), P);
  EXPECT_EQ(find(ops, ident, "kv_append", 0).kv_append().bytes(), P * 128);
  EXPECT_EQ(find(ops, ident, "qkv_proj", 1).gemm().m(), P);
  const Op& load = find(ops, ident, "kv_load", 1);
  EXPECT_EQ(load.kv_load().bytes(), C * 128);
  EXPECT_EQ(load.kv_load().region(), trace::KV_REGION_PRECOMPUTED);
  EXPECT_EQ(load.kv_load().tokens().end(), C);
  const Op& select = find(ops, ident, "hkvd_select", 1);
  EXPECT_EQ(select.hkvd_select().context_tokens(), C);
  EXPECT_EQ(select.hkvd_select().selected_tokens(), H);
  EXPECT_DOUBLE_EQ(select.hkvd_select().ratio(), 0.25);
  EXPECT_EQ(unpack(select.hkvd_select().mask()), r.hkvd_masks[1]);
  const Op& rope1 = find(ops, ident, "rope", 1);
  EXPECT_TRUE(depends_on(select, rope1.id()));
  EXPECT_TRUE(depends_on(select, load.id()));
  EXPECT_FALSE(std::any_of(ops.begin(), ops.end(), [&](const Op& op) {
    return op.phase() != ident && op.phase() != trace::PHASE_DECODE && op.layer() == 1 && (op.label() == "qkv_proj" || op.label() == "rope");
  })) << "layer 1 reuses the identification's qkv_proj/rope";

  for (uint32_t l = 1; l < 3; ++l) {
    const Op& append = find(ops, recomp, "kv_append", l);
    EXPECT_EQ(append.kv_append().bytes(), H * 128);
    EXPECT_EQ(append.kv_append().tokens().end(), C);
    EXPECT_EQ(unpack(append.kv_append().token_mask()), r.hkvd_masks[l]);
    const Op& attn = find(ops, recomp, "attention", l);
    EXPECT_EQ(attn.attention().query_rows(), H);
    ASSERT_EQ(attn.attention().kv_size(), 1);
    EXPECT_EQ(attn.attention().kv(0).region(), trace::KV_REGION_PRECOMPUTED);
    EXPECT_EQ(unpack(attn.attention().hkvd_mask()), r.hkvd_masks[l]);
    EXPECT_TRUE(attn.attention().causal());

    const Op& qappend = find(ops, query, "kv_append", l);
    EXPECT_EQ(qappend.kv_append().tokens().begin(), C);
    EXPECT_EQ(qappend.kv_append().tokens().end(), P);
    EXPECT_EQ(qappend.kv_append().bytes(), Q * 128);
    const Op& qattn = find(ops, query, "attention", l);
    EXPECT_EQ(qattn.attention().query_rows(), Q);
    ASSERT_EQ(qattn.attention().kv_size(), 2);
    EXPECT_EQ(qattn.attention().kv(1).tokens().begin(), C);
    EXPECT_EQ(qattn.attention().kv(1).region(), trace::KV_REGION_APPENDED);
    EXPECT_EQ(unpack(qattn.attention().hkvd_mask()), r.hkvd_masks[l]);
    EXPECT_TRUE(depends_on(qattn, append.id())) << "query attention waits for the layer's recomputed KV";
    EXPECT_TRUE(depends_on(qattn, qappend.id()));
  }
  EXPECT_TRUE(depends_on(find(ops, recomp, "kv_append", 1), select.id()));
  EXPECT_TRUE(depends_on(find(ops, recomp, "attention", 1), rope1.id()));
  EXPECT_TRUE(depends_on(find(ops, query, "kv_append", 1), rope1.id()));
  EXPECT_EQ(find(ops, recomp, "qkv_proj", 2).gemm().m(), H);
  EXPECT_EQ(find(ops, query, "qkv_proj", 2).gemm().m(), Q);
  EXPECT_EQ(find(ops, query, "lm_head").lm_head().rows(), 1u);

  // Decode: layer 0 sees only appended KV (recomputed fully); layers >= 1 the masked context.
  const Op& d0 = find(ops, trace::PHASE_DECODE, "attention", 0, 0);
  ASSERT_EQ(d0.attention().kv_size(), 1);
  EXPECT_EQ(d0.attention().kv(0).tokens().end(), P + 1);
  EXPECT_FALSE(d0.attention().has_hkvd_mask());
  const Op& d2 = find(ops, trace::PHASE_DECODE, "attention", 2, 0);
  ASSERT_EQ(d2.attention().kv_size(), 2);
  EXPECT_EQ(d2.attention().kv(0).region(), trace::KV_REGION_PRECOMPUTED);
  EXPECT_EQ(d2.attention().kv(1).tokens().begin(), C);
  EXPECT_EQ(d2.attention().kv(1).tokens().end(), P + 1);
  EXPECT_EQ(unpack(d2.attention().hkvd_mask()), r.hkvd_masks[2]);
}

TEST(ProgramBuilder, FusedPrefillOnePassPerLayer) {
  const BlendRequest r = toy_request(trace::ARCHITECTURE_QWEN2, 3, 1);
  const auto ops = ops_of(build(r, all_programs()), trace::PRECOMPUTED_BLEND_FUSED);
  const uint64_t C = 12, P = 15, H = 3, Q = 3;
  const auto fused = trace::PHASE_FUSED_PREFILL;
  for (uint32_t l = 1; l < 3; ++l) {
    const Op& append = find(ops, fused, "kv_append", l);
    EXPECT_EQ(append.kv_append().tokens().end(), P);
    EXPECT_EQ(append.kv_append().bytes(), (H + Q) * 128);
    std::vector<bool> want = r.hkvd_masks[l];
    want.insert(want.end(), Q, true);
    EXPECT_EQ(unpack(append.kv_append().token_mask()), want);
    const Op& attn = find(ops, fused, "attention", l);
    EXPECT_EQ(attn.attention().query_rows(), H + Q);
    ASSERT_EQ(attn.attention().kv_size(), 2);
    EXPECT_EQ(attn.attention().kv(0).tokens().end(), C);
    EXPECT_EQ(attn.attention().kv(1).tokens().end(), P);
    EXPECT_EQ(unpack(attn.attention().hkvd_mask()), r.hkvd_masks[l]);
  }
  // Q_fused rows through the dense layers: 2 * (H + Q) * 128 * 64 FLOPs for qkv_proj.
  const Op& qkv = find(ops, fused, "qkv_proj", 2);
  EXPECT_EQ(2 * qkv.gemm().m() * qkv.gemm().n() * qkv.gemm().k(), 2 * (H + Q) * 128 * 64);
  EXPECT_TRUE(depends_on(find(ops, fused, "kv_append", 1),
                         find(ops, trace::PHASE_HKVD_IDENTIFICATION, "hkvd_select", 1).id()));
  // Exactly one KV read of the context per layer in prefill: one attention per layer >= 1.
  uint64_t prefill_attentions = 0;
  for (const Op& op : ops) prefill_attentions += op.phase() == fused && op.has_attention();
  EXPECT_EQ(prefill_attentions, 2u);
}

TEST(ProgramBuilder, EveryAttentionMaskHasPopcountH) {
  const trace::TraceText t = build(toy_request(trace::ARCHITECTURE_LLAMA, 5, 3), all_programs());
  uint64_t masked = 0;
  for (const Op& op : t.op()) {
    if (op.has_attention() && op.attention().has_hkvd_mask()) {
      EXPECT_EQ(trace::popcount(op.attention().hkvd_mask()), 3u) << "op " << op.id();
      ++masked;
    }
  }
  // Blend: 4 layers x (recomputation + query + 3 decode steps); fused: 4 x (1 + 3).
  EXPECT_EQ(masked, 4u * 5 + 4u * 4);
}

TEST(ProgramBuilder, OptHasNoRopeAndReluFfn) {
  const auto ops = ops_of(build(toy_request(trace::ARCHITECTURE_OPT, 2, 1), all_programs()), trace::FULL_PREFILL);
  for (const Op& op : ops) EXPECT_NE(op.label(), "rope");
  EXPECT_EQ(find(ops, trace::PHASE_FULL_PREFILL, "ffn_up", 0).gemm().n(), 128u);
  EXPECT_EQ(find(ops, trace::PHASE_FULL_PREFILL, "relu", 0).nonlinear().kind(), trace::NONLINEAR_RELU);
  EXPECT_EQ(find(ops, trace::PHASE_FULL_PREFILL, "input_norm", 0).nonlinear().kind(), trace::NONLINEAR_LAYERNORM);
  // MHA: qkv N = 3 x hidden; attention waits for qkv_proj instead of rope.
  const Op& qkv = find(ops, trace::PHASE_FULL_PREFILL, "qkv_proj", 1);
  EXPECT_EQ(qkv.gemm().n(), 3 * 64u);
  EXPECT_TRUE(depends_on(find(ops, trace::PHASE_FULL_PREFILL, "attention", 1), qkv.id()));
}

TEST(ProgramBuilder, NoSelectedTokensSkipsRecomputation) {
  BlendRequest r = toy_request(trace::ARCHITECTURE_LLAMA, 3, 1);
  for (uint32_t l = 1; l < 3; ++l) r.hkvd_masks[l].assign(12, false);
  r.recompute_ratio = 0.0;
  const trace::TraceText t = build(r, all_programs());
  const auto blend = ops_of(t, trace::PRECOMPUTED_BLEND);
  for (const Op& op : blend) EXPECT_NE(op.phase(), trace::PHASE_RECOMPUTATION);
  // Without recomputation the unfused program has the fused program's op count.
  EXPECT_EQ(blend.size(), closed_form(false, 3, 1).fused);
  EXPECT_EQ(ops_of(t, trace::PRECOMPUTED_BLEND_FUSED).size(), closed_form(false, 3, 1).fused);
  EXPECT_TRUE(depends_on(find(blend, trace::PHASE_QUERY_PREFILL, "attention", 1),
                         find(blend, trace::PHASE_HKVD_IDENTIFICATION, "hkvd_select", 1).id()));
}

TEST(ProgramBuilder, FullPrefillAloneNeedsNoMasks) {
  BlendRequest r = toy_request(trace::ARCHITECTURE_LLAMA, 1, 2);
  r.hkvd_masks.clear();
  const trace::TraceText t = build(r, {trace::FULL_PREFILL});
  EXPECT_EQ(uint64_t(t.op_size()), closed_form(false, 1, 2).full);
}

TEST(ProgramBuilder, HeaderDescribesTheRequest) {
  const BlendRequest r = toy_request(trace::ARCHITECTURE_LLAMA, 3, 2);
  const trace::TraceText t = build(r, all_programs());
  const trace::Header& h = t.header();
  EXPECT_EQ(h.version().major(), trace::kFormatMajor);
  EXPECT_EQ(h.model().SerializeAsString(), r.model.SerializeAsString());
  ASSERT_EQ(h.request().documents_size(), 2);
  EXPECT_EQ(h.request().documents(0).name(), "doc0");
  EXPECT_EQ(h.request().documents(1).tokens(), 7u);
  EXPECT_EQ(h.request().query_tokens(), 3u);
  EXPECT_EQ(h.request().answer_tokens(), 2u);
  EXPECT_EQ(h.request().kv_format(), trace::KV_FP16);
  EXPECT_EQ(h.request().dataset(), "test");
  EXPECT_EQ(h.producer().tool(), "tracegen_test");
  ASSERT_EQ(h.programs_size(), 3);
  EXPECT_EQ(h.programs(2).program(), trace::PRECOMPUTED_BLEND_FUSED);
}

TEST(ProgramBuilder, StreamingReaderAcceptsTheTrace) {
  const BlendRequest r = toy_request(trace::ARCHITECTURE_LLAMA, 4, 2);
  build(r, all_programs(), "stream.trace");
  trace::TraceReader reader(scratch_path("stream.trace"));
  Op op;
  uint64_t n = 0;
  while (reader.next(op)) ++n;
  const Counts want = closed_form(false, 4, 2);
  EXPECT_EQ(n, want.full + want.blend + want.fused);
}

TEST(ProgramBuilder, RejectsBadRequests) {
  auto problem = [](BlendRequest r, std::vector<trace::Program> programs = all_programs()) -> std::string {
    try {
      check_blend_request(r, programs, "req");
    } catch (const BadInput& e) {
      return e.what();
    }
    return "accepted";
  };
  const BlendRequest good = toy_request(trace::ARCHITECTURE_LLAMA, 3, 1);
  EXPECT_EQ(problem(good), "accepted");
  BlendRequest r = good;
  r.hkvd_masks[2][0] = !r.hkvd_masks[2][0];
  EXPECT_NE(problem(r).find("hkvd_masks[2] selects"), std::string::npos) << problem(r);
  r = good;
  r.hkvd_masks[1].push_back(false);
  EXPECT_NE(problem(r).find("hkvd_masks[1] has 13 bits; expected one per context token (12)"), std::string::npos);
  r = good;
  r.hkvd_masks.pop_back();
  EXPECT_NE(problem(r).find("hkvd_masks has 2 entries"), std::string::npos);
  r = good;
  r.doc_tokens.clear();
  EXPECT_NE(problem(r).find("no documents"), std::string::npos);
  r = good;
  r.doc_tokens[1] = 0;
  EXPECT_NE(problem(r).find("documents[1].tokens is 0"), std::string::npos) << problem(r);
  r = good;
  r.query_tokens = 0;
  EXPECT_NE(problem(r).find("query_tokens is 0"), std::string::npos);
  r = good;
  r.recompute_ratio = 1.5;
  EXPECT_NE(problem(r).find("recompute_ratio"), std::string::npos);
  r = good;
  r.model.set_kv_bits(32);
  EXPECT_NE(problem(r).find("kv_bits is 32"), std::string::npos);
  r = good;
  r.model.set_kv_heads(3);
  EXPECT_NE(problem(r).find("not a multiple"), std::string::npos);
  r = toy_request(trace::ARCHITECTURE_LLAMA, 1, 1);
  EXPECT_NE(problem(r).find("at least 2 layers"), std::string::npos);
  EXPECT_EQ(problem(r, {trace::FULL_PREFILL}), "accepted");
  EXPECT_NE(problem(good, {trace::DECODE_ONLY}).find("not built by the program builder"), std::string::npos);
  EXPECT_NE(problem(good, {trace::FULL_PREFILL, trace::FULL_PREFILL}).find("given twice"), std::string::npos);
  EXPECT_NE(problem(good, {}).find("no program"), std::string::npos);
  EXPECT_EQ(problem(good, {}).rfind("req: ", 0), 0u);
}
