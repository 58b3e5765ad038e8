#include "kernels/rag/trace/quality.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

namespace ispsim::rag {
namespace {

TEST(RagQuality, Top1TakesLowestIndexOnTies) {
  EXPECT_EQ(top1({1.0f, 3.0f, 3.0f, 2.0f}), 1);
  EXPECT_EQ(top1({-5.0f}), 0);
  EXPECT_EQ(top1({-2.0f, -1.0f}), 1);
  EXPECT_THROW(top1({}), std::invalid_argument);
}

TEST(RagQuality, LogSoftmaxClosedForm) {
  const std::vector<double> two = log_softmax({0.0f, 0.0f});
  EXPECT_DOUBLE_EQ(two[0], -std::log(2.0));
  EXPECT_DOUBLE_EQ(two[1], -std::log(2.0));
  // e^0 : e^1 : e^2, normalizer log(1 + e + e^2).
  const std::vector<double> three = log_softmax({0.0f, 1.0f, 2.0f});
  const double log_norm = std::log(1.0 + std::exp(1.0) + std::exp(2.0));
  EXPECT_NEAR(three[0], -log_norm, 1e-14);
  EXPECT_NEAR(three[1], 1.0 - log_norm, 1e-14);
  EXPECT_NEAR(three[2], 2.0 - log_norm, 1e-14);
  // Large logits do not overflow.
  const std::vector<double> big = log_softmax({1000.0f, 0.0f});
  EXPECT_NEAR(big[0], -std::log1p(std::exp(-1000.0)), 1e-14);
  EXPECT_NEAR(big[1], -1000.0, 1e-9);
}

TEST(RagQuality, KlClosedForm) {
  // p = (1/4, 3/4) (logit ln 3, rounded to float), q = (1/2, 1/2):
  // KL(p||q) = 1/4 ln(1/2) + 3/4 ln(3/2).
  const float ln3 = static_cast<float>(std::log(3.0));
  const double expected = 0.25 * std::log(0.5) + 0.75 * std::log(1.5);
  EXPECT_NEAR(kl_divergence({0.0f, ln3}, {0.0f, 0.0f}), expected, 1e-7);
  // KL(q||p) = 1/2 ln(2) + 1/2 ln(2/3): not symmetric.
  const double reverse = 0.5 * std::log(2.0) + 0.5 * std::log(2.0 / 3.0);
  EXPECT_NEAR(kl_divergence({0.0f, 0.0f}, {0.0f, ln3}), reverse, 1e-7);
  EXPECT_GT(std::abs(expected - reverse), 1e-3);
  // Shifting all logits of a row changes nothing.
  EXPECT_NEAR(kl_divergence({10.0f, 10.0f + ln3}, {-4.0f, -4.0f}), expected, 1e-6);
}

TEST(RagQuality, KlOfIdenticalRowsIsExactlyZero) {
  const std::vector<float> row = {0.3f, -1.25f, 7.5f, 2.0f};
  EXPECT_EQ(kl_divergence(row, row), 0.0);
}

TEST(RagQuality, KlOfCertainAgainstUniformIsLogVocab) {
  // p puts all but e^-1000 of its mass on one token, q is uniform over 4: KL = ln 4.
  EXPECT_NEAR(kl_divergence({1000.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}), std::log(4.0), 1e-12);
}

TEST(RagQuality, KlRejectsRowsOfDifferentSizes) {
  EXPECT_THROW(kl_divergence({0.0f, 1.0f}, {0.0f, 1.0f, 2.0f}), std::invalid_argument);
  EXPECT_THROW(kl_divergence({}, {}), std::invalid_argument);
}

TEST(RagQuality, CompareAnswersCountsAgreementsAndSumsKl) {
  const float ln3 = static_cast<float>(std::log(3.0));
  // Row 0 disagrees (full picks 1, blend picks 0), rows 1 and 2 agree.
  const LogitRows full = {{0.0f, ln3}, {0.0f, ln3}, {2.0f, 0.0f}};
  const LogitRows blend = {{ln3, 0.0f}, {0.0f, 1.0f}, {2.0f, 0.0f}};
  const AnswerQuality q = compare_answers(full, blend);
  EXPECT_FALSE(q.first_token_agrees);
  EXPECT_EQ(q.positions, 3);
  EXPECT_EQ(q.top1_agreements, 2);
  // Row 0: KL((1/4,3/4) || (3/4,1/4)) = 1/4 ln(1/3) + 3/4 ln 3 = 1/2 ln 3.
  const double row0 = 0.5 * std::log(3.0);
  const double row1 = kl_divergence(full[1], blend[1]);
  EXPECT_NEAR(q.kl_sum_nats, row0 + row1 + 0.0, 1e-7);
  EXPECT_NEAR(q.mean_kl_nats(), (row0 + row1) / 3.0, 1e-7);

  const AnswerQuality same = compare_answers(full, full);
  EXPECT_TRUE(same.first_token_agrees);
  EXPECT_EQ(same.top1_agreements, 3);
  EXPECT_EQ(same.kl_sum_nats, 0.0);
}

TEST(RagQuality, CompareAnswersRejectsMismatchedRows) {
  EXPECT_THROW(compare_answers({}, {}), std::invalid_argument);
  EXPECT_THROW(compare_answers({{0.0f}}, {{0.0f}, {0.0f}}), std::invalid_argument);
  EXPECT_THROW(compare_answers({{0.0f, 1.0f}}, {{0.0f}}), std::invalid_argument);
}

TEST(RagQuality, SummaryAveragesOverPositionsNotPrompts) {
  QualitySummary s;
  s.ratio = 0.15;
  AnswerQuality a;  // one position, disagrees, KL 1
  a.first_token_agrees = false;
  a.positions = 1;
  a.top1_agreements = 0;
  a.kl_sum_nats = 1.0;
  AnswerQuality b;  // three positions, all agree, KL 0
  b.first_token_agrees = true;
  b.positions = 3;
  b.top1_agreements = 3;
  s.add(a, 6, 40);
  s.add(b, 9, 60);
  EXPECT_EQ(s.prompts, 2);
  EXPECT_DOUBLE_EQ(s.first_token_agreement(), 0.5);
  EXPECT_DOUBLE_EQ(s.top1_agreement(), 0.75);
  EXPECT_DOUBLE_EQ(s.mean_kl_nats(), 0.25);  // 1 / 4 positions, not (1 + 0) / 2 prompts
  EXPECT_EQ(s.hkvd_tokens, 15);
  EXPECT_EQ(s.context_tokens, 100);
  EXPECT_DOUBLE_EQ(QualitySummary{}.mean_kl_nats(), 0.0);
}

}  // namespace
}  // namespace ispsim::rag
