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

}  // namespace
}  // namespace ispsim::sweep
