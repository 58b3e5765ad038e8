// Sweep results as files: a run's result reads back as it was written, and its
// JSON stays valid UTF-8 when a message holds raw bytes (a path's, say).
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/support/files.h"
#include "tools/ispsim/sweep/results.h"

namespace ispsim::sweep {
namespace {

TEST(SweepResults, RawBytesInAMessageAreWrittenAsTextAndReadBack) {
  const std::string out = (testing::scratch_dir() / "results_utf8").string();
  std::filesystem::create_directories(out + "/runs");
  RunResult r;
  r.id = "0123456789abcdef";
  r.system = "MemLLM";
  r.status = "error";
  r.message = std::string("cannot open /tmp/caf\xe9\xff/x.trace; caf\xc3\xa9 is fine");  // Latin-1 byte, 0xff; then UTF-8
  r.version = "0.1.0";
  save_result(out, r);
  std::ifstream in(out + "/runs/" + r.id + ".json", std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  boost::system::error_code ec;
  boost::json::parse(text.str(), ec);
  EXPECT_FALSE(ec) << text.str();
  const std::optional<RunResult> back = load_result(out, r.id);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->message, "cannot open /tmp/caf\\xe9\\xff/x.trace; caf\xc3\xa9 is fine");
  EXPECT_EQ(back->status, "error");
}

// A run's provenance reads back; a result of a version before provenance still reads.
TEST(SweepResults, ProvenanceReadsBackAndOlderResultsStillRead) {
  RunResult r;
  r.id = "fedcba9876543210";
  r.system = "MemLLM";
  r.status = "ok";
  r.metrics = {{"latency_s", 0.125}};
  r.version = "0.1.0";
  r.configuration = "name: \"MemLLM\"\n";
  r.trace_sha1 = std::string(40, 'a');
  const RunResult back = result_from_json(result_to_json(r), "test");
  EXPECT_EQ(back.configuration, r.configuration);
  EXPECT_EQ(back.trace_sha1, r.trace_sha1);
  EXPECT_EQ(back.metrics, r.metrics);
  const RunResult old = result_from_json(
      R"({"id":"x","system":"s","status":"ok","message":"","metrics":{"latency_ms":1},"version":"0.0.9"})", "old");
  EXPECT_TRUE(old.configuration.empty());
  EXPECT_TRUE(old.trace_sha1.empty());
}

}  // namespace
}  // namespace ispsim::sweep
