#include "kernels/dict/train.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "common/error.h"
#include "kernels/dict/pursuit.h"
#include "kernels/model/ops.h"
#include "kernels/rag/blend_steps.h"
#include "kernels/rag/fp32_backend.h"
#include "kernels/rag/kv_store.h"

namespace ispsim::dict {

std::vector<KvPool> collect_kv(const model::Model& model, const std::vector<int>& tokens, int window) {
  const model::Config& c = model.config;
  if (window < 1) throw BadInput("dictionary training", "window must be at least 1 token");
  rag::Fp32Backend backend(model, rag::tile_tokens_for(c.head_dim));
  std::vector<KvPool> pools(static_cast<size_t>(c.num_layers) * 2);
  for (KvPool& p : pools) p.dim = c.head_dim;
  const int kvd = c.kv_dim();
  std::vector<float> k(kvd);
  for (size_t start = 0; start < tokens.size(); start += window) {
    const std::vector<int> part(tokens.begin() + start, tokens.begin() + std::min(tokens.size(), start + window));
    rag::PerLayer<float> k_pre, v;
    rag::document_kv(backend, part, k_pre, v);
    for (int l = 0; l < c.num_layers; ++l) {
      for (size_t t = 0; t < part.size(); ++t) {
        backend.rotate_keys(&k_pre[l][t * kvd], static_cast<int>(t), k.data());
        pools[l * 2].vectors.insert(pools[l * 2].vectors.end(), k.begin(), k.end());
        const float* vt = &v[l][t * kvd];
        pools[l * 2 + 1].vectors.insert(pools[l * 2 + 1].vectors.end(), vt, vt + kvd);
      }
    }
  }
  return pools;
}

namespace {

// Algorithm 1 on one vector with the Gram matrix: corr starts as D x, and each
// step subtracts γ·G_j. Writes the selected atoms and coefficients; returns the
// final residual in r (computed explicitly, for the gradient).
void gram_pursuit(const Dictionary& d, const std::vector<float>& gram, const float* x, int k, float* corr,
                  std::vector<char>& selected, int32_t* index, float* coef, float* r) {
  model::linear(x, 1, d.dim, d.data.data(), nullptr, d.atoms, corr);
  std::fill(selected.begin(), selected.end(), 0);
  std::copy_n(x, d.dim, r);
  for (int t = 0; t < k; ++t) {
    const int j = argmax_unselected(corr, selected.data(), d.atoms);
    const float g = corr[j];
    selected[j] = 1;
    index[t] = j;
    coef[t] = g;
    const float* row = &gram[static_cast<size_t>(j) * d.atoms];
    for (int i = 0; i < d.atoms; ++i) corr[i] -= g * row[i];
    const float* a = d.atom(j);
    for (int i = 0; i < d.dim; ++i) r[i] -= g * a[i];
  }
}

}  // namespace

Dictionary train_dictionary(const KvPool& pool, const TrainOptions& o,
                            const std::function<void(const EpochReport&)>& on_epoch) {
  const size_t n = pool.count();
  if (o.atoms < 1 || o.sparsity < 1 || o.sparsity > o.atoms || o.batch < 1 || o.epochs < 0)
    throw BadInput("dictionary training", "needs atoms >= 1, 1 <= sparsity <= atoms, batch >= 1, epochs >= 0");
  if (n < static_cast<size_t>(o.atoms))
    throw BadInput("dictionary training", "pool of " + std::to_string(n) + " vectors is smaller than " +
                                              std::to_string(o.atoms) + " atoms");
  std::mt19937_64 rng(o.seed);
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::shuffle(order.begin(), order.end(), rng);

  Dictionary d;
  d.atoms = o.atoms;
  d.dim = pool.dim;
  d.data.resize(static_cast<size_t>(d.atoms) * d.dim);
  for (int j = 0; j < d.atoms; ++j) std::copy_n(pool.vector(order[j]), d.dim, d.atom(j));
  normalize_atoms(d);

  const size_t cells = d.data.size();
  std::vector<float> m(cells, 0.0f), v(cells, 0.0f), grad(cells), gram(static_cast<size_t>(d.atoms) * d.atoms);
  std::vector<float> corr(d.atoms), r(d.dim), coef(o.sparsity);
  std::vector<int32_t> index(o.sparsity);
  std::vector<char> selected(d.atoms);
  const float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
  long long step = 0;
  for (int epoch = 1; epoch <= o.epochs; ++epoch) {
    std::shuffle(order.begin(), order.end(), rng);
    double err = 0.0, norm = 0.0;
    for (size_t b0 = 0; b0 < n; b0 += o.batch) {
      const size_t b1 = std::min(n, b0 + o.batch);
      model::linear(d.data.data(), d.atoms, d.dim, d.data.data(), nullptr, d.atoms, gram.data());  // G = D Dᵀ
      std::fill(grad.begin(), grad.end(), 0.0f);
      for (size_t b = b0; b < b1; ++b) {
        const float* x = pool.vector(order[b]);
        gram_pursuit(d, gram, x, o.sparsity, corr.data(), selected, index.data(), coef.data(), r.data());
        for (int i = 0; i < d.dim; ++i) {
          err += static_cast<double>(r[i]) * r[i];
          norm += static_cast<double>(x[i]) * x[i];
        }
        // d/dD_j of ||x - Σ γ_p d_p||² = -2 γ_j r (codes held fixed: the encoder is not trained).
        for (int p = 0; p < o.sparsity; ++p) {
          float* gj = &grad[static_cast<size_t>(index[p]) * d.dim];
          const float s = -2.0f * coef[p] / static_cast<float>(b1 - b0);
          for (int i = 0; i < d.dim; ++i) gj[i] += s * r[i];
        }
      }
      ++step;
      const float c1 = 1.0f - std::pow(beta1, static_cast<float>(step));
      const float c2 = 1.0f - std::pow(beta2, static_cast<float>(step));
      for (size_t i = 0; i < cells; ++i) {
        m[i] = beta1 * m[i] + (1.0f - beta1) * grad[i];
        v[i] = beta2 * v[i] + (1.0f - beta2) * grad[i] * grad[i];
        d.data[i] -= o.learning_rate * (m[i] / c1) / (std::sqrt(v[i] / c2) + eps);
      }
      normalize_atoms(d);
    }
    if (on_epoch) on_epoch(EpochReport{epoch, norm > 0.0 ? err / norm : 0.0});
  }
  return d;
}

double pursuit_relative_error(const Dictionary& d, const KvPool& pool, int k) {
  std::vector<float> gram(static_cast<size_t>(d.atoms) * d.atoms), corr(d.atoms), r(d.dim), coef(k);
  std::vector<int32_t> index(k);
  std::vector<char> selected(d.atoms);
  model::linear(d.data.data(), d.atoms, d.dim, d.data.data(), nullptr, d.atoms, gram.data());
  double err = 0.0, norm = 0.0;
  for (size_t i = 0; i < pool.count(); ++i) {
    const float* x = pool.vector(i);
    gram_pursuit(d, gram, x, k, corr.data(), selected, index.data(), coef.data(), r.data());
    for (int e = 0; e < d.dim; ++e) {
      err += static_cast<double>(r[e]) * r[e];
      norm += static_cast<double>(x[e]) * x[e];
    }
  }
  return norm > 0.0 ? err / norm : 0.0;
}

}  // namespace ispsim::dict
