// The FP32 reference forward pass with a KV cache, for every supported family.
// Tokens may be appended in batches (prefill) or one at a time (decode); both
// give the same numbers as a single pass over the whole sequence.
#pragma once

#include <vector>

#include "kernels/model/causal_lm.h"
#include "kernels/model/cpu_isa.h"

namespace ispsim::model {

class Fp32Lm : public CausalLm {
 public:
  // capacity: most tokens the KV cache may hold; 0 = the model's max_positions.
  explicit Fp32Lm(const Model& model, int capacity = 0);

  const Config& config() const override { return model_.config; }
  int capacity() const override { return capacity_; }
  int position() const override { return position_; }
  void reset() override { position_ = 0; }
  void forward(const int* tokens, int n, bool all_logits, std::vector<float>& logits) override;

 private:
  void embed(const int* tokens, int n);
  void attention_block(int layer, int n);
  void ffn_block(int layer, int n);
  void norm_rows(const std::vector<float>& weight, const std::vector<float>& bias, int n, const float* in, float* out);
  void attend(int layer, int row, int pos, int head, float* scores);  // the scalar level
  void attend_blocks(int layer, int n, Isa isa);                       // avx2 and above
  static constexpr int kKeyBlock = 64;  // keys per flash-attention tile
  struct FlashScratch {
    std::vector<float> queries, scores, out, max, sum;
    std::vector<int> len, count;
  };
  void flash_attend(int layer, int kv_head, int nq, float scale, Isa isa, FlashScratch& s);

  const Model& model_;
  int capacity_ = 0;
  int position_ = 0;
  std::vector<float> inv_freq_;
  // KV cache per layer, [position][kv_dim]; grown on demand (doubling) up to
  // capacity_, so a long-context model does not reserve its whole context up front.
  std::vector<std::vector<float>> k_cache_, v_cache_;
  int cache_positions_ = 0;  // positions allocated in each layer's cache
  // Activations for the current batch of n tokens, row-major [n, width].
  std::vector<float> x_, xb_, q_, k_, v_, att_out_, hb_, hb2_, cos_, sin_;
};

}  // namespace ispsim::model
