// Quality of a blended prefill against the full prefill of the same prompt.
// Pure functions over next-token logits; the CLI
// (`ispsim engine blend-quality`) feeds them the engine's outputs.
//
// Both sides are compared position by position over the answer: row 0 is the
// next-token distribution after the prompt, row s (s >= 1) the one after the
// prompt plus the first s answer tokens of the FULL prefill (teacher forcing),
// so that both rows predict the same position from the same tokens even where
// the blended model would have chosen another token. The caller provides the
// blended rows teacher-forced that way.
#pragma once

#include <vector>

namespace ispsim::rag {

using LogitRows = std::vector<std::vector<float>>;  // [positions][vocab]

// Index of the largest logit, lowest index on ties (greedy decoding's rule,
// kernels/model/evaluation.h). Throws std::invalid_argument on an empty row.
int top1(const std::vector<float>& logits);

// log softmax of one row, in double.
std::vector<double> log_softmax(const std::vector<float>& logits);

// KL(p || q) in nats of the distributions softmax(p_logits) and softmax(q_logits):
// sum_i p_i (log p_i - log q_i), in double. Rows of different sizes throw
// std::invalid_argument.
double kl_divergence(const std::vector<float>& p_logits, const std::vector<float>& q_logits);

// One prompt: the full prefill's rows against the blend's rows.
struct AnswerQuality {
  bool first_token_agrees = false;  // top1 of row 0 equal
  int positions = 0;                // rows compared (answer tokens)
  int top1_agreements = 0;          // rows whose top1 is equal
  double kl_sum_nats = 0.0;         // sum over rows of KL(full || blend)
  double mean_kl_nats() const { return positions ? kl_sum_nats / positions : 0.0; }
};

// Compares row by row; both must have the same number (>= 1) of rows of the
// same size, else std::invalid_argument.
AnswerQuality compare_answers(const LogitRows& full, const LogitRows& blend);

// Quality over several prompts at one recomputation ratio.
struct QualitySummary {
  double ratio = 0.0;               // requested HKVD fraction, 0..1
  int prompts = 0;
  int first_token_agreements = 0;   // prompts whose first answer token agrees
  int positions = 0;                // answer positions over all prompts
  int top1_agreements = 0;
  double kl_sum_nats = 0.0;
  long long hkvd_tokens = 0;        // recomputed context tokens over all prompts
  long long context_tokens = 0;     // context tokens over all prompts

  void add(const AnswerQuality& answer, long long hkvd, long long context);
  double first_token_agreement() const { return prompts ? double(first_token_agreements) / prompts : 0.0; }
  double top1_agreement() const { return positions ? double(top1_agreements) / positions : 0.0; }
  // Mean over every answer position of every prompt (not a mean of per-prompt means).
  double mean_kl_nats() const { return positions ? kl_sum_nats / positions : 0.0; }
};

}  // namespace ispsim::rag
