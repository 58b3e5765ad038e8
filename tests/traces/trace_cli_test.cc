// `ispsim trace dump | stats | pack` through the real CLI binary: the committed
// sample, and bad inputs (exit code 2, exactly one stderr line naming the file
// and the problem, no output file left behind).
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/support/cli.h"
#include "tests/traces/trace_fixtures.h"
#include "traces/trace_io.h"

namespace fs = std::filesystem;
using namespace ispsim::trace;
using namespace ispsim::trace::testing;
using ispsim::testing::CliResult;
using ispsim::testing::run_cli;

namespace {

const std::string kSampleText = std::string(ISPSIM_SOURCE_DIR) + "/traces/samples/nand_stream.txtpb";
const std::string kSampleBinary = std::string(ISPSIM_SOURCE_DIR) + "/traces/samples/nand_stream.trace";

// The error contract: exit code 2 and one line "ispsim: error: <file>[:line:col]: ...<problem>...".
void expect_bad_input(const CliResult& r, const std::string& file, const std::string& problem) {
  EXPECT_EQ(r.exit_code, 2);
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "more than one stderr line:\n" << r.err;
  EXPECT_EQ(r.err.rfind("ispsim: error: " + file, 0), 0u) << r.err;
  EXPECT_NE(r.err.find(problem), std::string::npos) << r.err;
}

// Writes a binary trace whose header is `header` serialized verbatim (the writer
// itself refuses invalid headers), followed by the ops of the small fixture.
std::string raw_trace(const Header& header) {
  std::string bytes(kTraceMagic, kTraceMagicSize);
  auto record = [&bytes](const std::string& body) {
    uint64_t n = body.size();
    while (n >= 0x80) {
      bytes.push_back(static_cast<char>((n & 0x7f) | 0x80));
      n >>= 7;
    }
    bytes.push_back(static_cast<char>(n));
    bytes += body;
  };
  record(header.SerializeAsString());
  return bytes;
}

// The small sample text with `from` replaced by `to` (which must occur).
std::string edited_sample(const std::string& from, const std::string& to) {
  std::string text = read_file(kSampleText);
  const size_t at = text.find(from);
  if (at == std::string::npos) throw std::logic_error("sample has no '" + from + "'");
  return text.replace(at, from.size(), to);
}

// `ispsim trace pack` of the small sample with `from` replaced by `to`, in a
// scratch directory named `test_name`: refused with `problem` at `position`
// ("line:col: ") of the input, and no output written. Returns the directory.
std::string expect_edited_sample_refused(const std::string& test_name, const std::string& from, const std::string& to,
                                         const std::string& position, const std::string& problem) {
  const std::string dir = scratch_dir(test_name);
  write_file(dir + "/in.txtpb", edited_sample(from, to));
  expect_bad_input(run_cli("trace pack " + dir + "/in.txtpb " + dir + "/out.trace"), dir + "/in.txtpb:" + position,
                   problem);
  EXPECT_FALSE(fs::exists(dir + "/out.trace"));
  return dir;
}

}  // namespace

TEST(TraceCli, PackingEachSampleGivesTheCommittedBytes) {
  const std::string dir = scratch_dir("cli_pack_sample");
  int samples = 0;
  for (const auto& entry : fs::directory_iterator(std::string(ISPSIM_SOURCE_DIR) + "/traces/samples")) {
    if (entry.path().extension() != ".txtpb") continue;
    ++samples;
    fs::path binary = entry.path();
    binary.replace_extension(".trace");
    const CliResult r = run_cli("trace pack " + entry.path().string() + " " + dir + "/out.trace");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    ASSERT_TRUE(fs::exists(binary)) << binary << " is not committed";
    EXPECT_EQ(read_file(dir + "/out.trace"), read_file(binary.string()))
        << binary << " is stale: re-pack it (see traces/README.md)";
  }
  EXPECT_GE(samples, 1);
}

TEST(TraceCli, DumpTextPacksBackToTheSameBytes) {
  const std::string dir = scratch_dir("cli_dump_text");
  const CliResult dump = run_cli("trace dump --text " + kSampleBinary);
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  write_file(dir + "/again.txtpb", dump.out);
  const CliResult pack = run_cli("trace pack " + dir + "/again.txtpb " + dir + "/again.trace");
  ASSERT_EQ(pack.exit_code, 0) << pack.err;
  EXPECT_EQ(read_file(dir + "/again.trace"), read_file(kSampleBinary));
}

TEST(TraceCli, DumpPrintsOneLinePerOp) {
  const CliResult r = run_cli("trace dump " + kSampleBinary);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("program   MICROBENCHMARK: 5 ops"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("op 0 MICROBENCHMARK layer 0 other | kv_load tokens [0, 4096) = 4096 tokens, precomputed, "
                       "k_and_v, 3145728 B (3.000 MiB) | deps [] | \"stream layer 0\"\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("op 4 MICROBENCHMARK layer 0 other | kv_append tokens [4096, 4160) = 64 tokens, appended, "
                       "k_and_v, 49152 B (0.047 MiB) | deps [0] | \"append query KV of layer 0\"\n"),
            std::string::npos)
      << r.out;
}

TEST(TraceCli, StatsCountsBytesWithUnits) {
  const CliResult r = run_cli("trace stats " + kSampleBinary);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // 4 layers x 4096 tokens x 768 B; one 64-token append of 768 B per token.
  EXPECT_NE(r.out.find("MICROBENCHMARK: 5 ops\n"
                       "  ops by phase: other 5\n"
                       "  ops by kind: kv_append 1, kv_load 4\n"
                       "  KV load:   16384 token-layers, 12582912 B (12.000 MiB)\n"
                       "  KV append: 64 token-layers, 49152 B (0.047 MiB)\n"
                       "  GEMM/GEMV: 0 FLOP\n"),
            std::string::npos)
      << r.out;
}

TEST(TraceCli, StatsReportsGemmFlops) {
  const std::string dir = scratch_dir("cli_stats_flops");
  write_trace(dir + "/all.trace", every_kind_trace());
  const CliResult r = run_cli("trace stats " + dir + "/all.trace");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // KV: load 64 tokens x 128 B; appends 24 entries, then 8 query tokens + 16 masked HKVD tokens, 128 B each.
  // Op 2: 2 x 72 x 128 x 64 = 1179648 FLOP; LM head: 2 x 1 x 64 x 100 = 12800 FLOP.
  EXPECT_NE(r.out.find("  KV load:   64 token-layers, 8192 B (0.008 MiB)\n"
                       "  KV append: 48 token-layers, 6144 B (0.006 MiB)\n"
                       "  GEMM/GEMV: 1179648 FLOP (1.180 MFLOP)\n"
                       "  LM head:   12800 FLOP (12.800 kFLOP)\n"
                       "  measured:  1 ops, 1500 ns\n"
                       "  payloads:  15 B (0.000 MiB)\n"),
            std::string::npos)
      << r.out;
}

TEST(TraceCli, HelpWorks) {
  for (const char* args : {"trace --help", "trace dump --help", "trace pack --help"}) {
    const CliResult r = run_cli(args);
    EXPECT_EQ(r.exit_code, 0) << args;
    EXPECT_NE(r.out.find("usage: ispsim trace"), std::string::npos) << args;
  }
}

// ---------------------------------------------------------------- bad inputs

TEST(TraceCliBadInput, MissingFile) {
  const std::string dir = scratch_dir("bad_missing");
  expect_bad_input(run_cli("trace dump " + dir + "/nope.trace"), dir + "/nope.trace: ", "no such file");
}

TEST(TraceCliBadInput, EmptyFile) {
  const std::string dir = scratch_dir("bad_empty");
  write_file(dir + "/empty.trace", "");
  expect_bad_input(run_cli("trace stats " + dir + "/empty.trace"), dir + "/empty.trace", "empty file");
}

TEST(TraceCliBadInput, DirectoryInsteadOfFile) {
  const std::string dir = scratch_dir("bad_directory");
  expect_bad_input(run_cli("trace dump " + dir), dir + ": ", "is a directory, not a trace file");
  expect_bad_input(run_cli("trace stats " + dir), dir + ": ", "is a directory, not a trace file");
  expect_bad_input(run_cli("trace pack " + dir + " " + dir + "/out.trace"), dir + ": ",
                   "is a directory, not a text trace");
  EXPECT_TRUE(fs::is_empty(dir));
}

TEST(TraceCliBadInput, BadMagic) {
  const std::string dir = scratch_dir("bad_magic");
  std::string bytes = read_file(kSampleBinary);
  bytes[1] = 'X';
  write_file(dir + "/x.trace", bytes);
  expect_bad_input(run_cli("trace dump " + dir + "/x.trace"), dir + "/x.trace", "bad magic bytes");
}

TEST(TraceCliBadInput, TextTraceGivenToDumpGetsAHint) {
  expect_bad_input(run_cli("trace dump " + kSampleText), kSampleText, "ispsim trace pack");
}

TEST(TraceCliBadInput, WrongMajorVersion) {
  const std::string dir = scratch_dir("bad_version");
  Header header = small_header();
  header.mutable_version()->set_major(2);
  write_file(dir + "/v2.trace", raw_trace(header));
  expect_bad_input(run_cli("trace dump " + dir + "/v2.trace"), dir + "/v2.trace",
                   "unsupported format version 2.0");
}

TEST(TraceCliBadInput, TruncatedHeader) {
  const std::string dir = scratch_dir("bad_trunc_header");
  write_file(dir + "/t.trace", read_file(kSampleBinary).substr(0, 40));
  expect_bad_input(run_cli("trace stats " + dir + "/t.trace"), dir + "/t.trace", "truncated in the header");
}

TEST(TraceCliBadInput, TruncatedOp) {
  const std::string dir = scratch_dir("bad_trunc_op");
  const std::string bytes = read_file(kSampleBinary);
  write_file(dir + "/t.trace", bytes.substr(0, bytes.size() - 5));
  const CliResult r = run_cli("trace dump " + dir + "/t.trace");
  expect_bad_input(r, dir + "/t.trace", "truncated in op record #5");
  EXPECT_NE(r.out.find("op 3 MICROBENCHMARK"), std::string::npos) << "dump streams the ops before the damage";
}

TEST(TraceCliBadInput, CutBetweenOps) {
  // Drop the last op record entirely: only the header's op count reveals it.
  const std::string dir = scratch_dir("bad_cut_between");
  const TraceText t = every_kind_trace();
  write_trace(dir + "/full.trace", t);
  const size_t last_record = t.op(t.op_size() - 1).ByteSizeLong() + 1;  // 1-byte length prefix
  ASSERT_LT(last_record, 128u);
  const std::string full = read_file(dir + "/full.trace");
  write_file(dir + "/cut.trace", full.substr(0, full.size() - last_record));
  expect_bad_input(run_cli("trace stats " + dir + "/cut.trace"), dir + "/cut.trace",
                   "program MICROBENCHMARK declares 1 ops in the header, but the trace ends after 0");
}

TEST(TraceCliBadInput, MaskLengthNotMatchingTokenCount) {
  const std::string dir = scratch_dir("bad_mask");
  TraceText t = every_kind_trace();
  *t.mutable_op(5)->mutable_attention()->mutable_hkvd_mask() = make_mask(std::vector<bool>(70));
  std::string text;
  ASSERT_TRUE(google::protobuf::TextFormat::PrintToString(t, &text));
  write_file(dir + "/mask.txtpb", text);
  expect_bad_input(run_cli("trace pack " + dir + "/mask.txtpb " + dir + "/out.trace"), dir + "/mask.txtpb:",
                   "op 5: attention.hkvd_mask has 70 bits, expected 64");
  EXPECT_FALSE(fs::exists(dir + "/out.trace"));
}

TEST(TraceCliBadInput, DependencyOnALaterOp) {
  // The error points at the op's line in the text file.
  const std::string dir = expect_edited_sample_refused("bad_dep", "deps: 0", "deps: 7", "67:1: ",
                                                       "op 4: depends on op 7, which is not an earlier op");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1) << "only the input remains";
}

TEST(TraceCliBadInput, UndeclaredProgram) {
  expect_edited_sample_refused("bad_program", "id: 2 program: MICROBENCHMARK", "id: 2 program: DECODE_ONLY", "59:1: ",
                               "op 2: program DECODE_ONLY is not declared in the header");
}

TEST(TraceCliBadInput, UnknownFieldInText) {
  expect_edited_sample_refused("bad_field", "query_tokens: 64", "query_tokens: 64 colour: 3", "36:28: ",
                               "no field named \"colour\"");
}

TEST(TraceCliBadInput, NegativeSizeInText) {
  expect_edited_sample_refused("bad_negative", "bytes: 49152", "bytes: -49152", "70:55: ", "Expected integer");
}

TEST(TraceCliBadInput, UnwritableOutput) {
  expect_bad_input(run_cli("trace pack " + kSampleText + " /nonexistent-dir/out.trace"),
                   "/nonexistent-dir/out.trace", "cannot open for writing");
  // An existing directory as the output.
  const std::string dir = scratch_dir("pack_into_directory");
  fs::create_directories(dir + "/out.trace");
  expect_bad_input(run_cli("trace pack " + kSampleText + " " + dir + "/out.trace"), dir + "/out.trace: ",
                   "is a directory, not an output file");
  EXPECT_TRUE(fs::is_empty(dir + "/out.trace"));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1) << "no temporary file left";
}

TEST(TraceCliBadInput, UnknownActionAndOption) {
  expect_bad_input(run_cli("trace frobnicate"), "ispsim trace", "unknown action 'frobnicate'");
  expect_bad_input(run_cli("trace"), "ispsim trace", "missing the action");
  expect_bad_input(run_cli("trace dump --colour " + kSampleBinary), "ispsim trace dump", "colour");
  expect_bad_input(run_cli("trace pack " + kSampleText), "ispsim trace pack", "missing the output argument");
  expect_bad_input(run_cli("trace stats"), "ispsim trace stats", "missing the file argument");
  expect_bad_input(run_cli("trace dump a b"), "ispsim trace dump", "too many positional options");
}
