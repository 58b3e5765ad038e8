// FP32 logits and tokenizer ids against the golden fixtures made by an
// independent PyTorch/Python implementation (tests/fixtures/engine/README.md).
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>

#include "kernels/model/evaluation.h"
#include "kernels/model/fp32_lm.h"
#include "kernels/model/safetensors.h"
#include "kernels/model/tokenizer.h"
#include "tests/kernels/model/test_model.h"

namespace ispsim::model {
namespace {

const std::string kFixtures = std::string(ISPSIM_SOURCE_DIR) + "/tests/fixtures/engine/";

// Max |ours - golden| over every logit must stay within 1e-4 of the golden
// logit range, and every row's argmax must agree; checked for a single prefill
// and for token-by-token decoding through the KV cache.
void check_golden(const std::string& model_dir, const std::string& golden_path) {
  Model m = load_model(model_dir);
  SafetensorsFile golden(golden_path);
  std::vector<int64_t> ids64 = golden.read_i64("input_ids");
  std::vector<float> want = golden.read_f32("logits");
  const int v = m.config.vocab_size, T = static_cast<int>(ids64.size());
  ASSERT_EQ(want.size(), static_cast<size_t>(T) * v);
  std::vector<int> ids(ids64.begin(), ids64.end());
  const auto [lo, hi] = std::minmax_element(want.begin(), want.end());
  const double tolerance = 1e-4 * (*hi - *lo);

  Fp32Lm lm(m);
  std::vector<float> got;
  lm.forward(ids.data(), T, true, got);
  double worst = 0.0;
  for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::fabs(double(got[i]) - want[i]));
  EXPECT_LE(worst, tolerance) << "logit range " << *lo << " .. " << *hi;
  std::cout << golden_path << ": prefill max |diff| " << worst << " (tolerance " << tolerance << ")\n";
  for (int t = 0; t < T; ++t) EXPECT_EQ(argmax(&got[size_t(t) * v], v), argmax(&want[size_t(t) * v], v)) << "row " << t;

  lm.reset();
  worst = 0.0;
  for (int t = 0; t < T; ++t) {
    lm.forward(&ids[t], 1, false, got);
    for (int i = 0; i < v; ++i) worst = std::max(worst, std::fabs(double(got[i]) - want[size_t(t) * v + i]));
  }
  EXPECT_LE(worst, tolerance) << "token-by-token decode";
  std::cout << golden_path << ": decode max |diff| " << worst << "\n";
}

TEST(ModelGolden, Qwen2TinyRandomLogits) {
  check_golden(kFixtures + "qwen2-tiny-random", kFixtures + "qwen2-tiny-random/golden.safetensors");
}

TEST(ModelGolden, OptTinyRandomLogits) {
  check_golden(kFixtures + "opt-tiny-random", kFixtures + "opt-tiny-random/golden.safetensors");
}

TEST(ModelGolden, TrainedBrownLlamaLogits) {
  check_golden(std::string(ISPSIM_SOURCE_DIR) + "/assets/brown-llama", kFixtures + "brown-llama/golden.safetensors");
}

TEST(ModelGolden, TrainedBrownLlamaPromptTokenizesAsInPython) {
  // golden input_ids = <|endoftext|> + encode(prompt), the prompt kept in the file's metadata.
  const std::string path = kFixtures + "brown-llama/golden.safetensors";
  std::string bytes = testing::read_file(path);
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  boost::json::object header = boost::json::parse(bytes.substr(8, n)).as_object();
  const std::string prompt(header.at("__metadata__").at("prompt").as_string());
  Tokenizer tok(std::string(ISPSIM_SOURCE_DIR) + "/assets/brown-llama/tokenizer.json");
  std::vector<int> ids = {4095};
  std::vector<int> body = tok.encode(prompt);
  ids.insert(ids.end(), body.begin(), body.end());
  std::vector<int64_t> want = SafetensorsFile(path).read_i64("input_ids");
  EXPECT_EQ(std::vector<int64_t>(ids.begin(), ids.end()), want);
}

TEST(ModelGolden, TokenizerIdsMatchThePythonTokenizer) {
  std::string text = testing::read_file(kFixtures + "tokenizer_golden.json");
  boost::json::object root = boost::json::parse(text).as_object();
  Tokenizer tok(std::string(ISPSIM_SOURCE_DIR) + "/" + std::string(root.at("tokenizer").as_string()));
  const boost::json::array& cases = root.at("cases").as_array();
  ASSERT_GE(cases.size(), 10u);
  for (const boost::json::value& c : cases) {
    const std::string s(c.at("text").as_string());
    std::vector<int> want;
    for (const boost::json::value& id : c.at("ids").as_array()) want.push_back(static_cast<int>(id.as_int64()));
    EXPECT_EQ(tok.encode(s), want) << "text: '" << s << "'";
    EXPECT_EQ(tok.decode(want), s) << "text: '" << s << "'";
  }
}

}  // namespace
}  // namespace ispsim::model
