// Each semantic check of TraceValidator, one invalid trace at a time.
#include "traces/trace_validator.h"

#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "common/error.h"
#include "tests/traces/trace_fixtures.h"

using namespace ispsim::trace;
using namespace ispsim::trace::testing;

namespace {

// Validates the whole trace in memory; returns the error text or "ok".
std::string check(const TraceText& t) {
  try {
    TraceValidator v("t.trace");
    v.check_header(t.header());
    for (const Op& op : t.op()) v.check_op(op);
    v.check_end(false);
  } catch (const ispsim::BadInput& e) {
    return e.what();
  }
  return "ok";
}

// every_kind_trace() with one change applied.
std::string check_changed(const std::function<void(TraceText&)>& change) {
  TraceText t = every_kind_trace();
  change(t);
  return check(t);
}

Op& op_with_id(TraceText& t, uint64_t id) {
  for (Op& op : *t.mutable_op())
    if (op.id() == id) return op;
  throw std::logic_error("no op " + std::to_string(id));
}

}  // namespace

TEST(TraceValidator, FixtureIsValid) { EXPECT_EQ(check(every_kind_trace()), "ok"); }

// popcount() against a bit-by-bit count, on lengths that end mid-word.
TEST(TraceValidator, PopcountCountsEverySetBit) {
  std::mt19937_64 random(7);
  for (size_t bytes = 0; bytes <= 70; ++bytes) {
    BitVector v;
    std::string bits(bytes, '\0');
    uint64_t expected = 0;
    for (char& c : bits) {
      c = static_cast<char>(random());
      for (unsigned bit = 0; bit < 8; ++bit) expected += (static_cast<unsigned char>(c) >> bit) & 1u;
    }
    v.set_bits(bits);
    v.set_bit_length(bytes * 8);
    EXPECT_EQ(popcount(v), expected) << bytes;
  }
}

TEST(TraceValidator, HeaderProblems) {
  EXPECT_EQ(check_changed([](TraceText& t) { t.mutable_header()->clear_version(); }),
            "t.trace: header: no format version");
  EXPECT_EQ(check_changed([](TraceText& t) { t.mutable_header()->mutable_version()->set_major(2); }),
            "t.trace: header: unsupported format version 2.0 (this reader understands major version 1)");
  EXPECT_EQ(check_changed([](TraceText& t) { t.mutable_header()->mutable_model()->set_heads(3); }),
            "t.trace: header: model.heads (3) is not a multiple of model.kv_heads (2)");
  EXPECT_EQ(check_changed([](TraceText& t) { t.mutable_header()->mutable_model()->set_vocab(0); }),
            "t.trace: header: model.vocab is 0; must be > 0");
  EXPECT_EQ(check_changed([](TraceText& t) { t.mutable_header()->mutable_model()->set_kv_bits(12); }),
            "t.trace: header: model.kv_bits is 12; must be 4, 8, 16 or 32");
  EXPECT_EQ(check_changed([](TraceText& t) { t.mutable_header()->mutable_request()->set_recompute_ratio(1.5); }),
            "t.trace: header: request.recompute_ratio is 1.500000; must be within 0..1");
  EXPECT_EQ(check_changed([](TraceText& t) { t.mutable_header()->mutable_request()->set_kv_format(KV_INT8); }),
            "t.trace: header: request.kv_format KV_INT8 has 8-bit elements but model.kv_bits is 16");
  EXPECT_EQ(check_changed([](TraceText& t) { t.mutable_header()->mutable_request()->set_kv_format(KV_DICTIONARY); }),
            "t.trace: header: request.kv_format is KV_DICTIONARY but request.dictionary is missing");
  EXPECT_EQ(check_changed([](TraceText& t) {
              t.mutable_header()->mutable_request()->mutable_documents(1)->set_tokens(0);
            }),
            "t.trace: header: request.documents[1].tokens is 0; must be > 0");
  EXPECT_EQ(check_changed([](TraceText& t) { t.mutable_header()->add_programs()->set_program(DECODE_ONLY); }),
            "t.trace: header: program DECODE_ONLY declared twice");
  EXPECT_EQ(check_changed([](TraceText& t) { t.mutable_header()->clear_programs(); }),
            "t.trace: header: no programs declared");
  EXPECT_EQ(check_changed([](TraceText& t) { t.mutable_header()->mutable_producer()->clear_kind(); }),
            "t.trace: header: producer.kind not set");
}

TEST(TraceValidator, DictionarySettings) {
  auto dictionary = [](TraceText& t) {
    Request* r = t.mutable_header()->mutable_request();
    r->set_kv_format(KV_DICTIONARY);
    DictionarySettings* d = r->mutable_dictionary();
    d->set_atoms(32768);
    d->set_k_low(3);
    d->set_k_high(16);
    d->set_refine_fraction(0.1);
    d->set_window_tokens(128);
    d->set_unit_tokens(32);
    d->set_dictionary_bits(8);
    d->set_index_bits(16);
    d->set_coefficient_bits(8);
    return d;
  };
  EXPECT_EQ(check_changed([&](TraceText& t) {
              dictionary(t);
              // Dense KV ops then need an explicit format.
              for (Op& op : *t.mutable_op()) {
                if (op.has_kv_load()) op.mutable_kv_load()->set_format(KV_FP16);
                if (op.has_kv_append()) op.mutable_kv_append()->set_format(KV_FP16);
              }
            }),
            "ok");
  EXPECT_EQ(check_changed([&](TraceText& t) { dictionary(t)->set_k_low(17); }),
            "t.trace: header: request.dictionary needs k_low <= k_high <= atoms, got 17, 16, 32768");
  EXPECT_EQ(check_changed([&](TraceText& t) { dictionary(t)->set_unit_tokens(256); }),
            "t.trace: header: request.dictionary.unit_tokens (256) exceeds window_tokens (128)");
}

TEST(TraceValidator, OrderingAndDependencies) {
  EXPECT_EQ(check_changed([](TraceText& t) { op_with_id(t, 3).set_id(2); }),
            "t.trace: op 2: id is not greater than the previous op's id 2");
  EXPECT_EQ(check_changed([](TraceText& t) { op_with_id(t, 3).add_deps(9); }),
            "t.trace: op 3: depends on op 9, which is not an earlier op");
  EXPECT_EQ(check_changed([](TraceText& t) { op_with_id(t, 11).add_deps(5); }),
            "t.trace: op 11: depends on op 5, which is not an earlier op of program DECODE_ONLY");
  EXPECT_EQ(check_changed([](TraceText& t) { op_with_id(t, 4).add_deps(2); }),
            "t.trace: op 4: lists dependency 2 twice");
  EXPECT_EQ(check_changed([](TraceText& t) { op_with_id(t, 20).set_program(FULL_PREFILL); }),
            "t.trace: op 20: program FULL_PREFILL is not declared in the header");
  EXPECT_EQ(check_changed([](TraceText& t) { op_with_id(t, 20).clear_program(); }),
            "t.trace: op 20: program not set");
  EXPECT_EQ(check_changed([](TraceText& t) { t.mutable_header()->mutable_programs(1)->set_op_count(1); }),
            "t.trace: op 11: program DECODE_ONLY declares 1 ops in the header but has more");
  EXPECT_EQ(check_changed([](TraceText& t) { t.mutable_header()->mutable_programs(1)->set_op_count(3); }),
            "t.trace: program DECODE_ONLY declares 3 ops in the header, but the trace ends after 2 "
            "(truncated file?)");
}

// A program whose ops resume after another program's: its dependencies may
// reach back over the other program's ids and over gaps, but never onto them.
TEST(TraceValidator, DependenciesAcrossInterleavedProgramsAndIdGaps) {
  const auto resume_blend_at_12 = [](TraceText& t, std::vector<uint64_t> deps) {
    Op copy = op_with_id(t, 2);  // a PRECOMPUTED_BLEND gemm
    copy.set_id(12);
    copy.clear_deps();
    for (uint64_t d : deps) copy.add_deps(d);
    auto* ops = t.mutable_op();
    *ops->Add() = copy;
    for (int i = ops->size() - 1; i > 0 && ops->Get(i - 1).id() > 12; --i) ops->SwapElements(i, i - 1);
  };
  EXPECT_EQ(check_changed([&](TraceText& t) { resume_blend_at_12(t, {1, 9}); }), "ok");
  EXPECT_EQ(check_changed([&](TraceText& t) { resume_blend_at_12(t, {9, 10}); }),
            "t.trace: op 12: depends on op 10, which is not an earlier op of program PRECOMPUTED_BLEND");
  EXPECT_EQ(check_changed([&](TraceText& t) { op_with_id(t, 20).add_deps(15); }),
            "t.trace: op 20: depends on op 15, which is not an earlier op of program MICROBENCHMARK");
  EXPECT_EQ(check_changed([&](TraceText& t) {
              resume_blend_at_12(t, {});
              op_with_id(t, 20).add_deps(12);
            }),
            "t.trace: op 20: depends on op 12, which is not an earlier op of program MICROBENCHMARK");
}

TEST(TraceValidator, CommonOpFields) {
  EXPECT_EQ(check_changed([](TraceText& t) { op_with_id(t, 6).clear_phase(); }), "t.trace: op 6: phase not set");
  EXPECT_EQ(check_changed([](TraceText& t) { op_with_id(t, 6).set_layer(2); }),
            "t.trace: op 6: layer 2 does not exist (model has 2 layers)");
  EXPECT_EQ(check_changed([](TraceText& t) { op_with_id(t, 11).set_decode_step(4); }),
            "t.trace: op 11: decode_step 4 is beyond request.answer_tokens 4");
  EXPECT_EQ(check_changed([](TraceText& t) { op_with_id(t, 20).clear_kind(); }),
            "t.trace: op 20: has no kind (gemm, attention, kv_load, ...)");
  EXPECT_EQ(check_changed([](TraceText& t) { op_with_id(t, 2).set_measured_duration_ns(0); }),
            "t.trace: op 2: measured_duration_ns is 0; omit it when not measured");
  EXPECT_EQ(check_changed([](TraceText& t) { op_with_id(t, 5).mutable_payloads(0)->mutable_data()->pop_back(); }),
            "t.trace: op 5: payloads[0] (q_fused) has 14 data bytes, expected 15");
}

TEST(TraceValidator, MasksMatchTheTokensTheyCover) {
  EXPECT_EQ(check_changed([](TraceText& t) {
              op_with_id(t, 5).mutable_attention()->mutable_kv(0)->mutable_tokens()->set_end(60);
            }),
            "t.trace: op 5: attention.hkvd_mask has 64 bits, expected 60 (one per token it covers)");
  EXPECT_EQ(check_changed([](TraceText& t) {
              *op_with_id(t, 5).mutable_attention()->mutable_hkvd_mask() = make_mask(std::vector<bool>(63));
            }),
            "t.trace: op 5: attention.hkvd_mask has 63 bits, expected 64 (one per token it covers)");
  EXPECT_EQ(check_changed([](TraceText& t) {
              op_with_id(t, 5).mutable_attention()->mutable_hkvd_mask()->mutable_bits()->push_back('\0');
            }),
            "t.trace: op 5: attention.hkvd_mask holds 9 bytes, expected 8 for 64 bits");
  EXPECT_EQ(check_changed([](TraceText& t) {
              HkvdSelect* h = op_with_id(t, 4).mutable_hkvd_select();
              h->set_context_tokens(60);
              *h->mutable_mask() = make_mask(std::vector<bool>(60));
              h->mutable_mask()->mutable_bits()->back() = '\x10';  // bit 60: beyond 60 bits
            }),
            "t.trace: op 4: hkvd_select.mask has bits set beyond its bit length");
  EXPECT_EQ(check_changed([](TraceText& t) { op_with_id(t, 4).mutable_hkvd_select()->set_selected_tokens(15); }),
            "t.trace: op 4: hkvd_select.selected_tokens is 15 but the mask has 16 bits set");
  EXPECT_EQ(check_changed([](TraceText& t) {
              op_with_id(t, 5).mutable_attention()->mutable_kv(0)->set_region(KV_REGION_APPENDED);
            }),
            "t.trace: op 5: attention.hkvd_mask given but no precomputed KV span to filter");
}

TEST(TraceValidator, PositionsLieWithinTheRequest) {
  // The fixture's request: 64 context + 8 query + 4 answer = 76 positions.
  EXPECT_EQ(check_changed([](TraceText& t) {
              op_with_id(t, 5).mutable_attention()->mutable_kv(1)->mutable_tokens()->set_end(77);
            }),
            "t.trace: op 5: attention.kv[1] [64, 77) goes beyond the request's 76 token positions "
            "(context + query + answer)");
  EXPECT_EQ(check_changed([](TraceText& t) {
              KvTransfer* kv = op_with_id(t, 7).mutable_kv_append();
              kv->mutable_tokens()->set_end(80);
              kv->set_bytes(16 * 128);
            }),
            "t.trace: op 7: kv_append.tokens [64, 80) goes beyond the request's 76 token positions "
            "(context + query + answer)");
  EXPECT_EQ(check_changed([](TraceText& t) {
              HkvdSelect* h = op_with_id(t, 4).mutable_hkvd_select();
              h->set_context_tokens(72);
              *h->mutable_mask() = make_mask(std::vector<bool>(72));
              h->set_selected_tokens(0);
            }),
            "t.trace: op 4: hkvd_select.context_tokens is 72 but the request has only 64 context tokens");
  EXPECT_EQ(check_changed([](TraceText& t) { op_with_id(t, 11).mutable_dict_attention()->set_window_tokens(13); }),
            "t.trace: op 11: dict_attention sees 64 + 13 tokens, more than the request's 76 token positions");
}

TEST(TraceValidator, SizesMustBeMeaningful) {
  EXPECT_EQ(check_changed([](TraceText& t) { op_with_id(t, 2).mutable_gemm()->set_k(0); }),
            "t.trace: op 2: gemm.k is 0; must be > 0");
  EXPECT_EQ(check_changed([](TraceText& t) {
              op_with_id(t, 2).mutable_gemm()->set_m(static_cast<uint64_t>(int64_t{-5}));  // negative from a bad producer
            }),
            "t.trace: op 2: gemm.m is 18446744073709551611; exceeds the limit 1125899906842624");
  EXPECT_EQ(check_changed([](TraceText& t) { op_with_id(t, 2).mutable_gemm()->clear_b_dtype(); }),
            "t.trace: op 2: gemm dtypes (a_dtype, b_dtype, out_dtype) must all be set");
  EXPECT_EQ(check_changed([](TraceText& t) { op_with_id(t, 6).mutable_nonlinear()->set_elements(0); }),
            "t.trace: op 6: nonlinear.elements is 0; must be > 0");
  EXPECT_EQ(check_changed([](TraceText& t) { op_with_id(t, 5).mutable_attention()->set_query_rows(0); }),
            "t.trace: op 5: attention.query_rows is 0; must be > 0");
  EXPECT_EQ(check_changed([](TraceText& t) { op_with_id(t, 5).mutable_attention()->clear_kv(); }),
            "t.trace: op 5: attention sees no KV (attention.kv is empty)");
  EXPECT_EQ(check_changed([](TraceText& t) {
              op_with_id(t, 5).mutable_attention()->mutable_kv(1)->mutable_tokens()->set_begin(63);
            }),
            "t.trace: op 5: attention.kv[1] overlaps attention.kv[0]");
  EXPECT_EQ(check_changed([](TraceText& t) {
              op_with_id(t, 3).mutable_kv_load()->mutable_tokens()->set_begin(64);
            }),
            "t.trace: op 3: kv_load.tokens [64, 64) is empty");
  EXPECT_EQ(check_changed([](TraceText& t) { op_with_id(t, 3).mutable_kv_load()->set_bytes(8000); }),
            "t.trace: op 3: kv_load.bytes is 8000 but 64 tokens of KV_FP16 KV_PARTS_K_AND_V are 8192 bytes");
  EXPECT_EQ(check_changed([](TraceText& t) { op_with_id(t, 9).mutable_kv_append()->set_bytes(64 * 128); }),
            "t.trace: op 9: kv_append.bytes is 8192 but 16 tokens of KV_FP16 KV_PARTS_K_AND_V are 2048 bytes");
  EXPECT_EQ(check_changed([](TraceText& t) {
              op_with_id(t, 9).mutable_kv_append()->mutable_tokens()->set_end(72);
            }),
            "t.trace: op 9: kv_append.token_mask has 64 bits, expected 72 (one per token it covers)");
  EXPECT_EQ(check_changed([](TraceText& t) {
              *op_with_id(t, 9).mutable_kv_append()->mutable_token_mask() = make_mask(std::vector<bool>(64));
            }),
            "t.trace: op 9: kv_append.token_mask selects no token");
  EXPECT_EQ(check_changed([](TraceText& t) { op_with_id(t, 3).clear_layer(); }),
            "t.trace: op 3: kv_load needs a layer");
  EXPECT_EQ(check_changed([](TraceText& t) {
              op_with_id(t, 7).mutable_kv_append()->set_region(KV_REGION_PRECOMPUTED);
            }),
            "t.trace: op 7: kv_append.region must be KV_REGION_APPENDED (precomputed KV is never modified)");
  EXPECT_EQ(check_changed([](TraceText& t) { op_with_id(t, 10).mutable_dict_encode()->set_pursuit_iterations(300); }),
            "t.trace: op 10: dict_encode.pursuit_iterations is 300; exceeds the limit 256");
  EXPECT_EQ(check_changed([](TraceText& t) { op_with_id(t, 11).mutable_dict_attention()->set_k_high(2); }),
            "t.trace: op 11: dict_attention needs 1 <= k_low <= k_high <= atoms, got 3, 2, 256");
  EXPECT_EQ(check_changed([](TraceText& t) { op_with_id(t, 11).mutable_dict_attention()->set_refine_fraction(-0.1); }),
            "t.trace: op 11: dict_attention.refine_fraction is -0.100000; must be within 0..1");
  EXPECT_EQ(check_changed([](TraceText& t) { op_with_id(t, 8).mutable_lm_head()->set_rows(0); }),
            "t.trace: op 8: lm_head.rows is 0; must be > 0");
  EXPECT_EQ(check_changed([](TraceText& t) { op_with_id(t, 1).mutable_embedding()->clear_dtype(); }),
            "t.trace: op 1: embedding.dtype not set");
}
