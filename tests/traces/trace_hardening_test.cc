// Hardening of traces/: the KV data flow the runtime relies on, and the format
// 1.2 record checksums (1.0 files still read).
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "common/error.h"
#include "tests/traces/trace_fixtures.h"
#include "traces/trace_io.h"
#include "traces/trace_validator.h"

using namespace ispsim::trace;
using namespace ispsim::trace::testing;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ispsim::BadInput& e) {
    return e.what();
  }
  return "ok";
}

// A fused-prefill layer: kv_append (id 5) then the attention reading it (id 6).
TraceText fused_layer() {
  TraceText t = every_kind_trace();
  t.clear_op();
  Header& h = *t.mutable_header();
  h.clear_programs();
  h.add_programs()->set_program(PRECOMPUTED_BLEND);
  auto add = [&](uint64_t id, std::vector<uint64_t> deps) {
    Op* op = t.add_op();
    op->set_id(id);
    op->set_program(PRECOMPUTED_BLEND);
    op->set_phase(PHASE_FUSED_PREFILL);
    op->set_layer(1);
    for (uint64_t d : deps) op->add_deps(d);
    return op;
  };
  KvTransfer* kv = add(5, {})->mutable_kv_append();
  kv->mutable_tokens()->set_begin(64);
  kv->mutable_tokens()->set_end(72);
  kv->set_bytes(8 * 128);
  kv->set_region(KV_REGION_APPENDED);
  kv->set_parts(KV_PARTS_K_AND_V);
  Attention* a = add(6, {5})->mutable_attention();
  a->set_query_rows(8);
  KvSpan* s = a->add_kv();
  s->mutable_tokens()->set_begin(64);
  s->mutable_tokens()->set_end(72);
  s->set_region(KV_REGION_APPENDED);
  a->set_dtype(DTYPE_FP16);
  return t;
}

std::string check(const TraceText& t) {
  return error_of([&] {
    TraceValidator v("t.trace");
    v.check_header(t.header());
    for (const Op& op : t.op()) v.check_op(op);
    v.check_end(false);
  });
}

}  // namespace

TEST(TraceDataflow, AppendThenDependentAttentionIsValid) { EXPECT_EQ(check(fused_layer()), "ok"); }

TEST(TraceDataflow, AttentionMustDependOnTheAppendItReads) {
  TraceText t = fused_layer();
  t.mutable_op(1)->clear_deps();
  EXPECT_EQ(check(t), "t.trace: op 6: attention does not depend on kv_append op 5 of layer 1 in fused_prefill, so it "
                      "may read that KV before it is appended");
}

TEST(TraceDataflow, AppendedTokensMustBeKvTheAttentionReads) {
  TraceText t = fused_layer();
  t.mutable_op(1)->mutable_attention()->mutable_kv(0)->mutable_tokens()->set_begin(68);
  EXPECT_EQ(check(t), "t.trace: op 6: attention reads 4 appended KV tokens (appended spans + HKVD mask bits) but "
                      "kv_append op(s) 5 appended 8 tokens for it");
}

// What the runtime looks up when the attention runs (attention_kv_problem).
TEST(TraceDataflow, AttentionReadsOnlyKvItsLayerWasGiven) {
  TraceText t = fused_layer();
  t.mutable_op(1)->mutable_attention()->mutable_kv(0)->mutable_tokens()->set_begin(63);
  EXPECT_EQ(check(t), "t.trace: op 6: attention reads 9 appended KV tokens (appended spans + HKVD mask bits) but the "
                      "kv_append ops of its layer before it appended 8");
  t = fused_layer();
  t.mutable_op(1)->mutable_attention()->set_query_rows(9);
  EXPECT_EQ(check(t), "t.trace: op 6: attention.query_rows is 9 but it reads only 8 appended KV tokens (the query "
                      "rows are the last appended entries)");
  t = fused_layer();
  Attention& a = *t.mutable_op(1)->mutable_attention();
  a.mutable_kv(0)->mutable_tokens()->set_begin(65);
  a.mutable_kv(0)->mutable_tokens()->set_end(73);
  KvSpan& precomputed = *a.add_kv();
  precomputed.mutable_tokens()->set_end(65);
  precomputed.set_region(KV_REGION_PRECOMPUTED);
  EXPECT_EQ(check(t), "t.trace: op 6: attention reads precomputed KV up to token 65 but the context has 64 tokens");
}

TEST(TraceDataflow, AnAppendNoAttentionReadsIsRejectedAtTheEnd) {
  TraceText t = fused_layer();
  t.mutable_op()->RemoveLast();
  EXPECT_EQ(check(t), "t.trace: op 5: kv_append of layer 1 in fused_prefill is read by no later attention of that "
                      "layer and phase");
}

TEST(TraceDataflow, HkvdMaskMustSelectTheSelectedCount) {
  TraceText t = every_kind_trace();
  for (Op& op : *t.mutable_op())
    if (op.has_attention() && op.attention().has_hkvd_mask()) {
      std::string& bits = *op.mutable_attention()->mutable_hkvd_mask()->mutable_bits();
      for (char& c : bits)
        if (c) {
          c = static_cast<char>(c & (c - 1));  // one selected token less
          break;
        }
    }
  EXPECT_NE(check(t).find("attention.hkvd_mask has 15 bits set but the program's hkvd_select selected 16 tokens"),
            std::string::npos)
      << check(t);
}

TEST(TraceChecksum, Format12DetectsEveryByteChangedInARecordBody) {
  TraceText t = every_kind_trace();
  t.mutable_header()->mutable_version()->set_minor(2);
  const std::string path = scratch_dir("crc") + "/t.trace";
  write_trace(path, t);
  const std::string good = read_file(path);
  EXPECT_EQ(read_trace(path).op_size(), t.op_size());
  // Every byte after the magic: a changed byte is always an error (checksum,
  // framing or validation), never a silently different trace.
  int checksum_errors = 0;
  for (size_t i = kTraceMagicSize; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x20);
    write_file(path, bad);
    const std::string e = error_of([&] { read_trace(path); });
    EXPECT_NE(e, "ok") << "byte " << i;
    checksum_errors += e.find("CRC-32C") != std::string::npos;
  }
  EXPECT_GT(checksum_errors, static_cast<int>(good.size() / 2));
}

TEST(TraceChecksum, OlderFormatsAreReadWithoutChecksums) {
  TraceText t = every_kind_trace();  // format 1.0
  const std::string path = scratch_dir("v10") + "/t.trace";
  write_trace(path, t);
  const TraceText back = read_trace(path);
  EXPECT_EQ(back.header().version().minor(), 0u);
  EXPECT_EQ(back.op_size(), t.op_size());
  EXPECT_EQ(back.op(0).crc32c(), 0u);
}

TEST(TraceChecksum, AChecksumInAnOlderFormatIsACorruptVersion) {
  TraceText t = every_kind_trace();
  t.mutable_header()->mutable_version()->set_minor(2);
  const std::string path = scratch_dir("downgraded") + "/t.trace";
  write_trace(path, t);
  std::string bytes = read_file(path);
  // The header's version.minor (field 2 of FormatVersion = 0x10, value 2) set back to 1.
  const auto at = bytes.find(std::string("\x10\x02", 2), kTraceMagicSize);
  ASSERT_NE(at, std::string::npos);
  bytes[at + 1] = 1;
  write_file(path, bytes);
  EXPECT_NE(error_of([&] { read_trace(path); }).find("carries a checksum but declares format 1.1"), std::string::npos);
}
