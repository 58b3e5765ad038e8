// Binary round trips, truncation anywhere, and a large streamed trace.
#include "traces/trace_io.h"

#include <google/protobuf/text_format.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <set>

#include "common/error.h"
#include "tests/traces/trace_fixtures.h"
#include "traces/trace_format.h"
#include "traces/trace_stats.h"
#include "traces/trace_text.h"

namespace fs = std::filesystem;
using google::protobuf::util::MessageDifferencer;
using namespace ispsim::trace;
using namespace ispsim::trace::testing;

namespace {

// The header as written: op counts filled in by the writer.
TraceText with_counts(TraceText t) {
  for (ProgramInfo& p : *t.mutable_header()->mutable_programs()) {
    uint64_t n = 0;
    for (const Op& op : t.op()) n += op.program() == p.program();
    p.set_op_count(n);
  }
  return t;
}

}  // namespace

TEST(TraceIo, EveryOpKindRoundTrips) {
  const TraceText original = every_kind_trace();
  std::set<int> kinds;
  for (const Op& op : original.op()) kinds.insert(op.kind_case());
  EXPECT_EQ(kinds.size(), static_cast<size_t>(Op::descriptor()->FindOneofByName("kind")->field_count()))
      << "the fixture must use every op kind";

  const std::string path = scratch_dir("roundtrip") + "/all.trace";
  write_trace(path, original);
  const TraceText back = read_trace(path);
  std::string diff;
  MessageDifferencer differ;
  differ.ReportDifferencesToString(&diff);
  EXPECT_TRUE(differ.Compare(with_counts(original), back)) << diff;
  EXPECT_EQ(back.header().programs(0).op_count(), 10u);
  EXPECT_EQ(back.header().programs(1).op_count(), 2u);
  EXPECT_EQ(back.header().programs(2).op_count(), 1u);
}

TEST(TraceIo, FileStartsWithMagicThenHeader) {
  const std::string path = scratch_dir("magic") + "/t.trace";
  write_trace(path, every_kind_trace());
  const std::string bytes = read_file(path);
  ASSERT_GT(bytes.size(), kTraceMagicSize);
  EXPECT_EQ(bytes.substr(0, kTraceMagicSize), std::string(kTraceMagic, kTraceMagicSize));
}

TEST(TraceIo, WritingTwiceGivesIdenticalBytes) {
  const std::string dir = scratch_dir("deterministic");
  write_trace(dir + "/a.trace", every_kind_trace());
  write_trace(dir + "/b.trace", every_kind_trace());
  EXPECT_EQ(read_file(dir + "/a.trace"), read_file(dir + "/b.trace"));
}

TEST(TraceIo, TextFormatRoundTrips) {
  // What `ispsim trace dump --text` prints parses back to the same trace.
  const TraceText original = with_counts(every_kind_trace());
  std::string text;
  ASSERT_TRUE(google::protobuf::TextFormat::PrintToString(original, &text));
  const TraceText parsed = parse_text_trace(text, "inline");
  EXPECT_TRUE(MessageDifferencer::Equals(original, parsed));
}

TEST(TraceIo, AbandonedWriterLeavesNoFile) {
  const std::string dir = scratch_dir("abandoned");
  {
    TraceWriter writer(dir + "/x.trace", small_header());
    writer.write(every_kind_trace().op(0));
  }
  EXPECT_TRUE(fs::is_empty(dir));
}

TEST(TraceIo, WriterRejectsAnInvalidOpAndLeavesNoFile) {
  const std::string dir = scratch_dir("writer_invalid");
  try {
    TraceWriter writer(dir + "/x.trace", small_header());
    Op op = every_kind_trace().op(1);
    op.add_deps(0);  // op 1 depending on op 0, which does not exist
    writer.write(op);
    writer.close();
    FAIL() << "expected BadInput";
  } catch (const ispsim::BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("op 1: depends on op 0"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::is_empty(dir));
}

TEST(TraceIo, WriterChecksDeclaredOpCounts) {
  const std::string dir = scratch_dir("writer_counts");
  TraceText t = every_kind_trace();
  t.mutable_header()->mutable_programs(2)->set_op_count(2);  // MICROBENCHMARK has 1
  try {
    write_trace(dir + "/x.trace", t);
    FAIL() << "expected BadInput";
  } catch (const ispsim::BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("MICROBENCHMARK declares 2 ops"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::is_empty(dir));
}

TEST(TraceIo, WriterRejectsDeclaredProgramWithoutOps) {
  const std::string dir = scratch_dir("writer_empty_program");
  TraceText t = every_kind_trace();
  t.mutable_header()->add_programs()->set_program(FULL_PREFILL);
  EXPECT_THROW(write_trace(dir + "/x.trace", t), ispsim::BadInput);
  EXPECT_TRUE(fs::is_empty(dir));
}

TEST(TraceIo, EveryTruncationIsDetected) {
  // The header's op counts make even a cut exactly between two ops an error.
  const std::string dir = scratch_dir("truncation");
  write_trace(dir + "/full.trace", every_kind_trace());
  const std::string bytes = read_file(dir + "/full.trace");
  for (size_t length = 0; length < bytes.size(); ++length) {
    const std::string path = dir + "/cut" + std::to_string(length) + ".trace";  // fresh name: no ext4 flush
    write_file(path, bytes.substr(0, length));
    EXPECT_THROW(read_trace(path), ispsim::BadInput) << "cut at byte " << length;
    fs::remove(path);
  }
  EXPECT_NO_THROW(read_trace(dir + "/full.trace"));
}

TEST(TraceIo, TruncationMessagesSayWhere) {
  const std::string dir = scratch_dir("truncation_messages");
  write_trace(dir + "/full.trace", every_kind_trace());
  const std::string bytes = read_file(dir + "/full.trace");
  auto message_for = [&](size_t length) {
    write_file(dir + "/cut.trace", bytes.substr(0, length));
    try {
      read_trace(dir + "/cut.trace");
    } catch (const ispsim::BadInput& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message_for(0), dir + "/cut.trace: empty file (not a trace)");
  EXPECT_EQ(message_for(4), dir + "/cut.trace: truncated in the magic bytes");
  EXPECT_EQ(message_for(kTraceMagicSize), dir + "/cut.trace: truncated: the file ends before the header");
  EXPECT_NE(message_for(kTraceMagicSize + 3).find("truncated in the header (byte "), std::string::npos);
  EXPECT_NE(message_for(bytes.size() - 1).find("truncated in op record #13"), std::string::npos)
      << message_for(bytes.size() - 1);
}

TEST(TraceIo, LargeTraceStreams) {
  // 1e6 decode-step GEMVs chained by dependencies, written and read back one op
  // at a time. Correctness only: memory and speed are not asserted here.
  constexpr uint64_t kOps = 1000000;
  const std::string path = scratch_dir("large") + "/large.trace";
  Header header = small_header();
  header.mutable_request()->set_answer_tokens(kOps);
  {
    TraceWriter writer(path, header);
    Op op;
    op.set_program(DECODE_ONLY);
    op.set_phase(PHASE_DECODE);
    op.set_layer(1);
    Gemm* g = op.mutable_gemm();
    g->set_m(1);
    g->set_n(64);
    g->set_k(64);
    g->set_a_dtype(DTYPE_INT8);
    g->set_b_dtype(DTYPE_INT8);
    g->set_out_dtype(DTYPE_INT32);
    g->set_b_is_weight(true);
    for (uint64_t i = 0; i < kOps; ++i) {
      op.set_id(2 * i + 1);  // ids increase with gaps
      op.set_decode_step(i);
      op.clear_deps();
      if (i > 0) op.add_deps(2 * i - 1);
      writer.write(op);
    }
    // Other declared programs need ops too.
    for (uint64_t i = 0; i < 2; ++i) {
      Op load;
      load.set_id(2 * kOps + 1 + i);
      load.set_program(i == 0 ? PRECOMPUTED_BLEND : MICROBENCHMARK);
      load.set_phase(PHASE_OTHER);
      load.set_layer(0);
      KvTransfer* kv = load.mutable_kv_load();
      kv->mutable_tokens()->set_end(1);
      kv->set_bytes(128);
      kv->set_region(KV_REGION_PRECOMPUTED);
      kv->set_parts(KV_PARTS_K_AND_V);
      writer.write(load);
    }
    writer.close();
    EXPECT_EQ(writer.ops_written(), kOps + 2);
  }
  TraceReader reader(path);
  EXPECT_EQ(reader.header().programs(1).op_count(), kOps);
  TraceStats stats(reader.header());
  Op op;
  uint64_t count = 0, id_sum = 0;
  while (reader.next(op)) {
    stats.add(op);
    ++count;
    id_sum += op.id();
  }
  EXPECT_EQ(count, kOps + 2);
  EXPECT_EQ(id_sum, kOps * kOps + (2 * kOps + 1) + (2 * kOps + 2));  // sum of odd numbers = n^2
  EXPECT_EQ(stats.totals(DECODE_ONLY).ops, kOps);
  EXPECT_TRUE(stats.totals(DECODE_ONLY).gemm_flop == static_cast<unsigned __int128>(2 * 64 * 64) * kOps);
  EXPECT_FALSE(reader.next(op));
  if (!std::getenv("ISPSIM_KEEP_TEST_FILES")) fs::remove(path);  // 36 MB
}
