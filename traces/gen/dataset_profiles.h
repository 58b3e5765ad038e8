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

struct DatasetProfile {
  std::string key;     // short name used on the command line, e.g. "wik"
  std::string name;    // e.g. "TriviaQA (Wikipedia)"
  std::string source;  // where the statistics come from
  // Context tokens of one retrieved document: lognormal with mean
  // doc_mean_tokens and log-space standard deviation doc_log_sigma, truncated to
  // [doc_min_tokens, doc_max_tokens] (draws outside are redrawn).
  double doc_mean_tokens = 0.0;
  double doc_log_sigma = 0.0;
  uint64_t doc_min_tokens = 0;
  uint64_t doc_max_tokens = 0;
  // Query and answer tokens: uniform integers in [min, max].
  uint64_t query_min_tokens = 0;
  uint64_t query_max_tokens = 0;
  uint64_t answer_min_tokens = 0;
  uint64_t answer_max_tokens = 0;

  double answer_mean_tokens() const { return 0.5 * double(answer_min_tokens + answer_max_tokens); }
  // Design ratio of context to answer length: top-k * doc mean / answer mean
  // (before truncation; the truncated draws stay within a few percent).
  double context_to_answer_ratio(uint64_t top_k = kDefaultTopK) const {
    return double(top_k) * doc_mean_tokens / answer_mean_tokens();
  }
};

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
