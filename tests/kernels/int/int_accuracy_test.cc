// Accuracy of the integer-only engine on the trained demo model
// (assets/brown-llama, produced by tools/train/train.py): held-out perplexity
// with every integer stage on must be within 3% of FP32 (the task's bar).
// Every row of the cumulative ablation is printed, including the one without
// INT16 requantization; only the full method is asserted.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/int/quantized_lm.h"
#include "kernels/model/evaluation.h"
#include "kernels/model/model.h"
#include "kernels/model/tokenizer.h"

namespace ispsim::integer {
namespace {

const std::string kModelDir = std::string(ISPSIM_SOURCE_DIR) + "/assets/brown-llama";
const std::string kCalibration = std::string(ISPSIM_SOURCE_DIR) + "/kernels/int/data/brown_calibration.txt";
constexpr size_t kEvalTokens = 8192;  // first 8192 held-out tokens: 32 windows of 256, keeps the test short
constexpr size_t kCalibTokens = 2048;  // as the CLI's default

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path << " is missing (the trained model ships in assets/brown-llama)";
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(TrainedModelAccuracy, Int16EngineHeldOutPerplexityWithin3PercentOfFp32) {
  model::Model m = model::load_model(kModelDir);
  model::Tokenizer tok(kModelDir + "/tokenizer.json");
  std::vector<int> eval = tok.encode(read(kModelDir + "/heldout.txt"), "heldout.txt");
  // BOS first, as `ispsim engine ppl` does: the tokenizer's, else config.json's (the demo model's).
  const int bos = tok.bos_id() >= 0 ? tok.bos_id() : m.config.bos_token_id;
  if (bos >= 0) eval.insert(eval.begin(), bos);
  if (eval.size() > kEvalTokens) eval.resize(kEvalTokens);
  std::vector<int> calib = tok.encode(read(kCalibration), "calibration");
  if (calib.size() > kCalibTokens) calib.resize(kCalibTokens);
  ASSERT_GE(eval.size(), 1000u);

  double ppl[5] = {};
  for (QuantStage stage : all_stages()) {
    IntegerOptions o;
    o.stage = stage;
    auto lm = make_quantized_lm(m, o, calib);
    const int i = static_cast<int>(stage);
    ppl[i] = model::perplexity(*lm, eval).perplexity;
    std::printf("stage %-14s held-out perplexity %.4f over %zu tokens (%+.2f %% vs fp32)\n", stage_name(stage), ppl[i],
                eval.size(), 100.0 * (ppl[i] / ppl[0] - 1.0));
    RecordProperty(std::string("ppl_") + stage_name(stage), std::to_string(ppl[i]));
  }
  EXPECT_LE(std::fabs(ppl[4] / ppl[0] - 1.0), 0.03);
}

}  // namespace
}  // namespace ispsim::integer
