// The quality report of dictionary KV compression (`ispsim engine kv-quality`):
// for each cache variant, teacher-forced next-token quality against the dense
// cache over the same token sequences, reconstruction error per layer, and the
// bytes loaded per decode step (accounting.h).
//
// Each sequence is a prompt, prefilled through the dense path, and a
// continuation decoded token by token (teacher forcing). Position s of the
// continuation is predicted from the prompt plus continuation[0..s); all
// variants see exactly the same tokens.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kernels/dict/accounting.h"
#include "kernels/dict/kv_cache.h"
#include "kernels/model/model.h"

namespace ispsim::dict {

struct TokenSequence {
  std::vector<int> prompt;        // >= 1 token
  std::vector<int> continuation;  // >= 1 token, scored
};

struct Variant {
  std::string name;
  CacheSettings settings;
};

struct VariantQuality {
  std::string name;
  CacheSettings settings;
  double nll_sum = 0.0;       // nats, over every continuation token
  long long tokens = 0;
  long long top1_agreements = 0;  // argmax equal to the dense cache's
  double kl_sum = 0.0;        // Σ KL(dense || variant), nats
  ByteTally bytes;            // decode steps only
  std::vector<ReconstructionError> per_layer;

  double perplexity() const;
  double top1_agreement() const { return tokens ? static_cast<double>(top1_agreements) / tokens : 0.0; }
  double mean_kl() const { return tokens ? kl_sum / tokens : 0.0; }
};

// The paper's four rows: dense, OMP K=16, pursuit K=16, pursuit + hierarchical
// (K_low 3, K_high 16, top 10 %), each with `base`'s W, U, K and N.
std::vector<Variant> paper_variants(const CacheSettings& base);

// Runs every variant over every sequence. The first variant is the reference
// for top-1 agreement and KL (normally the dense cache). dicts: FP32
// dictionaries per layer and stream. progress(done, total) after each sequence.
std::vector<VariantQuality> evaluate(const model::Model& model, const std::vector<Dictionary>& dicts,
                                     const std::vector<Variant>& variants, const std::vector<TokenSequence>& sequences,
                                     const EntryBits& bits, const std::function<void(int, int)>& progress = {});

// Greedy continuation of `prompt` with the dense cache, `tokens` long (the RAG
// rows teacher-force every variant on the dense cache's own answer).
std::vector<int> dense_greedy(const model::Model& model, const std::vector<int>& prompt, int tokens);

}  // namespace ispsim::dict
