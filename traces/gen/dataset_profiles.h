// RAG dataset profiles of the shape-only trace generator: how many tokens a
// retrieved document, the user query and the answer have, per dataset (the
// eight datasets of MemLLM, paper 2 Sec. VI-A / Table I). Lengths are drawn per
// request from the distributions below with a seeded SeededRandom.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "traces/gen/seeded_random.h"

namespace ispsim::tracegen {

// Documents retrieved per request (top-k): MemLLM Sec. VI-A and SPEC.md.
constexpr uint64_t kDefaultTopK = 5;

// Token conversions used to turn the datasets' published sizes into tokens of
// the preset models' BPE tokenizers (OpenAI's tokenizer guide, "What are tokens
// and how to count them": about 4 characters or 3/4 of a word of English text
// per token). Bytes of ASCII-dominated text count as characters. Scientific and
// numeric text tokenizes denser than this rule of thumb, so lengths converted
// from words are on the short side (on TAT-QA's dev split, bytes / 4 gives 1.64
// tokens per word against 4/3).
constexpr double kBytesPerToken = 4.0;
constexpr double kTokensPerWord = 4.0 / 3.0;

struct DatasetProfile {
  std::string key;             // short name used on the command line, e.g. "wik"
  std::string name;            // e.g. "TriviaQA (Wikipedia)"
  std::string source;          // where the statistics come from
  std::string retrieval_unit;  // what one retrieved document is
  // Context tokens of one retrieved document: lognormal with log-space standard
  // deviation doc_log_sigma, truncated to [doc_min_tokens, doc_max_tokens] by
  // redrawing, whose mean (after truncation) is doc_mean_tokens, the published
  // mean. doc_log_mu is solved for that (truncated_lognormal_mean).
  double doc_mean_tokens = 0.0;
  double doc_log_sigma = 0.0;
  uint64_t doc_min_tokens = 0;
  uint64_t doc_max_tokens = 0;
  double doc_log_mu = 0.0;
  // Query and answer tokens: uniform integers in [min, max].
  uint64_t query_min_tokens = 0;
  uint64_t query_max_tokens = 0;
  uint64_t answer_min_tokens = 0;
  uint64_t answer_max_tokens = 0;

  double query_mean_tokens() const { return 0.5 * double(query_min_tokens + query_max_tokens); }
  double answer_mean_tokens() const { return 0.5 * double(answer_min_tokens + answer_max_tokens); }
  // Context:answer ratio per retrieved document: doc mean / answer mean. MemLLM's
  // ratios (Sec. III-A: TriviaQA ~1000:1, CUAD ~90:1, CovidQA ~440:1) read as
  // per-document ratios: at top-k 5 they would make TriviaQA answers 5x longer
  // than the entity names they are.
  double context_to_answer_ratio() const { return doc_mean_tokens / answer_mean_tokens(); }
  // Mean tokens of a request with `top_k` documents: top_k x doc mean + query mean + answer mean.
  double mean_request_tokens(uint64_t top_k = kDefaultTopK) const {
    return double(top_k) * doc_mean_tokens + query_mean_tokens() + answer_mean_tokens();
  }
};

// Mean of a lognormal(mu, sigma) truncated to [low, high] (closed form with the
// normal CDF): exp(mu + sigma^2/2) x [Phi(b - sigma) - Phi(a - sigma)] / [Phi(b) - Phi(a)],
// a = (ln low - mu) / sigma, b = (ln high - mu) / sigma.
double truncated_lognormal_mean(double mu, double sigma, double low, double high);

// All eight profiles: fin, tat, cov, cad, prv, wik, web, hpt.
const std::vector<DatasetProfile>& dataset_profiles();

// The profile with key `key` (case-insensitive); unknown → BadInput(where, ...)
// listing the known keys.
const DatasetProfile& find_dataset_profile(const std::string& key, const std::string& where = "--dataset");

// The known keys, comma separated.
std::string dataset_profile_keys();

// One draw of each length (see DatasetProfile).
uint64_t draw_document_tokens(const DatasetProfile& profile, SeededRandom& random);
uint64_t draw_query_tokens(const DatasetProfile& profile, SeededRandom& random);
uint64_t draw_answer_tokens(const DatasetProfile& profile, SeededRandom& random);

}  // namespace ispsim::tracegen
