// The runtime KV cache of paper 1 §3.2.4-3.2.5, one decoder layer, FP32:
//
// - a dense local window of at most W tokens (keys after RoPE, values);
// - when an append makes the window exceed W, its oldest U tokens are encoded
//   into sparse codes (K_high atoms per KV head and stream, coefficients stored
//   as FP16) and evicted: the compressed region only ever grows by U tokens;
// - attention of one query row: s = q·D_Kᵀ once per query head, the logit of a
//   compressed token assembled from its code (Σ γ_p s[idx_p]), exact logits over
//   the window, ONE softmax over both, the compressed tokens' probabilities
//   scattered onto value-dictionary atoms (w_j = Σ p_i γ_ij) and D_Vᵀ w added to
//   the window's Σ p_t v_t;
// - hierarchical sparsity: the coarse logit of every compressed token from its
//   first K_low atoms, the top N % by that score (per query head) refined to
//   K_high by continuing the same sum, everything else kept at K_low (keys and
//   values), still under one max-subtracted softmax.
//
// Accounting (accounting.h) counts what each attention call reads: the window
// densely, and for every KV head the code entries (index + coefficient) of
// each compressed token at the budget it was used with (the union over the
// query heads sharing the KV head).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/dict/dictionary.h"
#include "kernels/dict/pursuit.h"

namespace ispsim::dict {

enum class Encoder { kPursuit, kOmp };

struct CacheSettings {
  int window_tokens = 128;       // W (paper 1 §5.1)
  int unit_tokens = 32;          // U (paper 1 §5.1)
  int k_high = 16;               // sparsity budget (paper 1 §5.1)
  int k_low = 3;                 // coarse budget of hierarchical sparsity (paper 1 §5.1)
  double refine_fraction = 0.10; // N (paper 1 §3.2.5, "top-N%"; the default 10 %)
  bool hierarchical = false;
  Encoder encoder = Encoder::kPursuit;
  bool compress = true;          // false: a dense cache (the window never overflows)
};

// Reads of one attention call, in entries (multiply by bytes in accounting.h).
struct StepReads {
  uint64_t window_tokens = 0;      // dense tokens read (each kv_heads × head_dim × 2 streams)
  uint64_t compressed_tokens = 0;  // tokens held as codes
  uint64_t key_entries = 0;        // (index, coefficient) pairs read, summed over KV heads
  uint64_t value_entries = 0;
  uint64_t refined_tokens = 0;     // hierarchical: tokens at K_high, summed over KV heads
};

// Squared reconstruction error of everything this cache encoded.
struct ReconstructionError {
  double key_error = 0.0, key_norm = 0.0, value_error = 0.0, value_norm = 0.0;
  uint64_t vectors = 0;  // per stream
  void add(const ReconstructionError& o);
  double key_relative() const { return key_norm > 0.0 ? key_error / key_norm : 0.0; }
  double value_relative() const { return value_norm > 0.0 ? value_error / value_norm : 0.0; }
};

class CompressedKvCache {
 public:
  // keys/values: the layer's dictionaries (dim == head_dim); unused when
  // settings.compress is false (may then be empty).
  CompressedKvCache(const Dictionary& keys, const Dictionary& values, int heads, int kv_heads, int head_dim,
                    const CacheSettings& settings);

  // Appends one token (k after RoPE, v; kv_dim values each), then compresses the
  // oldest U window tokens while the window holds more than W.
  void append(const float* k, const float* v);

  // One query row (heads × head_dim, RoPE applied, not scaled) over everything
  // appended so far; out: heads × head_dim. Scores are q·k / sqrt(head_dim).
  void attend(const float* q, float* out, StepReads* reads = nullptr);

  int tokens() const { return compressed_ + static_cast<int>(window_k_.size() / kv_dim_); }
  // Compressed tokens are positions 0 .. compressed_tokens()-1: compression takes the oldest.
  int compressed_tokens() const { return compressed_; }
  int window_tokens() const { return static_cast<int>(window_k_.size() / kv_dim_); }
  // Squared reconstruction error of everything encoded so far.
  const ReconstructionError& error() const { return error_; }
  // Code of compressed token t (< compressed_tokens()), KV head g, stream s.
  const SparseCode& code(int t, int g, Stream s) const;

 private:
  void compress_oldest();
  void encode(const Dictionary& d, const float* x, SparseCode& code, double& err, double& norm);

  const Dictionary& keys_;
  const Dictionary& values_;
  int heads_, kv_heads_, head_dim_, kv_dim_;
  CacheSettings s_;
  std::vector<float> window_k_, window_v_;  // [window token][kv_dim], oldest first
  int compressed_ = 0;
  std::vector<SparseCode> codes_;           // [token][kv_head][stream]
  ReconstructionError error_;
  PursuitScratch scratch_;
  std::vector<float> residual_, atom_scores_, logits_, atom_weights_, coarse_, value_out_;
  std::vector<int> order_, budget_;
  std::vector<char> refined_any_;
};

// IEEE half rounding (round to nearest even) of a coefficient, as stored.
float round_to_fp16(float x);

}  // namespace ispsim::dict
