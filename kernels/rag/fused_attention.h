// The fused attention kernel of CacheBlend (paper 2 §IV-B), FP32: a block of
// query rows (Q_fused: recomputed context rows and query rows, each with its
// own position) attends over one merged KV cache under the jagged causal mask
// (row r sees cache positions 0 .. pos[r]), reading the cache in tiles of T
// tokens with the online softmax (running maximum and running sum per row and
// head; the partial output is rescaled whenever the maximum grows), so no
// score row longer than a tile is ever held.
#pragma once

namespace ispsim::rag {

struct AttentionShape {
  int heads = 0;
  int kv_heads = 0;   // heads sharing a KV head: heads / kv_heads (GQA)
  int head_dim = 0;
  int tile_tokens = 0;  // T
  int q_dim() const { return heads * head_dim; }
  int kv_dim() const { return kv_heads * head_dim; }
};

// q: [rows][q_dim] (RoPE applied, not yet scaled); pos: [rows] positions, each
// < cache_tokens; k, v: [cache_tokens][kv_dim] (keys rotated to their cache
// position); out: [rows][q_dim]. Scores are q·k / sqrt(head_dim).
void fused_attention(const AttentionShape& shape, const float* q, const int* pos, int rows, const float* k,
                     const float* v, int cache_tokens, float* out);

// The plain reference: the whole score row, softmax (ops.h), weighted sum, as
// Fp32Lm computes attention.
void reference_attention(const AttentionShape& shape, const float* q, const int* pos, int rows, const float* k,
                         const float* v, int cache_tokens, float* out);

}  // namespace ispsim::rag
