// The fused attention kernel on the integer path (no floating point; compiled
// a second time under -mgeneral-regs-only like kernels/int).
//
// Same contract as fused_attention.h with the integer engine's formats: q at
// q_frac with 1/sqrt(d) folded in, k at k_frac, v at v_frac, output at v_frac.
// Bit-exact with IntegerEngine's attention, which takes one requantization
// scale for the whole score row (paper 1 §3.1.3) and Q30 probabilities from
// the row's sum. Those need the row's maximum and sum before any probability
// exists, so the integer kernel cannot rescale online the way FP32 does (an
// i-exp rescale would not be bit-exact). It streams the tiles twice instead:
// the K tiles once (scores, kept per row and head: cache_tokens int64s) and
// then the V tiles once (probabilities times V), for blocks of up to 16 Q_fused
// rows at a time; per block, KV traffic is that of the online form and the
// extra state is one score row per row and head.
#pragma once

#include <cstdint>

#include "kernels/rag/fused_attention.h"

namespace ispsim::rag {

struct IntAttentionFormat {
  int score_frac_bits = 0;  // q_frac + k_frac
  int requant_bits = 16;    // 16 (int16 engine) or 8 (int-nonlinear)
};

void int_fused_attention(const AttentionShape& shape, const IntAttentionFormat& format, const int32_t* q,
                         const int* pos, int rows, const int32_t* k, const int32_t* v, int cache_tokens, int32_t* out);

// The reference: IntegerEngine::attend's computation for each row.
void int_reference_attention(const AttentionShape& shape, const IntAttentionFormat& format, const int32_t* q,
                             const int* pos, int rows, const int32_t* k, const int32_t* v, int cache_tokens,
                             int32_t* out);

}  // namespace ispsim::rag
