#include "kernels/model/evaluation.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "common/error.h"

namespace ispsim::model {

int argmax(const float* logits, int n) {
  int best = 0;
  for (int i = 1; i < n; ++i)
    if (logits[i] > logits[best]) best = i;
  return best;
}

double negative_log_likelihood(const float* logits, int n, int target) {
  double max = *std::max_element(logits, logits + n);
  double sum = 0.0;
  for (int i = 0; i < n; ++i) sum += std::exp(static_cast<double>(logits[i]) - max);
  return std::log(sum) + max - static_cast<double>(logits[target]);
}

PerplexityResult perplexity(CausalLm& lm, const std::vector<int>& tokens, int window) {
  if (window <= 0) window = lm.capacity();
  if (window < 2) throw BadInput("engine", "perplexity needs a window of at least 2 tokens");
  if (window > lm.capacity())
    throw BadInput("engine", "perplexity window of " + std::to_string(window) + " tokens exceeds the KV cache of " +
                                 std::to_string(lm.capacity()));
  if (tokens.size() < 2) throw BadInput("engine", "perplexity needs at least 2 tokens of text");
  const int vocab = lm.config().vocab_size;
  PerplexityResult r;
  r.tokens = static_cast<long long>(tokens.size());
  double nll = 0.0;
  std::vector<float> logits;
  // A window is fed in chunks so activations and logits stay bounded for long contexts.
  constexpr int kChunk = 256;
  for (size_t start = 0; start + 1 < tokens.size(); start += window - 1) {
    const int n = static_cast<int>(std::min<size_t>(window, tokens.size() - start));
    lm.reset();
    for (int c = 0; c < n; c += kChunk) {
      const int len = std::min(kChunk, n - c);
      lm.forward(&tokens[start + c], len, true, logits);
      for (int t = 0; t < len && c + t + 1 < n; ++t)
        nll += negative_log_likelihood(&logits[static_cast<size_t>(t) * vocab], vocab, tokens[start + c + t + 1]);
    }
    r.predicted += n - 1;
    ++r.windows;
  }
  r.mean_nll = nll / static_cast<double>(r.predicted);
  r.perplexity = std::exp(r.mean_nll);
  return r;
}

std::vector<int> generate_greedy(CausalLm& lm, const std::vector<int>& prompt, int max_new_tokens,
                                 const std::function<void(int)>& on_token) {
  if (prompt.empty()) throw BadInput("engine", "generation needs a prompt of at least one token");
  const Config& c = lm.config();
  std::vector<int> out;
  std::vector<float> logits;
  lm.reset();
  lm.forward(prompt.data(), static_cast<int>(prompt.size()), false, logits);
  for (int i = 0; i < max_new_tokens; ++i) {
    int next = argmax(logits.data(), c.vocab_size);
    out.push_back(next);
    if (on_token) on_token(next);
    bool eos = std::find(c.eos_token_ids.begin(), c.eos_token_ids.end(), next) != c.eos_token_ids.end();
    if (eos || i + 1 == max_new_tokens || lm.position() >= lm.capacity()) break;
    lm.forward(&next, 1, false, logits);
  }
  return out;
}

}  // namespace ispsim::model
