// Compression accounting exactly as paper 1 defines it: the dynamic bytes
// loaded per decode step against the dense FP16 KV cache, excluding the
// dictionary (static, flash-resident, never moved).
//
//   dense(step)  = T · H_kv · d · 2 · 16 bit / 8                (T = tokens in the cache)
//   loaded(step) = W_t · H_kv · d · 2 · b_win / 8               (dense window, W_t tokens)
//                + (E_K + E_V) · (b_idx + b_coef) / 8           (code entries read)
//   ratio        = Σ_steps Σ_layers dense / Σ_steps Σ_layers loaded
//
// E_K, E_V count the (index, coefficient) pairs the attention actually read,
// per KV head: K_high per compressed token without hierarchy; K_low, or K_high
// for a token refined by any query head of the KV head, with it.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/dict/kv_cache.h"

namespace ispsim::dict {

struct EntryBits {
  int index_bits = 16;   // atom index (≤ 65536 atoms; the paper's 32768 need 15)
  int coef_bits = 16;    // coefficient, stored as FP16 by the engine
  int window_bits = 16;  // dense window element (full precision window: FP16)
  int dense_bits = 16;   // the baseline's dense KV element (FP16)
};

struct ByteTally {
  uint64_t dense_bits = 0;
  uint64_t window_bits = 0;
  uint64_t code_bits = 0;
  uint64_t steps = 0;  // attention calls counted (decode steps × layers)

  // One attention call of a layer with kv_heads × head_dim KV vectors.
  void add(const StepReads& reads, int kv_heads, int head_dim, const EntryBits& bits);
  void add(const ByteTally& other);
  uint64_t dense_bytes() const { return dense_bits / 8; }
  uint64_t loaded_bytes() const { return (window_bits + code_bits) / 8; }
  double ratio() const;  // dense / loaded; 0 when nothing was loaded
};

// The formula above as text, with the bit widths filled in.
std::string accounting_formula(const EntryBits& bits);

}  // namespace ispsim::dict
