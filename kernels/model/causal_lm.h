// The interface every forward pass implements (the FP32 reference here, the
// integer-only engine in kernels/int), so that perplexity and generation
// (evaluation.h) are written once.
#pragma once

#include <vector>

#include "kernels/model/model.h"

namespace ispsim::model {

class CausalLm {
 public:
  virtual ~CausalLm() = default;
  virtual const Config& config() const = 0;
  // Tokens the KV cache can hold; forward() past it throws BadInput.
  virtual int capacity() const = 0;
  // Tokens currently in the KV cache (= position of the next token).
  virtual int position() const = 0;
  // Empties the KV cache.
  virtual void reset() = 0;
  // Appends n tokens at positions position() .. position()+n-1 and writes the
  // next-token logits: for every token ([n, vocab] row-major) when all_logits,
  // else only for the last one ([vocab]). logits is resized as needed.
  virtual void forward(const int* tokens, int n, bool all_logits, std::vector<float>& logits) = 0;
};

}  // namespace ispsim::model
