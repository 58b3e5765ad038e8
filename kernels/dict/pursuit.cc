#include "kernels/dict/pursuit.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"
#include "kernels/model/ops.h"

namespace ispsim::dict {

namespace {
void check_budget(const Dictionary& d, int k) {
  if (k < 1 || k > d.atoms)
    throw BadInput("pursuit", "sparsity budget " + std::to_string(k) + " outside 1.." + std::to_string(d.atoms));
}

void start(const Dictionary& d, const float* x, int k, SparseCode& code, PursuitScratch& s) {
  check_budget(d, k);
  code.index.clear();
  code.coef.clear();
  s.corr.resize(d.atoms);
  s.selected.assign(d.atoms, 0);
  s.residual.assign(x, x + d.dim);
}
}  // namespace

int argmax_unselected(const float* c, const char* selected, int n) {
  int best = -1;
  float best_abs = -1.0f;
  for (int j = 0; j < n; ++j) {
    const float a = std::fabs(c[j]);
    if (!selected[j] && a > best_abs) {
      best_abs = a;
      best = j;
    }
  }
  return best;
}

void projection_pursuit(const Dictionary& d, const float* x, int k, SparseCode& code, PursuitScratch& s,
                        float* residual_out) {
  start(d, x, k, code, s);
  float* r = s.residual.data();
  for (int t = 0; t < k; ++t) {
    model::linear(r, 1, d.dim, d.data.data(), nullptr, d.atoms, s.corr.data());  // c = D^T r
    const int j = argmax_unselected(s.corr.data(), s.selected.data(), d.atoms);
    const float c = s.corr[j];
    s.selected[j] = 1;
    code.index.push_back(j);
    code.coef.push_back(c);
    const float* a = d.atom(j);
    for (int i = 0; i < d.dim; ++i) r[i] -= c * a[i];
  }
  if (residual_out != nullptr) std::copy_n(r, d.dim, residual_out);
}

// Cholesky factor L (lower, row-major k x k, grown one row per selected atom) of
// the Gram matrix of the selected atoms; gamma solves L L^T gamma = D_I^T x.
void omp(const Dictionary& d, const float* x, int k, SparseCode& code, PursuitScratch& s, float* residual_out) {
  start(d, x, k, code, s);
  s.chol.assign(static_cast<size_t>(k) * k, 0.0f);
  s.rhs.assign(k, 0.0f);
  s.tmp.assign(k, 0.0f);
  float* r = s.residual.data();
  float* L = s.chol.data();
  for (int t = 0; t < k; ++t) {
    model::linear(r, 1, d.dim, d.data.data(), nullptr, d.atoms, s.corr.data());
    const int j = argmax_unselected(s.corr.data(), s.selected.data(), d.atoms);
    const float* a = d.atom(j);
    // New row of L: w = L^{-1} (D_I^T a), diagonal sqrt(a·a - w·w).
    float ww = 0.0f;
    for (int p = 0; p < t; ++p) {
      float v = model::dot(d.atom(code.index[p]), a, d.dim);
      for (int q = 0; q < p; ++q) v -= L[p * k + q] * L[t * k + q];
      v /= L[p * k + p];
      L[t * k + p] = v;
      ww += v * v;
    }
    const float aa = model::dot(a, a, d.dim);
    const float diag2 = aa - ww;
    if (!(diag2 > 1e-6f * aa)) break;  // a lies in the span of the selected atoms
    L[t * k + t] = std::sqrt(diag2);
    s.selected[j] = 1;
    code.index.push_back(j);
    s.rhs[t] = model::dot(a, x, d.dim);
    const int n = t + 1;
    // Forward (L y = rhs) then backward (L^T gamma = y) substitution.
    for (int p = 0; p < n; ++p) {
      float v = s.rhs[p];
      for (int q = 0; q < p; ++q) v -= L[p * k + q] * s.tmp[q];
      s.tmp[p] = v / L[p * k + p];
    }
    code.coef.assign(n, 0.0f);
    for (int p = n - 1; p >= 0; --p) {
      float v = s.tmp[p];
      for (int q = p + 1; q < n; ++q) v -= L[q * k + p] * code.coef[q];
      code.coef[p] = v / L[p * k + p];
    }
    std::copy_n(x, d.dim, r);
    for (int p = 0; p < n; ++p) {
      const float* ap = d.atom(code.index[p]);
      for (int i = 0; i < d.dim; ++i) r[i] -= code.coef[p] * ap[i];
    }
  }
  if (residual_out != nullptr) std::copy_n(r, d.dim, residual_out);
}

void reconstruct(const Dictionary& d, const SparseCode& code, int atoms_used, float* out) {
  std::fill(out, out + d.dim, 0.0f);
  const int n = std::min(atoms_used, code.size());
  for (int p = 0; p < n; ++p) {
    const float* a = d.atom(code.index[p]);
    const float c = code.coef[p];
    for (int i = 0; i < d.dim; ++i) out[i] += c * a[i];
  }
}

}  // namespace ispsim::dict
