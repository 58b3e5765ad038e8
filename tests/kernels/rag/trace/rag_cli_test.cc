// `ispsim engine blend-quality` and `ispsim trace gen --engine` on the demo
// model and the demo set (assets/rag-demo). The command functions are called
// directly (tools/ispsim/cmd_engine_rag.cc is compiled into this test): bad
// input must surface as one BadInput, which main() turns into one line and exit 2.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <fstream>
#include <string>
#include <vector>

#include "common/error.h"
#include "kernels/model/model.h"
#include "kernels/model/tokenizer.h"
#include "kernels/rag/blend.h"
#include "kernels/rag/trace/engine_trace.h"
#include "tests/support/cli.h"
#include "tools/ispsim/cmd_engine_rag.h"
#include "traces/trace_io.h"

namespace ispsim::rag {
namespace {

namespace fs = std::filesystem;
using ispsim::testing::scratch_dir;

const std::string kSource = ISPSIM_SOURCE_DIR;
const std::string kModel = kSource + "/assets/brown-llama";
const std::string kCalib = kSource + "/kernels/int/data/brown_calibration.txt";

// A store of the demo documents made by `ispsim engine precompute` (each
// document starts with BOS there), FP32 or int16 with its default calibration.
std::string make_store(const std::string& quant) {
  const std::string dir = (scratch_dir() / ("store_" + quant)).string();
  if (fs::exists(dir + "/index.json")) return dir;
  const ispsim::testing::CliResult r = ispsim::testing::run_cli(
      "engine precompute --model assets/brown-llama --docs assets/rag-demo/docs.jsonl --quant " + quant + " --out " +
      ispsim::testing::shell_quote(dir));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return dir;
}

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = (scratch_dir() / name).string();
  std::ofstream(path) << text;
  return path;
}

// Runs a command function with stdout captured.
std::string capture(int (*command)(const cli::Args&), const cli::Args& args) {
  ::testing::internal::CaptureStdout();
  int rc = 0;
  try {
    rc = command(args);
  } catch (...) {
    ::testing::internal::GetCapturedStdout();
    throw;
  }
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(rc, 0);
  return out;
}

// The BadInput message of a command that must fail, "" if it did not.
std::string bad_input(int (*command)(const cli::Args&), const cli::Args& args) {
  ::testing::internal::CaptureStdout();
  std::string message;
  try {
    command(args);
  } catch (const BadInput& e) {
    message = e.what();
  }
  ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  return message;
}

const char* kQuery =
    "{\"query\": \"Which atomic submarine was built on United States designs?\", "
    "\"docs\": [\"ca20-1\", \"ca20-2\", \"ca10-1\", \"ca10-2\", \"cb06-1\"]}\n";

TEST(RagCli, BlendQualityTableOnTheDemoSetFp32) {
  const std::string store = make_store("fp32");
  const std::string queries = write_file("q.jsonl", kQuery);
  const std::string out = capture(cli::engine_blend_quality,
                                  {"--model", kModel, "--store", store, "--queries", queries, "--tokens", "3"});
  // C = 26 + 32 + 36 + 24 + 32 tokens (tools/rag/make_demo_set.py's counts) + 5 BOS.
  EXPECT_NE(out.find("query 1 \"Which atomic submarine was built on United States designs?\": 155 context tokens in 5 "
                     "documents"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("0 %     0 of 155 (0.0 %)"), std::string::npos) << out;
  EXPECT_NE(out.find("15 %    23 of 155 (14.8 %)"), std::string::npos) << out;  // round(0.15 * 155) = 23
  // Ratio 100 % is the full prefill: every answer position agrees, KL at rounding level.
  EXPECT_NE(out.find("100 %   155 of 155 (100.0 %)    1 of 1 (100.0 %)          3 of 3 (100.0 %)          0.000000 nats"),
            std::string::npos)
      << out;
}

TEST(RagCli, BlendQualityIntegerIsExactAtFullRatio) {
  const std::string store = make_store("int16");
  const std::string queries = write_file("q.jsonl", kQuery);
  const std::string out =
      capture(cli::engine_blend_quality, {"--model", kModel, "--store", store, "--queries", queries, "--tokens", "2",
                                          "--quant", "int16", "--calib", kCalib, "--ratios", "0.07,1"});
  EXPECT_NE(out.find("engine int16"), std::string::npos) << out;
  EXPECT_NE(out.find("\n7 %     11 of 155 (7.1 %)"), std::string::npos) << out;  // 0.07 labelled 7 %, round(10.85)
  EXPECT_NE(out.find("100 %   155 of 155 (100.0 %)    1 of 1 (100.0 %)          2 of 2 (100.0 %)          0.000000 nats"),
            std::string::npos)
      << out;
}

TEST(RagCli, TraceGenEngineWritesTheEnginesMasks) {
  const std::string store = make_store("fp32");
  const std::string trace_path = (scratch_dir() / "engine.trace").string();
  const cli::Args args = {"--engine", "--model", kModel + "/", "--store", store, "--docs", "ch16-1,ch16-2,cj76-2",
                          "--query", "How were Du Pont products promoted?", "--ratio", "0.25", "--tokens", "4",
                          "--out", trace_path};
  const std::string out = capture(cli::trace_gen_engine, args);
  EXPECT_NE(out.find("HKVD 24 tokens per layer"), std::string::npos) << out;  // round(0.25 * (36 + 24 + 32 + 3 BOS))

  // The same request through the library gives the masks the trace must carry.
  const model::Model m = model::load_model(kModel);
  const model::Tokenizer tok(kModel + "/tokenizer.json");
  const RagModel engine = RagModel::fp32(m);
  BlendOptions o;
  o.ratio = 0.25;
  o.answer_tokens = 4;
  const EngineRun run = run_request(engine, KvStore::load(store), {"ch16-1", "ch16-2", "cj76-2"},
                                    tok.encode("How were Du Pont products promoted?"), o);
  trace::TraceReader reader(trace_path);
  EXPECT_EQ(reader.header().model().name(), "brown-llama");
  EXPECT_EQ(reader.header().request().documents(2).name(), "cj76-2");
  EXPECT_EQ(reader.header().request().query_tokens(), run.blend.query_tokens.size());
  const auto& settings = reader.header().producer().settings();
  ASSERT_GE(settings.size(), 5);
  EXPECT_EQ(settings[2].key(), "quant");
  EXPECT_EQ(settings[2].value(), "fp32");
  EXPECT_EQ(settings[4].value(), "ch16-1,ch16-2,cj76-2");
  int masks = 0;
  trace::Op op;
  while (reader.next(op)) {
    if (!op.has_attention() || !op.attention().has_hkvd_mask()) continue;
    const trace::BitVector& v = op.attention().hkvd_mask();
    std::vector<bool> bits(v.bit_length());
    for (size_t i = 0; i < bits.size(); ++i) bits[i] = (static_cast<unsigned char>(v.bits()[i / 8]) >> (i % 8)) & 1u;
    EXPECT_EQ(bits, run.blend.hkvd_masks.at(op.layer())) << "op " << op.id();
    ++masks;
  }
  EXPECT_EQ(masks, 3 * (2 + 4) + 3 * (1 + 4));  // layers 1..3; blend and fused programs

  // Deterministic: the same command again writes the same bytes.
  cli::Args again = args;
  again.back() = (scratch_dir() / "engine_again.trace").string();
  capture(cli::trace_gen_engine, again);
  EXPECT_EQ(ispsim::testing::read_text(again.back()), ispsim::testing::read_text(trace_path));
}

TEST(RagCli, BadInputsAreOneBadInputEach) {
  const std::string store = make_store("fp32");
  const std::string queries = write_file("q.jsonl", kQuery);
  const std::string out = (scratch_dir() / "x.trace").string();
  auto gen = [&](const std::string& docs, const std::string& query, const std::vector<std::string>& extra = {}) {
    cli::Args a = {"--engine", "--model", kModel, "--store", store, "--docs", docs, "--query", query, "--out", out};
    a.insert(a.end(), extra.begin(), extra.end());
    return bad_input(cli::trace_gen_engine, a);
  };
  EXPECT_NE(gen("ca10-1,nope", "Who?").find("nope"), std::string::npos);
  EXPECT_NE(gen("ca10-1,,ca10-2", "Who?").find("--docs: empty document id"), std::string::npos);
  EXPECT_NE(gen("ca10-1", "Who?", {"--ratio", "1.5"}).find("--ratio: 1.5 is not within 0..1"), std::string::npos);
  EXPECT_NE(gen("ca10-1", "Who?", {"--ratio", "0.01"}).find("--ratio"), std::string::npos);  // H = 0
  EXPECT_NE(gen("ca10-1", "Who?", {"--tokens", "0"}).find("--tokens: must be >= 1"), std::string::npos);
  EXPECT_NE(gen("ca10-1", "Who?", {"--quant", "int16", "--calib", kCalib}), "");  // fp32 store, int16 engine
  std::string long_query;
  for (int i = 0; i < 300; ++i) long_query += " word";
  EXPECT_NE(gen("ca10-1", long_query), "");  // longer than the 256-token context
  EXPECT_FALSE(fs::exists(out));

  auto quality = [&](const std::string& file, const std::vector<std::string>& extra = {}) {
    cli::Args a = {"--model", kModel, "--store", store, "--queries", file};
    a.insert(a.end(), extra.begin(), extra.end());
    return bad_input(cli::engine_blend_quality, a);
  };
  EXPECT_NE(quality(write_file("a.jsonl", "{\"query\": \"x\"}\n")).find("a.jsonl:1: missing \"docs\""), std::string::npos);
  EXPECT_NE(quality(write_file("b.jsonl", "\n{\"query\": \"x\", \"docs\": [\"ca10-1\"], \"k\": 1}\n"))
                .find("b.jsonl:2: unknown key \"k\""),
            std::string::npos);
  EXPECT_NE(quality(write_file("c.jsonl", "{\"query\": \"x\", \n")).find("c.jsonl:1: not JSON"), std::string::npos);
  EXPECT_NE(quality(write_file("d.jsonl", "")).find("d.jsonl: no queries"), std::string::npos);
  EXPECT_NE(quality(write_file("e.jsonl", "{\"query\": \"x\", \"docs\": [\"missing\"]}\n")).find("missing"),
            std::string::npos);
  EXPECT_NE(quality(queries, {"--ratios", "0,2"}).find("--ratios: 2 is not within 0..1"), std::string::npos);
  EXPECT_NE(quality(queries, {"--ratios", "0,"}).find("--ratios"), std::string::npos);
  EXPECT_NE(quality((scratch_dir() / "none.jsonl").string()).find("no such file"), std::string::npos);
  EXPECT_NE(bad_input(cli::engine_blend_quality, {"--store", store}).find("queries"), std::string::npos);
}

}  // namespace
}  // namespace ispsim::rag
