// Never a crash: randomly corrupted config.json, model.safetensors headers and
// tokenizer.json either load or fail with BadInput (what the CLI turns into one
// line and exit code 2) — never another exception type. Fixed seed.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "common/error.h"
#include "kernels/model/evaluation.h"
#include "kernels/model/fp32_lm.h"
#include "kernels/model/tokenizer.h"
#include "tests/kernels/model/test_model.h"

namespace ispsim::model {
namespace {

using namespace testing;

// Overwrites 1..4 random bytes within the first `span` bytes (all of it if 0).
std::string mutate(std::string s, size_t span, std::mt19937& rng) {
  const size_t limit = span ? std::min(span, s.size()) : s.size();
  const int edits = 1 + static_cast<int>(rng() % 4);
  static const char kInteresting[] = "0123456789{}[]\",:-.eE \xff\x00";
  for (int e = 0; e < edits; ++e) {
    const size_t at = rng() % limit;
    s[at] = rng() % 2 ? static_cast<char>(rng() & 0xff) : kInteresting[rng() % (sizeof kInteresting - 1)];
  }
  return s;
}

TEST(ModelRobustness, CorruptedCheckpointFilesLoadOrGiveBadInput) {
  TinyModel tm;
  const std::string dir = make_tiny_model_dir("robust", tm);
  const std::string config = read_file(dir + "/config.json");
  const std::string weights = read_file(dir + "/model.safetensors");
  const std::string tokenizer = read_file(dir + "/tokenizer.json");
  uint64_t header_len;
  std::memcpy(&header_len, weights.data(), 8);
  std::mt19937 rng(12345);
  int loaded = 0, rejected = 0;
  for (int i = 0; i < 300; ++i) {
    const int which = i % 3;
    write_file(dir + "/config.json", which == 0 ? mutate(config, 0, rng) : config);
    write_file(dir + "/model.safetensors", which == 1 ? mutate(weights, 8 + header_len, rng) : weights);
    write_file(dir + "/tokenizer.json", which == 2 ? mutate(tokenizer, 0, rng) : tokenizer);
    try {
      Model m = load_model(dir);
      Tokenizer tok(dir + "/tokenizer.json");
      std::vector<int> ids = tok.encode("the thing in the ring");
      for (int& id : ids) id %= m.config.vocab_size;
      Fp32Lm lm(m, 64);
      perplexity(lm, ids);
      ++loaded;
    } catch (const BadInput&) {
      ++rejected;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "iteration " << i << ": not BadInput: " << e.what();
    }
  }
  EXPECT_GT(rejected, 100);  // most corruptions must be caught
  EXPECT_GT(loaded, 0);      // and harmless ones (e.g. in a name's spelling of a number) still load
}

}  // namespace
}  // namespace ispsim::model
