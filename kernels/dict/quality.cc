#include "kernels/dict/quality.h"

#include <cmath>

#include "common/error.h"
#include "kernels/dict/decoder.h"
#include "kernels/rag/trace/quality.h"

namespace ispsim::dict {

double VariantQuality::perplexity() const { return tokens ? std::exp(nll_sum / static_cast<double>(tokens)) : 0.0; }

std::vector<Variant> paper_variants(const CacheSettings& base) {
  std::vector<Variant> v(4, Variant{"", base});
  v[0].name = "dense";
  v[0].settings.compress = false;
  v[1].name = "OMP K=" + std::to_string(base.k_high);
  v[1].settings.encoder = Encoder::kOmp;
  v[1].settings.hierarchical = false;
  v[2].name = "pursuit K=" + std::to_string(base.k_high);
  v[2].settings.encoder = Encoder::kPursuit;
  v[2].settings.hierarchical = false;
  v[3].name = "pursuit + hierarchical";
  v[3].settings.encoder = Encoder::kPursuit;
  v[3].settings.hierarchical = true;
  return v;
}

namespace {
// Logit rows of one sequence under one variant: row s predicts continuation[s].
rag::LogitRows run_sequence(const model::Model& model, const std::vector<Dictionary>& dicts, const CacheSettings& s,
                            const TokenSequence& seq, const EntryBits& bits, VariantQuality& q) {
  CompressedDecoder dec(model, dicts, s);
  rag::LogitRows rows(seq.continuation.size());
  dec.prefill(seq.prompt, rows[0]);
  for (size_t i = 1; i < seq.continuation.size(); ++i) {
    dec.decode(seq.continuation[i - 1], rows[i]);
    for (int l = 0; l < model.config.num_layers; ++l)
      q.bytes.add(dec.last_reads()[l], model.config.num_kv_heads, model.config.head_dim, bits);
  }
  for (int l = 0; l < model.config.num_layers; ++l) q.per_layer[l].add(dec.cache(l).error());
  return rows;
}
}  // namespace

std::vector<VariantQuality> evaluate(const model::Model& model, const std::vector<Dictionary>& dicts,
                                     const std::vector<Variant>& variants, const std::vector<TokenSequence>& sequences,
                                     const EntryBits& bits, const std::function<void(int, int)>& progress) {
  if (variants.empty()) throw BadInput("kv-quality", "no cache variants");
  std::vector<VariantQuality> out;
  for (const Variant& v : variants) {
    VariantQuality q;
    q.name = v.name;
    q.settings = v.settings;
    q.per_layer.resize(model.config.num_layers);
    out.push_back(q);
  }
  int done = 0;
  for (const TokenSequence& seq : sequences) {
    if (seq.prompt.empty() || seq.continuation.empty())
      throw BadInput("kv-quality", "every sequence needs a prompt and a continuation");
    rag::LogitRows reference;
    for (size_t v = 0; v < variants.size(); ++v) {
      rag::LogitRows rows = run_sequence(model, dicts, variants[v].settings, seq, bits, out[v]);
      if (v == 0) reference = rows;
      for (size_t i = 0; i < rows.size(); ++i) {
        const std::vector<double> lp = rag::log_softmax(rows[i]);
        out[v].nll_sum -= lp[seq.continuation[i]];
        ++out[v].tokens;
        out[v].top1_agreements += rag::top1(rows[i]) == rag::top1(reference[i]) ? 1 : 0;
        out[v].kl_sum += v == 0 ? 0.0 : rag::kl_divergence(reference[i], rows[i]);
      }
    }
    if (progress) progress(++done, static_cast<int>(sequences.size()));
  }
  return out;
}

std::vector<int> dense_greedy(const model::Model& model, const std::vector<int>& prompt, int tokens) {
  CacheSettings dense;
  dense.compress = false;
  CompressedDecoder dec(model, {}, dense);
  std::vector<float> logits;
  std::vector<int> answer;
  dec.prefill(prompt, logits);
  for (int i = 0; i < tokens; ++i) {
    answer.push_back(rag::top1(logits));
    if (i + 1 < tokens) dec.decode(answer.back(), logits);
  }
  return answer;
}

}  // namespace ispsim::dict
