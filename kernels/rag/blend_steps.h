// The CacheBlend steps (blend.h) written once over a backend: Fp32Backend or
// IntBackend. Instantiated in blend_steps_fp32.cc and blend_steps_int.cc; the
// integer instantiation is compiled under -mgeneral-regs-only too, so the
// whole integer blend (not only its operators) is proven float-free.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ispsim::rag {

template <typename Value>
using PerLayer = std::vector<std::vector<Value>>;  // [layer][token][kv_dim]

template <typename Backend>
struct BlendRun {
  std::vector<std::vector<bool>> masks;                        // [layer][C]; [0] empty
  std::vector<std::vector<typename Backend::Value>> logits;    // answer_tokens rows
  std::vector<int> answer;
  std::vector<typename Backend::Deviation> deviation;          // [C], layer 1
};

// First index of the largest value.
template <typename Value>
int argmax(const std::vector<Value>& v) {
  int best = 0;
  for (int i = 1; i < static_cast<int>(v.size()); ++i)
    if (v[i] > v[best]) best = i;
  return best;
}

// KV of one document from position 0, every layer: keys before RoPE.
template <typename Backend>
void document_kv(Backend& b, const std::vector<int>& tokens, PerLayer<typename Backend::Value>& k_pre,
                 PerLayer<typename Backend::Value>& v_out) {
  using Value = typename Backend::Value;
  const int n = static_cast<int>(tokens.size()), L = b.layers(), kvd = b.kv_dim();
  std::vector<int> pos(n);
  for (int t = 0; t < n; ++t) pos[t] = t;
  std::vector<Value> x(static_cast<size_t>(n) * b.hidden()), q(static_cast<size_t>(n) * b.q_dim()),
      att(static_cast<size_t>(n) * b.q_dim()), k(static_cast<size_t>(n) * kvd);
  b.embed(tokens.data(), n, x.data());
  k_pre.assign(L, std::vector<Value>(static_cast<size_t>(n) * kvd));
  v_out.assign(L, std::vector<Value>(static_cast<size_t>(n) * kvd));
  for (int l = 0; l < L; ++l) {
    b.qkv(l, x.data(), n, pos.data(), q.data(), k_pre[l].data(), v_out[l].data());
    if (l == L - 1) break;  // the last layer's output is not part of the KV
    for (int t = 0; t < n; ++t)
      b.rotate_keys(&k_pre[l][static_cast<size_t>(t) * kvd], t, &k[static_cast<size_t>(t) * kvd]);
    b.attention(l, q.data(), pos.data(), n, k.data(), v_out[l].data(), n, att.data());
    b.finish_layer(l, att.data(), n, x.data());
  }
}

// CacheBlend over context (stored KV: stored_k/stored_v, [layer][C·kv_dim],
// keys before RoPE) and query; hkvd_count context tokens recomputed.
template <typename Backend>
BlendRun<Backend> cache_blend(Backend& b, const std::vector<int>& context, const std::vector<int>& query,
                              const PerLayer<typename Backend::Value>& stored_k,
                              const PerLayer<typename Backend::Value>& stored_v, int hkvd_count, int answer_tokens) {
  using Value = typename Backend::Value;
  const int C = static_cast<int>(context.size()), Q = static_cast<int>(query.size()), P = C + Q;
  const int L = b.layers(), h = b.hidden(), qd = b.q_dim(), kvd = b.kv_dim();
  const int capacity = P + answer_tokens - 1;
  BlendRun<Backend> run;
  run.masks.assign(L, std::vector<bool>());

  std::vector<int> prompt(context);
  prompt.insert(prompt.end(), query.begin(), query.end());
  std::vector<int> rows(P);  // prompt positions computed at the current layer
  for (int t = 0; t < P; ++t) rows[t] = t;
  PerLayer<Value> cache_k(L, std::vector<Value>(static_cast<size_t>(capacity) * kvd));
  PerLayer<Value> cache_v(L, std::vector<Value>(static_cast<size_t>(capacity) * kvd));
  std::vector<Value> x(static_cast<size_t>(P) * h), q(static_cast<size_t>(P) * qd), k_pre(static_cast<size_t>(P) * kvd),
      v(static_cast<size_t>(P) * kvd), att(static_cast<size_t>(P) * qd);
  b.embed(prompt.data(), P, x.data());

  for (int l = 0; l < L; ++l) {
    b.qkv(l, x.data(), static_cast<int>(rows.size()), rows.data(), q.data(), k_pre.data(), v.data());
    std::vector<bool> fresh(P, true);
    if (l == 1) {
      // Fresh layer-1 KV of every prompt token vs the stored KV: pick the HKVD tokens.
      run.deviation.resize(C);
      for (int t = 0; t < C; ++t) {
        const size_t o = static_cast<size_t>(t) * kvd;
        run.deviation[t] = b.deviation(1, &k_pre[o], &stored_k[1][o], &v[o], &stored_v[1][o]);
      }
      std::vector<int> order(C);
      for (int t = 0; t < C; ++t) order[t] = t;
      std::stable_sort(order.begin(), order.end(),
                       [&](int a, int c) { return run.deviation[a] > run.deviation[c]; });
      std::vector<bool> hkvd(C, false);
      for (int i = 0; i < hkvd_count && i < C; ++i) hkvd[order[i]] = true;
      // Keep only the HKVD rows and the query rows (Q_fused) from here on.
      std::vector<int> kept;
      for (int t = 0; t < P; ++t)
        if (t >= C || hkvd[t]) kept.push_back(t);
      for (size_t i = 0; i < kept.size(); ++i) {
        const size_t from = static_cast<size_t>(kept[i]);
        std::copy_n(&x[from * h], h, &x[i * h]);
        std::copy_n(&q[from * qd], qd, &q[i * qd]);
        std::copy_n(&k_pre[from * kvd], kvd, &k_pre[i * kvd]);
        std::copy_n(&v[from * kvd], kvd, &v[i * kvd]);
      }
      rows = kept;
      run.masks[1] = hkvd;
    } else if (l > 1) {
      run.masks[l] = run.masks[1];
    }
    if (l >= 1)
      for (int t = 0; t < C; ++t) fresh[t] = run.masks[l][t];
    // The merged KV of this layer: stored entries moved to their prompt position, fresh ones for the rows computed.
    for (int t = 0; t < C; ++t)
      if (!fresh[t]) {
        const size_t o = static_cast<size_t>(t) * kvd;
        b.rotate_keys(&stored_k[l][o], t, &cache_k[l][o]);
        std::copy_n(&stored_v[l][o], kvd, &cache_v[l][o]);
      }
    for (size_t i = 0; i < rows.size(); ++i) {
      const size_t o = static_cast<size_t>(rows[i]) * kvd;
      b.rotate_keys(&k_pre[i * kvd], rows[i], &cache_k[l][o]);
      std::copy_n(&v[i * kvd], kvd, &cache_v[l][o]);
    }
    const int n = static_cast<int>(rows.size());
    b.attention(l, q.data(), rows.data(), n, cache_k[l].data(), cache_v[l].data(), P, att.data());
    b.finish_layer(l, att.data(), n, x.data());
  }

  // Greedy decoding on the merged cache; the last computed row is the last query token.
  run.logits.resize(answer_tokens);
  b.logits(&x[(rows.size() - 1) * h], run.logits[0]);
  run.answer.push_back(argmax(run.logits[0]));
  for (int i = 1; i < answer_tokens; ++i) {
    const int p = P + i - 1;
    b.embed(&run.answer[i - 1], 1, x.data());
    for (int l = 0; l < L; ++l) {
      b.qkv(l, x.data(), 1, &p, q.data(), k_pre.data(), v.data());
      b.rotate_keys(k_pre.data(), p, &cache_k[l][static_cast<size_t>(p) * kvd]);
      std::copy_n(v.data(), kvd, &cache_v[l][static_cast<size_t>(p) * kvd]);
      b.attention(l, q.data(), &p, 1, cache_k[l].data(), cache_v[l].data(), p + 1, att.data());
      b.finish_layer(l, att.data(), 1, x.data());
    }
    b.logits(x.data(), run.logits[i]);
    run.answer.push_back(argmax(run.logits[i]));
  }
  return run;
}

}  // namespace ispsim::rag
