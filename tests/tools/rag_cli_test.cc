// The RAG commands end to end through the CLI: a KV store from the demo set, an
// engine-emitted trace, `compare` on every MemLLM platform, and the bad inputs
// of `trace gen --engine` and `engine blend-quality`.
#include <gtest/gtest.h>

#include "tests/support/cli.h"

namespace ispsim::testing {
namespace {

const char* kDocs = "ch16-1,ch16-2,cj76-2,ca10-1,ca10-2";
const char* kQuery = "How were Du Pont products promoted in the General Motors market?";

std::string make_store() {
  const std::string store = (scratch_dir() / "store").string();
  const CliResult r = run_cli("engine precompute --model assets/brown-llama --docs assets/rag-demo/docs.jsonl --out " +
                              shell_quote(store));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return store;
}

TEST(RagEndToEndCli, EngineTraceRunsOnEveryPlatform) {
  const std::string store = make_store();
  const std::string trace = (scratch_dir() / "engine.trace").string();
  const CliResult gen = run_cli("trace gen --engine --model assets/brown-llama --store " + shell_quote(store) +
                                " --docs " + kDocs + " --query " + shell_quote(kQuery) + " --tokens 4 --out " +
                                shell_quote(trace));
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  const CliResult cmp = run_cli("compare --trace " + shell_quote(trace) + " --format csv");
  ASSERT_EQ(cmp.exit_code, 0) << cmp.err;
  for (const char* name : {"GPU-FullCompute", "GPU-PreCompute", "MemLLM-Base", "MemLLM-Fused", "MemLLM-PerCh", "MemLLM"})
    EXPECT_NE(cmp.out.find(std::string("\n") + name + ","), std::string::npos) << name;
  EXPECT_EQ(cmp.out.find("out_of_memory"), std::string::npos);
  EXPECT_EQ(cmp.out.find("failed"), std::string::npos);
}

TEST(RagEndToEndCli, BadInputGivesOneLineAndExitCode2) {
  const std::string store = make_store();
  const std::string trace = (scratch_dir() / "t.trace").string();
  struct Case {
    std::string args, expect;
  };
  for (const Case& c : std::vector<Case>{
           {"trace gen --engine --model assets/brown-llama --store " + shell_quote(store) +
                " --docs ch16-1,nosuchdoc --query " + shell_quote(kQuery) + " --out " + shell_quote(trace),
            "nosuchdoc"},
           {"trace gen --engine --model assets/brown-llama --store /nonexistent --docs ch16-1 --query x --out " +
                shell_quote(trace),
            "/nonexistent"},
           {"engine blend-quality --model assets/brown-llama --store " + shell_quote(store) +
                " --queries /nonexistent.jsonl",
            "/nonexistent.jsonl"},
           {"engine blend-quality --model assets/brown-llama --store /nonexistent --queries assets/rag-demo/queries.jsonl",
            "/nonexistent"},
       }) {
    SCOPED_TRACE(c.args);
    const CliResult r = run_cli(c.args);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err_lines(), 1) << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(trace)) << "no half-written trace";
}

}  // namespace
}  // namespace ispsim::testing
