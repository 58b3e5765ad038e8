// Decoding with the compressed KV cache on the FP32 engine: the prompt goes
// through the dense path (every prompt row attends exactly to the prompt), its
// KV then fills the caches (compressing the overflow beyond W in units of U),
// and every decoded token attends through CompressedKvCache. Built on the
// forward-pass steps of rag::Fp32Backend, so every other op is the FP32
// reference's.
#pragma once

#include <memory>
#include <vector>

#include "kernels/dict/accounting.h"
#include "kernels/dict/kv_cache.h"
#include "kernels/model/model.h"
#include "kernels/rag/fp32_backend.h"

namespace ispsim::dict {

class CompressedDecoder {
 public:
  // dicts: per layer and stream, FP32 (the dequantized INT8 dictionaries);
  // ignored (may be empty) when settings.compress is false.
  CompressedDecoder(const model::Model& model, const std::vector<Dictionary>& dicts, const CacheSettings& settings);

  // Dense prefill of the prompt (>= 1 token) from position 0; logits of its last token.
  void prefill(const std::vector<int>& prompt, std::vector<float>& logits);
  // One decode step with the compressed caches; logits of the next token.
  void decode(int token, std::vector<float>& logits);

  int position() const { return position_; }
  const CompressedKvCache& cache(int layer) const { return *caches_[layer]; }
  const std::vector<StepReads>& last_reads() const { return reads_; }  // per layer, last decode step

 private:
  const model::Model& model_;
  const model::Config& c_;
  rag::Fp32Backend backend_;
  std::vector<std::unique_ptr<CompressedKvCache>> caches_;
  std::vector<StepReads> reads_;
  int position_ = 0;
  std::vector<float> x_, q_, k_pre_, k_, v_, att_;
};

}  // namespace ispsim::dict
