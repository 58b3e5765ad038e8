#include "kernels/rag/blend.h"

#include <cmath>
#include <string>

#include "common/error.h"
#include "kernels/int/int_engine.h"
#include "kernels/model/fp32_lm.h"
#include "kernels/rag/blend_steps.h"
#include "kernels/rag/fnv1a.h"
#include "kernels/rag/fp32_backend.h"
#include "kernels/rag/int_backend.h"

namespace ispsim::rag {
namespace {

StoreShape shape_of(const RagModel& engine) {
  const model::Config& c = engine.config();
  StoreShape s;
  s.num_layers = c.num_layers;
  s.num_kv_heads = c.num_kv_heads;
  s.head_dim = c.head_dim;
  s.tile_tokens = tile_tokens_for(c.head_dim);
  return s;
}

// The prompt a blend or full prefill runs on, after every input check.
struct Prompt {
  std::vector<const DocumentKv*> docs;
  std::vector<int> context, query;
  std::vector<uint64_t> counts;
  int hkvd_count = 0;
};

Prompt check_inputs(const RagModel& engine, const KvStore& store, const std::vector<std::string>& doc_ids,
                    const std::vector<int>& query, const BlendOptions& o) {
  const std::string store_name = store.dir().empty() ? "kv store" : store.dir();
  if (o.integer != engine.is_integer())
    throw BadInput("blend", std::string("BlendOptions::integer is ") + (o.integer ? "true" : "false") +
                                " but the engine is " + engine.engine_name());
  if (store.fingerprint() != engine.fingerprint() || store.engine() != engine.engine_name())
    throw BadInput(store_name, "was made with another model or engine (store: " + store.engine() + ", fingerprint " +
                                   hex64(store.fingerprint()) + "; this model: " + engine.engine_name() +
                                   ", fingerprint " + hex64(engine.fingerprint()) + ")");
  const StoreShape s = shape_of(engine);
  if (store.shape().num_layers != s.num_layers || store.shape().num_kv_heads != s.num_kv_heads ||
      store.shape().head_dim != s.head_dim || store.shape().tile_tokens != s.tile_tokens)
    throw BadInput(store_name, "KV shape does not match the model's");
  if (!(o.ratio >= 0.0 && o.ratio <= 1.0))
    throw BadInput("--ratio", "recomputation ratio must be in [0, 1], got " + std::to_string(o.ratio));
  if (o.answer_tokens < 1) throw BadInput("--tokens", "answer tokens must be >= 1");
  if (doc_ids.empty()) throw BadInput("--docs", "no document ids given");
  if (query.empty()) throw BadInput("--query", "the query has no tokens");
  Prompt p;
  p.query = query;
  for (const std::string& id : doc_ids) {
    const DocumentKv& d = store.document(id);
    p.docs.push_back(&d);
    p.context.insert(p.context.end(), d.tokens.begin(), d.tokens.end());
    p.counts.push_back(d.tokens.size());
  }
  const int64_t C = static_cast<int64_t>(p.context.size()), Q = static_cast<int64_t>(query.size());
  const int64_t needed = C + Q + o.answer_tokens - 1;
  if (needed > engine.context())
    throw BadInput("prompt", std::to_string(C) + " document tokens + " + std::to_string(Q) + " query tokens + " +
                                 std::to_string(o.answer_tokens - 1) + " fed-back answer tokens = " +
                                 std::to_string(needed) + " tokens exceed the model's context of " +
                                 std::to_string(engine.context()) + " tokens");
  p.hkvd_count = static_cast<int>(std::llround(o.ratio * static_cast<double>(C)));
  return p;
}

BlendOutput output_frame(const Prompt& p) {
  BlendOutput out;
  out.context_tokens = p.context;
  out.query_tokens = p.query;
  out.doc_token_counts = p.counts;
  return out;
}

// The stored KV of the prompt's documents, concatenated: [layer][C·kv_dim].
template <typename Value>
void concatenate(const Prompt& p, int layers, const std::vector<std::vector<Value>> DocumentKv::*k,
                 const std::vector<std::vector<Value>> DocumentKv::*v, PerLayer<Value>& ks, PerLayer<Value>& vs) {
  ks.assign(layers, {});
  vs.assign(layers, {});
  for (const DocumentKv* d : p.docs)
    for (int l = 0; l < layers; ++l) {
      ks[l].insert(ks[l].end(), (d->*k)[l].begin(), (d->*k)[l].end());
      vs[l].insert(vs[l].end(), (d->*v)[l].begin(), (d->*v)[l].end());
    }
}

std::vector<float> int_logits_to_float(const std::vector<int32_t>& logits, int frac_bits) {
  // As integer::IntegerLm hands logits out: one conversion after the integer path.
  const float unit = std::ldexp(1.0f, -frac_bits);
  std::vector<float> out(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) out[i] = static_cast<float>(logits[i]) * unit;
  return out;
}

}  // namespace

int BlendOutput::hkvd_count() const {
  if (hkvd_masks.size() < 2) return 0;
  int n = 0;
  for (bool b : hkvd_masks[1]) n += b;
  return n;
}

DocumentKv compute_document_kv(const RagModel& engine, const Document& document) {
  const std::string where = "document '" + document.id + "'";
  if (document.tokens.empty()) throw BadInput(where, "has no tokens");
  if (static_cast<int>(document.tokens.size()) > engine.context())
    throw BadInput(where, std::to_string(document.tokens.size()) + " tokens exceed the model's context of " +
                              std::to_string(engine.context()) + " tokens");
  DocumentKv kv;
  kv.id = document.id;
  kv.tokens = document.tokens;
  const int tile = tile_tokens_for(engine.config().head_dim);
  if (engine.is_integer()) {
    IntBackend b(engine.integer_model(), tile);
    document_kv(b, document.tokens, kv.k_int, kv.v_int);
  } else {
    Fp32Backend b(engine.model(), tile);
    document_kv(b, document.tokens, kv.k, kv.v);
  }
  return kv;
}

KvStore precompute(const RagModel& engine, const std::vector<Document>& documents) {
  KvStore store(engine.engine_name(), engine.fingerprint(), shape_of(engine));
  for (const Document& d : documents) store.add(compute_document_kv(engine, d));
  return store;
}

BlendOutput blend(const RagModel& engine, const KvStore& store, const std::vector<std::string>& doc_ids,
                  const std::vector<int>& query_tokens, const BlendOptions& options) {
  const Prompt p = check_inputs(engine, store, doc_ids, query_tokens, options);
  BlendOutput out = output_frame(p);
  const int layers = engine.config().num_layers, tile = store.shape().tile_tokens;
  if (engine.is_integer()) {
    PerLayer<int32_t> k, v;
    concatenate(p, layers, &DocumentKv::k_int, &DocumentKv::v_int, k, v);
    IntBackend b(engine.integer_model(), tile);
    BlendRun<IntBackend> run = cache_blend(b, p.context, p.query, k, v, p.hkvd_count, options.answer_tokens);
    out.hkvd_masks = std::move(run.masks);
    out.answer = std::move(run.answer);
    for (const auto& row : run.logits) out.logits.push_back(int_logits_to_float(row, engine.integer_model().logits_frac));
    const int frac = layers > 1 ? b.deviation_frac_bits(1) : 0;
    for (int64_t d : run.deviation) out.deviation.push_back(std::ldexp(static_cast<double>(d), -frac));
  } else {
    PerLayer<float> k, v;
    concatenate(p, layers, &DocumentKv::k, &DocumentKv::v, k, v);
    Fp32Backend b(engine.model(), tile);
    BlendRun<Fp32Backend> run = cache_blend(b, p.context, p.query, k, v, p.hkvd_count, options.answer_tokens);
    out.hkvd_masks = std::move(run.masks);
    out.answer = std::move(run.answer);
    out.logits = std::move(run.logits);
    out.deviation = std::move(run.deviation);
  }
  return out;
}

BlendOutput full_prefill(const RagModel& engine, const KvStore& store, const std::vector<std::string>& doc_ids,
                         const std::vector<int>& query_tokens, const BlendOptions& options) {
  const Prompt p = check_inputs(engine, store, doc_ids, query_tokens, options);
  BlendOutput out = output_frame(p);
  const int layers = engine.config().num_layers;
  out.hkvd_masks.assign(layers, std::vector<bool>(p.context.size(), true));
  out.hkvd_masks[0].clear();
  std::vector<int> prompt = p.context;
  prompt.insert(prompt.end(), p.query.begin(), p.query.end());
  const int capacity = static_cast<int>(prompt.size()) + options.answer_tokens - 1;
  if (engine.is_integer()) {
    integer::IntegerEngine lm(engine.integer_model(), capacity);
    std::vector<int32_t> logits;
    lm.forward(prompt.data(), static_cast<int>(prompt.size()), false, logits);
    for (int i = 0; i < options.answer_tokens; ++i) {
      if (i > 0) lm.forward(&out.answer.back(), 1, false, logits);
      out.answer.push_back(argmax(logits));
      out.logits.push_back(int_logits_to_float(logits, engine.integer_model().logits_frac));
    }
  } else {
    model::Fp32Lm lm(engine.model(), capacity);
    std::vector<float> logits;
    lm.forward(prompt.data(), static_cast<int>(prompt.size()), false, logits);
    for (int i = 0; i < options.answer_tokens; ++i) {
      if (i > 0) lm.forward(&out.answer.back(), 1, false, logits);
      out.answer.push_back(argmax(logits));
      out.logits.push_back(logits);
    }
  }
  return out;
}

}  // namespace ispsim::rag
