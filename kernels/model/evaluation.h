// Perplexity and greedy generation over any CausalLm (FP32 or integer engine).
#pragma once

#include <functional>
#include <vector>

#include "kernels/model/causal_lm.h"

namespace ispsim::model {

struct PerplexityResult {
  double perplexity = 0.0;     // exp(mean negative log-likelihood)
  double mean_nll = 0.0;       // nats per predicted token
  long long tokens = 0;        // tokens in the evaluated stream
  long long predicted = 0;     // tokens scored (tokens - 1: the first has no context)
  long long windows = 0;       // forward passes from an empty KV cache
};

// Scores the token stream in windows of `window` tokens (0 = lm.capacity()).
// Consecutive windows overlap by one token so that every token after the first
// is predicted exactly once; each window starts from an empty KV cache, so a
// token sees at most window-1 tokens of context. Windows are fed to the model in
// chunks of 256 tokens (bounded memory; same numbers). NLL is accumulated in double.
PerplexityResult perplexity(CausalLm& lm, const std::vector<int>& tokens, int window = 0);

// Greedy decoding: prefills `prompt` (from an empty cache), then appends the
// argmax token (lowest id on ties) up to max_new_tokens times, stopping after
// an end-of-sequence id from the config or when the KV cache is full.
// on_token (optional) sees each new id as it is produced.
std::vector<int> generate_greedy(CausalLm& lm, const std::vector<int>& prompt, int max_new_tokens,
                                 const std::function<void(int)>& on_token = nullptr);

// Index of the largest logit, lowest index on ties.
int argmax(const float* logits, int n);

// -log softmax(logits)[target], computed in double.
double negative_log_likelihood(const float* logits, int n, int target);

}  // namespace ispsim::model
