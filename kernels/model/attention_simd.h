// FP32 attention kernels per instruction-set level (avx2, avx512), for the
// FP32 reference when it runs above the scalar level. The scalar level keeps
// the original per-(row, head) loop of fp32_lm.cc, so its numbers do not move.
//
// As for linear_simd.h: every output is computed by the same sequence of
// operations whatever block, tile or thread computes it (scores: one
// accumulator over the head dimension, fixed horizontal sum; Softmax: per row;
// weighted values: one FMA chain per output over keys 0, 1, 2, ...), so a batch
// (prefill) gives bit-identical rows to one token at a time at a level.
#pragma once

#include "kernels/model/cpu_isa.h"

namespace ispsim::model {

// In place x = softmax(x * scale) over n values (max subtracted; vector exp with
// a degree-7 polynomial after an exact ln 2 range reduction, within 2 ulp).
void scaled_softmax_isa(Isa isa, float* x, int n, float scale);

// o[j][i] = Σ_{t < len[j]} p[j][t] · v[t][i] for queries j < nq and i < hd:
// p rows ldp apart, v rows ldv, o rows ldo; len[] nondecreasing (a causal block).
void weighted_values_isa(Isa isa, const float* p, int ldp, int nq, const int* len, const float* v, int ldv, int hd,
                         float* o, int ldo);

// Flash attention's online Softmax over one key block, for one query:
// x[0, n) <- exp(x·scale − m'), m' = max(*m, max x·scale);
// *l <- *l·a + Σ x; *m <- m'; returns a = exp(old *m − m'), the factor for
// the outputs accumulated so far (exactly 1 when the max did not grow, 0 on
// the first block, *m = −inf).
float online_softmax_block_isa(Isa isa, float* x, int n, float scale, float* m, float* l);

// o[j][i] += Σ_{t < len[j]} p[j][t] · v[t][i]: weighted_values_isa without
// clearing o first (one FMA chain per output continued from o's value).
void accumulate_values_isa(Isa isa, const float* p, int ldp, int nq, const int* len, const float* v, int ldv, int hd,
                           float* o, int ldo);

}  // namespace ispsim::model
