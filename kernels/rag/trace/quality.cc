#include "kernels/rag/trace/quality.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace ispsim::rag {

int top1(const std::vector<float>& logits) {
  if (logits.empty()) throw std::invalid_argument("top1: empty logits row");
  int best = 0;
  for (int i = 1; i < static_cast<int>(logits.size()); ++i)
    if (logits[i] > logits[best]) best = i;
  return best;
}

std::vector<double> log_softmax(const std::vector<float>& logits) {
  if (logits.empty()) throw std::invalid_argument("log_softmax: empty logits row");
  const double max = *std::max_element(logits.begin(), logits.end());
  double sum = 0.0;
  for (float x : logits) sum += std::exp(static_cast<double>(x) - max);
  const double log_norm = max + std::log(sum);
  std::vector<double> out(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) out[i] = static_cast<double>(logits[i]) - log_norm;
  return out;
}

double kl_divergence(const std::vector<float>& p_logits, const std::vector<float>& q_logits) {
  if (p_logits.size() != q_logits.size())
    throw std::invalid_argument("kl_divergence: rows of " + std::to_string(p_logits.size()) + " and " +
                                std::to_string(q_logits.size()) + " logits");
  const std::vector<double> log_p = log_softmax(p_logits);
  const std::vector<double> log_q = log_softmax(q_logits);
  double kl = 0.0;
  for (size_t i = 0; i < log_p.size(); ++i) {
    const double p = std::exp(log_p[i]);
    if (p > 0.0) kl += p * (log_p[i] - log_q[i]);  // 0 log 0 = 0
  }
  // Rounding can leave a tiny negative sum for identical distributions.
  return std::max(kl, 0.0);
}

AnswerQuality compare_answers(const LogitRows& full, const LogitRows& blend) {
  if (full.empty()) throw std::invalid_argument("compare_answers: no rows");
  if (full.size() != blend.size())
    throw std::invalid_argument("compare_answers: " + std::to_string(full.size()) + " full rows vs " +
                                std::to_string(blend.size()) + " blend rows");
  AnswerQuality q;
  for (size_t row = 0; row < full.size(); ++row) {
    const bool agrees = top1(full[row]) == top1(blend[row]);  // throws on empty rows
    if (row == 0) q.first_token_agrees = agrees;
    q.top1_agreements += agrees ? 1 : 0;
    q.kl_sum_nats += kl_divergence(full[row], blend[row]);
    ++q.positions;
  }
  return q;
}

void QualitySummary::add(const AnswerQuality& answer, long long hkvd, long long context) {
  ++prompts;
  first_token_agreements += answer.first_token_agrees ? 1 : 0;
  positions += answer.positions;
  top1_agreements += answer.top1_agreements;
  kl_sum_nats += answer.kl_sum_nats;
  hkvd_tokens += hkvd;
  context_tokens += context;
}

}  // namespace ispsim::rag
