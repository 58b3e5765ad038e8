// Sparse coding of one KV vector over a dictionary, FP32 (paper 1 §3.2.3):
// - projection_pursuit: Algorithm 1. Each step projects the residual on every
//   atom (c = D^T r), takes the unselected atom with the largest |c_j|, uses
//   c_j itself as its coefficient and subtracts c_j d_j from the residual.
// - omp: orthogonal matching pursuit, the baseline: the same selection, then a
//   least-squares refit of every selected coefficient at each step.
// Codes keep the selection order, so the first k atoms of a code are the ones a
// k-atom pursuit would have chosen (what hierarchical sparsity reads).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/dict/dictionary.h"

namespace ispsim::dict {

struct SparseCode {
  std::vector<int32_t> index;  // atom ids in selection order, distinct
  std::vector<float> coef;     // coefficient of each selected atom
  int size() const { return static_cast<int>(index.size()); }
};

// Scratch buffers reused across calls (no allocation per vector once warm).
struct PursuitScratch {
  std::vector<float> corr, residual, gram, chol, rhs, tmp;
  std::vector<char> selected;
};

// Algorithm 1 with sparsity budget k (k <= atoms). residual_out, when not null,
// receives x - D·gamma (dim values).
void projection_pursuit(const Dictionary& d, const float* x, int k, SparseCode& code, PursuitScratch& s,
                        float* residual_out = nullptr);

// OMP with budget k. Stops early (shorter code) only if a selected atom is
// numerically dependent on the ones before it.
void omp(const Dictionary& d, const float* x, int k, SparseCode& code, PursuitScratch& s, float* residual_out = nullptr);

// out = sum over the first `atoms_used` entries of the code of coef * atom.
void reconstruct(const Dictionary& d, const SparseCode& code, int atoms_used, float* out);

// Index of the largest |c_j| over unselected atoms; first one on ties.
int argmax_unselected(const float* c, const char* selected, int n);

}  // namespace ispsim::dict
