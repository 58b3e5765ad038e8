#include "kernels/dict/kv_cache.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/error.h"
#include "kernels/model/ops.h"

namespace ispsim::dict {

float round_to_fp16(float x) {
  if (x == 0.0f || !std::isfinite(x)) return x;
  const float a = std::fabs(x);
  if (a >= 65520.0f) return std::copysign(INFINITY, x);
  int e = 0;
  std::frexp(a, &e);                                     // a = m · 2^e, m in [0.5, 1)
  const float quantum = std::ldexp(1.0f, std::max(e - 1, -14) - 10);  // 10 mantissa bits; subnormals below 2^-14
  return std::copysign(std::nearbyint(a / quantum) * quantum, x);     // ties to even
}

void ReconstructionError::add(const ReconstructionError& o) {
  key_error += o.key_error;
  key_norm += o.key_norm;
  value_error += o.value_error;
  value_norm += o.value_norm;
  vectors += o.vectors;
}

CompressedKvCache::CompressedKvCache(const Dictionary& keys, const Dictionary& values, int heads, int kv_heads,
                                     int head_dim, const CacheSettings& settings)
    : keys_(keys), values_(values), heads_(heads), kv_heads_(kv_heads), head_dim_(head_dim),
      kv_dim_(kv_heads * head_dim), s_(settings) {
  if (heads < 1 || kv_heads < 1 || heads % kv_heads != 0 || head_dim < 1)
    throw BadInput("compressed KV cache", "heads must be a positive multiple of kv_heads, head_dim positive");
  if (!s_.compress) return;
  if (s_.unit_tokens < 1 || s_.unit_tokens > s_.window_tokens)
    throw BadInput("compressed KV cache", "the compression unit U must lie in 1..W (W = " +
                                              std::to_string(s_.window_tokens) + ")");
  if (s_.k_high < 1 || s_.k_high > keys.atoms || s_.k_high > values.atoms)
    throw BadInput("compressed KV cache", "K_high must lie in 1..atoms");
  if (s_.hierarchical && (s_.k_low < 1 || s_.k_low > s_.k_high))
    throw BadInput("compressed KV cache", "K_low must lie in 1..K_high");
  if (s_.hierarchical && !(s_.refine_fraction >= 0.0 && s_.refine_fraction <= 1.0))
    throw BadInput("compressed KV cache", "the refine fraction must lie in 0..1");
  if (keys.dim != head_dim || values.dim != head_dim)
    throw BadInput("compressed KV cache", "dictionary atoms have " + std::to_string(keys.dim) +
                                              " elements, the model's heads " + std::to_string(head_dim));
}

const SparseCode& CompressedKvCache::code(int t, int g, Stream s) const {
  return codes_[(static_cast<size_t>(t) * kv_heads_ + g) * 2 + static_cast<int>(s)];
}

void CompressedKvCache::append(const float* k, const float* v) {
  window_k_.insert(window_k_.end(), k, k + kv_dim_);
  window_v_.insert(window_v_.end(), v, v + kv_dim_);
  while (s_.compress && window_tokens() > s_.window_tokens) compress_oldest();
}

void CompressedKvCache::encode(const Dictionary& d, const float* x, SparseCode& code, double& err, double& norm) {
  if (s_.encoder == Encoder::kOmp)
    omp(d, x, s_.k_high, code, scratch_);
  else
    projection_pursuit(d, x, s_.k_high, code, scratch_);
  for (float& c : code.coef) c = round_to_fp16(c);  // what the cache stores
  residual_.resize(head_dim_);
  reconstruct(d, code, code.size(), residual_.data());
  for (int i = 0; i < head_dim_; ++i) {
    const double e = static_cast<double>(x[i]) - residual_[i];
    err += e * e;
    norm += static_cast<double>(x[i]) * x[i];
  }
}

void CompressedKvCache::compress_oldest() {
  const int u = s_.unit_tokens;
  for (int t = 0; t < u; ++t) {
    for (int g = 0; g < kv_heads_; ++g) {
      const size_t at = static_cast<size_t>(t) * kv_dim_ + static_cast<size_t>(g) * head_dim_;
      SparseCode kc, vc;
      encode(keys_, &window_k_[at], kc, error_.key_error, error_.key_norm);
      encode(values_, &window_v_[at], vc, error_.value_error, error_.value_norm);
      codes_.push_back(std::move(kc));
      codes_.push_back(std::move(vc));
      ++error_.vectors;
    }
  }
  const auto cut = static_cast<std::ptrdiff_t>(u) * kv_dim_;
  window_k_.erase(window_k_.begin(), window_k_.begin() + cut);
  window_v_.erase(window_v_.begin(), window_v_.begin() + cut);
  compressed_ += u;
}

void CompressedKvCache::attend(const float* q, float* out, StepReads* reads) {
  const int nc = compressed_, nw = window_tokens(), group = heads_ / kv_heads_;
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim_));
  logits_.resize(static_cast<size_t>(nc) + nw);
  budget_.assign(nc, s_.k_high);
  const int refine = s_.hierarchical ? static_cast<int>(std::ceil(s_.refine_fraction * nc - 1e-9)) : nc;
  if (reads != nullptr) {
    reads->window_tokens += nw;
    reads->compressed_tokens += nc;
  }
  for (int g = 0; g < kv_heads_; ++g) {
    refined_any_.assign(nc, s_.hierarchical ? 0 : 1);
    for (int h = g * group; h < (g + 1) * group; ++h) {
      const float* qh = q + static_cast<size_t>(h) * head_dim_;
      float* oh = out + static_cast<size_t>(h) * head_dim_;
      if (nc > 0) {
        // Q·D_Kᵀ once per query head; then every compressed logit is a gather.
        atom_scores_.resize(keys_.atoms);
        model::linear(qh, 1, head_dim_, keys_.data.data(), nullptr, keys_.atoms, atom_scores_.data());
        for (float& sc : atom_scores_) sc *= scale;
        const int first = s_.hierarchical ? s_.k_low : s_.k_high;
        for (int i = 0; i < nc; ++i) {
          const SparseCode& c = code(i, g, Stream::kKey);
          float acc = 0.0f;
          for (int p = 0, e = std::min(first, c.size()); p < e; ++p) acc += c.coef[p] * atom_scores_[c.index[p]];
          logits_[i] = acc;
        }
        if (s_.hierarchical) {
          // Top `refine` tokens by coarse score (stable: earlier token first on ties), refined
          // by continuing the same sum, so N = 100 % gives exactly the K_high logits.
          order_.resize(nc);
          std::iota(order_.begin(), order_.end(), 0);
          std::stable_sort(order_.begin(), order_.end(), [&](int a, int b) { return logits_[a] > logits_[b]; });
          std::fill(budget_.begin(), budget_.end(), s_.k_low);
          for (int r = 0; r < refine; ++r) {
            const int i = order_[r];
            const SparseCode& c = code(i, g, Stream::kKey);
            float acc = logits_[i];
            for (int p = s_.k_low; p < std::min(s_.k_high, c.size()); ++p) acc += c.coef[p] * atom_scores_[c.index[p]];
            logits_[i] = acc;
            budget_[i] = s_.k_high;
            refined_any_[i] = 1;
          }
        }
      }
      for (int t = 0; t < nw; ++t)
        logits_[nc + t] = model::dot(qh, &window_k_[static_cast<size_t>(t) * kv_dim_ + g * head_dim_], head_dim_) * scale;
      model::softmax(logits_.data(), nc + nw);  // one softmax over compressed region and window
      std::fill(oh, oh + head_dim_, 0.0f);
      if (nc > 0) {
        atom_weights_.assign(values_.atoms, 0.0f);
        for (int i = 0; i < nc; ++i) {
          const SparseCode& c = code(i, g, Stream::kValue);
          for (int p = 0, e = std::min(budget_[i], c.size()); p < e; ++p) atom_weights_[c.index[p]] += logits_[i] * c.coef[p];
        }
        for (int j = 0; j < values_.atoms; ++j) {  // D_Vᵀ w
          const float w = atom_weights_[j];
          if (w == 0.0f) continue;
          const float* a = values_.atom(j);
          for (int e = 0; e < head_dim_; ++e) oh[e] += w * a[e];
        }
      }
      for (int t = 0; t < nw; ++t) {
        const float p = logits_[nc + t];
        const float* v = &window_v_[static_cast<size_t>(t) * kv_dim_ + g * head_dim_];
        for (int e = 0; e < head_dim_; ++e) oh[e] += p * v[e];
      }
    }
    if (reads != nullptr) {
      for (int i = 0; i < nc; ++i) {
        const int budget = refined_any_[i] ? s_.k_high : s_.k_low;
        reads->key_entries += std::min(budget, code(i, g, Stream::kKey).size());
        reads->value_entries += std::min(budget, code(i, g, Stream::kValue).size());
        reads->refined_tokens += s_.hierarchical && refined_any_[i] ? 1 : 0;
      }
    }
  }
}

}  // namespace ispsim::dict
