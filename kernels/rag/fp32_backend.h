// The FP32 engine's forward pass cut into the steps CacheBlend needs (embed,
// q/k/v of a set of rows, attention over a given cache, the rest of the
// layer, logits), computed the way model::Fp32Lm computes them, so every row
// gets the same numbers whichever other rows are computed with it.
#pragma once

#include <cstddef>
#include <vector>

#include "kernels/model/model.h"
#include "kernels/rag/fused_attention.h"

namespace ispsim::rag {

class Fp32Backend {
 public:
  using Value = float;         // activations, KV and logits
  using Deviation = double;    // layer-1 KV deviation of one token

  Fp32Backend(const model::Model& model, int tile_tokens);

  int hidden() const { return c_.hidden_size; }
  int q_dim() const { return c_.q_dim(); }
  int kv_dim() const { return c_.kv_dim(); }
  int vocab() const { return c_.vocab_size; }
  int layers() const { return c_.num_layers; }

  // x[n][hidden] = the token embeddings (BadInput for an id outside the vocabulary).
  void embed(const int* tokens, int n, Value* x);
  // Attention inputs of `layer` for residual rows x[n]: q rotated to pos[r],
  // k before RoPE, v.
  void qkv(int layer, const Value* x, int n, const int* pos, Value* q, Value* k_pre, Value* v);
  // One token's keys (all KV heads) rotated to `pos`.
  void rotate_keys(const Value* k_pre, int pos, Value* k) const;
  // The fused kernel over cache[0, cache_tokens) of this layer.
  void attention(int layer, const Value* q, const int* pos, int rows, const Value* k, const Value* v, int cache_tokens,
                 Value* out) const;
  // Output projection, residual add, FFN block: x[n] in place.
  void finish_layer(int layer, const Value* att, int n, Value* x);
  // Next-token logits of one residual row.
  void logits(const Value* x, std::vector<Value>& out);
  // ||k_a - k_b||² + ||v_a - v_b||² over one token's kv_dim values.
  Deviation deviation(int layer, const Value* k_a, const Value* k_b, const Value* v_a, const Value* v_b) const;

 private:
  void norm_rows(const std::vector<float>& weight, int n, const float* in, float* out) const;

  const model::Model& m_;
  const model::Config& c_;
  AttentionShape shape_;
  std::vector<float> inv_freq_;
  std::vector<float> xb_, hb_, hb2_, cos_, sin_;
};

}  // namespace ispsim::rag
