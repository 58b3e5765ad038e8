// Dictionary learning (paper 1 §3.2.2): key and value activations of every
// layer are collected from calibration text into a shuffled pool, and one
// dictionary per layer and stream is trained. The encoder is the projection
// pursuit itself (not trained); only the decoder D is optimised, on the
// reconstruction MSE, with Adam, and its atoms are renormalised to unit length
// after every step. Then each dictionary is quantised to INT8 per tensor.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/dict/dictionary.h"
#include "kernels/model/model.h"

namespace ispsim::dict {

// Vectors of one layer and stream: count × dim, row-major.
struct KvPool {
  int dim = 0;
  std::vector<float> vectors;
  size_t count() const { return dim ? vectors.size() / dim : 0; }
  const float* vector(size_t i) const { return &vectors[i * dim]; }
};

// Runs the FP32 engine over `tokens` in consecutive windows of `window` tokens
// (each from position 0) and returns one pool per layer and stream (index
// layer * 2 + stream): keys after RoPE (the cache holds rotated keys, and the
// dictionary-domain logits need q·k with the rotated k), values, one vector
// per KV head and token.
std::vector<KvPool> collect_kv(const model::Model& model, const std::vector<int>& tokens, int window);

struct TrainOptions {
  int atoms = 1024;         // M
  int sparsity = 16;        // K of the pursuit that encodes during training (= K_high at run time)
  int epochs = 4;           // passes over the shuffled pool
  int batch = 512;          // vectors per Adam step
  float learning_rate = 1e-3f;
  uint64_t seed = 1;
};

struct EpochReport {
  int epoch = 0;
  double relative_error = 0.0;  // Σ||x - Dγ||² / Σ||x||² over the epoch, codes of the pre-step dictionary
};

// Trains one FP32 dictionary on `pool` (unit-norm atoms). Atoms start as
// distinct pool vectors drawn with `seed`, normalised. The pursuit inside
// training is Algorithm 1 computed with the Gram matrix G = D Dᵀ (c ← c − γ G_j
// instead of c ← Dᵀ r): the same selections and coefficients up to FP32
// rounding, about ten times cheaper. on_epoch (optional) sees each epoch.
Dictionary train_dictionary(const KvPool& pool, const TrainOptions& options,
                            const std::function<void(const EpochReport&)>& on_epoch = {});

// Σ||x - Dγ||² / Σ||x||² of the projection pursuit with k atoms over `pool`
// (computed with the Gram matrix, as in training; the atoms need not be unit
// norm: the INT8 dictionary's dequantized atoms are not exactly).
double pursuit_relative_error(const Dictionary& d, const KvPool& pool, int k);

}  // namespace ispsim::dict
