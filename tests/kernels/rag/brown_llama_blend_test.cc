// The acceptance checks on the project's trained model (assets/brown-llama):
// ratio 100 % reproduces the full prefill, FP32 within 1e-5 and the integer
// engine bit-exact.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "kernels/model/tokenizer.h"
#include "kernels/rag/blend.h"
#include "tests/support/files.h"

namespace ispsim::rag {
namespace {

struct BrownLlama {
  const std::string dir = std::string(ISPSIM_SOURCE_DIR) + "/assets/brown-llama";
  model::Model model = model::load_model(dir);
  model::Tokenizer tok{dir + "/tokenizer.json"};
  std::vector<Document> docs;
  std::vector<int> query;
  BrownLlama() {
    const int bos = model.config.bos_token_id;
    auto doc = [&](const std::string& id, const std::string& text) {
      Document d{id, {bos}};
      for (int t : tok.encode(text, id)) d.tokens.push_back(t);
      docs.push_back(d);
    };
    doc("jury", "The jury said the election was conducted with integrity and praised the city for its work.");
    doc("ship", "The ship was launched last year and carries a crew of ninety men and three officers.");
    doc("farm", "Farmers in the valley said the rain came too late for the corn and the wheat.");
    query = tok.encode(" The ship was", "query");
  }
};

const std::vector<std::string> kOrder = {"farm", "ship", "jury"};

TEST(BrownLlamaBlend, FullRatioReproducesFullPrefillFp32) {
  BrownLlama b;
  const RagModel engine = RagModel::fp32(b.model);
  const KvStore store = precompute(engine, b.docs);
  BlendOptions o;
  o.ratio = 1.0;
  o.answer_tokens = 6;
  const BlendOutput blended = blend(engine, store, kOrder, b.query, o);
  const BlendOutput full = full_prefill(engine, store, kOrder, b.query, o);
  EXPECT_EQ(blended.answer, full.answer);
  for (size_t i = 0; i < full.logits.size(); ++i) {
    float worst = 0;
    for (size_t j = 0; j < full.logits[i].size(); ++j)
      worst = std::max(worst, std::fabs(blended.logits[i][j] - full.logits[i][j]));
    EXPECT_LE(worst, 1e-5f) << "row " << i;  // absolute: this model's logits are small enough
  }
}

TEST(BrownLlamaBlend, FullRatioReproducesFullPrefillIntegerBitExact) {
  BrownLlama b;
  const std::string calib_file = std::string(ISPSIM_SOURCE_DIR) + "/kernels/int/data/brown_calibration.txt";
  std::vector<int> calib = b.tok.encode(ispsim::testing::read_text(calib_file), calib_file);
  calib.resize(std::min<size_t>(calib.size(), 2048));  // as `ispsim engine --quant int16`
  const RagModel engine = RagModel::integer(b.model, calib);
  const KvStore store = precompute(engine, b.docs);
  BlendOptions o;
  o.ratio = 1.0;
  o.answer_tokens = 6;
  o.integer = true;
  const BlendOutput blended = blend(engine, store, kOrder, b.query, o);
  const BlendOutput full = full_prefill(engine, store, kOrder, b.query, o);
  EXPECT_EQ(blended.answer, full.answer);
  EXPECT_EQ(blended.logits, full.logits);
  // At the default 15 % the first document (at its precomputed positions) never deviates.
  o.ratio = 0.15;
  const BlendOutput partial = blend(engine, store, kOrder, b.query, o);
  for (uint64_t t = 0; t < partial.doc_token_counts[0]; ++t) EXPECT_EQ(partial.deviation[t], 0.0);
  EXPECT_EQ(partial.hkvd_count(), static_cast<int>(std::llround(0.15 * partial.context_tokens.size())));
}

}  // namespace
}  // namespace ispsim::rag
