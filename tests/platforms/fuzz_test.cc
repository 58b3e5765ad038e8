// Fuzz-style robustness: seeded random mutations of a valid platform file and
// random --set assignments must either load or throw BadInput; anything else
// (another exception, a crash, a hang) fails. Also runs under the asan preset.
#include <gtest/gtest.h>

#include <random>

#include "common/error.h"
#include "schema/platform_loader.h"
#include "tests/platforms/test_util.h"

namespace {

using ispsim::schema::load_platform_text;

const std::string& valid_text() {
  static const std::string text =
      ispsim::testing::read_text(std::string(ISPSIM_SOURCE_DIR) + "/platforms/nand_stream.textproto");
  return text;
}

// Result of one attempt: loaded, or rejected as bad input.
enum class Outcome { kLoaded, kRejected };

Outcome try_load(const std::string& text, const std::vector<std::string>& overrides = {}) {
  try {
    load_platform_text(text, "fuzz.textproto", overrides);
    return Outcome::kLoaded;
  } catch (const ispsim::BadInput& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("fuzz.textproto", 0), 0u) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    return Outcome::kRejected;
  }
}

TEST(Fuzz, ValidTextLoads) { EXPECT_EQ(try_load(valid_text()), Outcome::kLoaded); }

TEST(Fuzz, MutatedFilesLoadOrAreRejected) {
  std::mt19937 random(20261130);
  const std::string alphabet = "{}:\"\\#.-+0123456789eE \nabcxyz_\x00\xff";
  int loaded = 0, rejected = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string text = valid_text();
    const int edits = 1 + static_cast<int>(random() % 4);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      const std::size_t at = random() % text.size();
      const char c = alphabet[random() % alphabet.size()];
      switch (random() % 4) {
        case 0: text[at] = c; break;                        // replace
        case 1: text.insert(text.begin() + at, c); break;   // insert
        case 2: text.erase(at, 1 + random() % 8); break;    // delete a run
        default: text[at] = static_cast<char>(random()); break;  // any byte
      }
    }
    (try_load(text) == Outcome::kLoaded ? loaded : rejected)++;
  }
  // Both outcomes occur: mutations inside comments load, most others do not.
  EXPECT_GT(loaded, 0);
  EXPECT_GT(rejected, 0);
}

TEST(Fuzz, RandomOverridesLoadOrAreRejected) {
  std::mt19937 random(7);
  const std::vector<std::string> paths = {
      "nand.channels", "nand.t_read_us", "nand.cache_read", "stream.read_mode",
      "stream.consumer_ns_per_page", "modules.isp_accelerator", "name", "program",
      "nand", "nand.", ".", "", "stream.read_mode.x", "nand..channels"};
  const std::vector<std::string> values = {
      "0", "1", "-1", "8", "1e308", "-1e308", "1e-320", "nan", "inf", "0x10", "true", "false",
      "PIPELINED", "SEQUENTIAL", "MICROBENCHMARK", "", " ", "4294967296", "18446744073709551616",
      "2.5", "\xff", "a\nb"};
  int loaded = 0, rejected = 0;
  for (int round = 0; round < 2000; ++round) {
    std::vector<std::string> overrides;
    const int count = 1 + static_cast<int>(random() % 3);
    for (int k = 0; k < count; ++k) {
      overrides.push_back(paths[random() % paths.size()] + (random() % 8 ? "=" : "") +
                          values[random() % values.size()]);
    }
    (try_load(valid_text(), overrides) == Outcome::kLoaded ? loaded : rejected)++;
  }
  EXPECT_GT(loaded, 0);
  EXPECT_GT(rejected, 0);
}

}  // namespace
