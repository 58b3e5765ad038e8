// RAG on the functional engine: precomputing a document KV store, CacheBlend
// selective recomputation with the fused kernel, and the full-prefill
// reference, on the FP32 engine or the integer-only engine.
//
// CacheBlend (paper 2 §II-C, §IV-B): the prompt is the retrieved documents'
// tokens (their stored KV moved to consecutive positions: keys re-rotated)
// followed by the query tokens.
//  1. Layer 0 runs fully over every prompt token.
//  2. The fresh layer-1 K and V of each context token are compared with the
//     stored ones: deviation_t = ||K_fresh - K_stored||² + ||V_fresh - V_stored||²
//     over all KV heads, in real units (pre-RoPE keys; RoPE is a rotation, so
//     the distance is the same after it).
//  3. HKVD = the round(ratio · C) context tokens with the largest deviation
//     (ties: the earlier token); the query tokens are always recomputed.
//  4. Layers ≥ 1: the HKVD rows and the query rows (Q_fused) are recomputed;
//     they attend, with the jagged causal mask (each row sees positions up to
//     its own), over the merged KV: the stored KV with HKVD entries replaced
//     by fresh ones, plus the query KV. Attention is the tiled fused kernel
//     (fused_attention.h) over T-token tiles.
//  5. Greedy decoding of answer_tokens tokens on the merged cache.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/rag/kv_store.h"
#include "kernels/rag/rag_model.h"

namespace ispsim::rag {

struct Document {
  std::string id;
  std::vector<int> tokens;
};

// Each document's KV computed independently from position 0 by `engine`.
// BadInput for a document longer than the model's context or with no tokens.
DocumentKv compute_document_kv(const RagModel& engine, const Document& document);
KvStore precompute(const RagModel& engine, const std::vector<Document>& documents);

struct BlendOptions {
  double ratio = 0.15;     // share of context tokens recomputed (CacheBlend's default 15 %), in [0, 1]
  int answer_tokens = 8;   // tokens decoded greedily, >= 1
  bool integer = false;    // must match the engine (RagModel::is_integer()); BadInput otherwise
};

struct BlendOutput {
  std::vector<int> context_tokens;  // per-document tokens, concatenated (C tokens)
  std::vector<int> query_tokens;
  std::vector<uint64_t> doc_token_counts;
  // Per layer: [0] empty (layer 0 is always computed fully), then C bits each:
  // true = the context token was recomputed at that layer. full_prefill: all true.
  std::vector<std::vector<bool>> hkvd_masks;
  // Next-token logits after the prompt, then after each fed answer token:
  // answer_tokens rows of vocab_size (integer engine: converted from its
  // int32 logits at the very end, as IntegerLm does).
  std::vector<std::vector<float>> logits;
  std::vector<int> answer;  // argmax of each logits row
  // Layer-1 deviation per context token (real units, see above); full_prefill: empty.
  std::vector<double> deviation;
  int hkvd_count() const;   // context tokens recomputed at layer 1
};

// BadInput for: a store made with another model or engine, a missing
// document id, an empty query, a ratio outside [0, 1], answer_tokens < 1, or a
// prompt (C + query + answer_tokens - 1 tokens) longer than the model's context.
BlendOutput blend(const RagModel& engine, const KvStore& store, const std::vector<std::string>& doc_ids,
                  const std::vector<int>& query_tokens, const BlendOptions& options);

// The reference: the whole prompt prefilled from raw tokens by the engine's
// own forward pass (Fp32Lm or IntegerEngine), then the same greedy decode;
// the same checks and output layout.
BlendOutput full_prefill(const RagModel& engine, const KvStore& store, const std::vector<std::string>& doc_ids,
                         const std::vector<int>& query_tokens, const BlendOptions& options);

}  // namespace ispsim::rag
