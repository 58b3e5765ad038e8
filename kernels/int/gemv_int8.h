// int8 x int8 -> int32 matrix-vector and matrix-matrix products.
//
// Weights are row-major [rows][cols] (one output per row, the HF Linear
// layout). Both operands must lie in [-127, 127] (the quantizers guarantee it):
// the AVX2 kernel multiplies |w| by sign(w) * x with maddubs, which is exact
// only without -128. An AVX2 kernel is used when the CPU has it (checked once
// at run time); otherwise, or when disabled, a portable loop.
//
// Dispatch follows model::active_isa() (kernels/model/cpu_isa.h): scalar, AVX2
// (maddubs on the row-major weights), AVX-512 VNNI (vpdpbusd on a packed copy
// of the weights, PackedS8), AMX-INT8 (tiles on the same packed copy, for
// batches of kAmxMinTokens or more: amx_gemm.h). Every variant computes the exact int32 partial
// sums and the same int64 rounding, so all are bit-identical. Threads
// (model::engine_threads()) split the weight rows; results do not depend on it.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/int/fixed_point.h"

namespace ispsim::integer {

// A weight matrix repacked for the AVX-512 VNNI kernel: blocks of 16 rows,
// within a block four consecutive columns of each row side by side
// ([row/16][col/4][row%16][col%4], zero-padded), so one vpdpbusd with a token's
// four bytes broadcast yields 16 rows' partial sums. Per (block, group, row):
// 128·Σw (the x + 128 unsigned-operand correction) and the weight scale as
// int64 vectors. Built once per matrix at load (pack_s8); empty when the CPU
// lacks AVX-512 VNNI or the group is not a multiple of 4 or exceeds 256. A
// block's 16 consecutive column quads are also an AMX B tile (amx_gemm.h).
struct PackedS8 {
  int rows = 0, cols = 0, group = 0, groups = 0, cols_padded = 0;
  std::vector<int8_t> data;
  std::vector<int32_t> wsum128;
  std::vector<int64_t> wmult, wshift;
  bool empty() const { return data.empty(); }
};
PackedS8 pack_s8(const int8_t* W, int rows, int cols, int group, const Dyadic* weight_scale);
// The same layout whatever the CPU (the AMX tile emulation's tests).
PackedS8 pack_s8_any_cpu(const int8_t* W, int rows, int cols, int group, const Dyadic* weight_scale);

// Which dot-product kernel runs; set_simd_enabled(false) forces the portable one
// (it sets model::active_isa() to scalar, true to the best level).
bool simd_available();
void set_simd_enabled(bool enabled);
bool simd_enabled();

// partial[g] = sum over group g of w[k] * x[k]; groups of `group` elements, the
// last one possibly shorter.
void dot_s8_groups(const int8_t* w, const int8_t* x, int cols, int group, int32_t* partial);

// Σ a[i]·b[i] in int64 and acc[i] += p·v[i] (|p| < 2^31): the attention's
// q·k and probability-weighted values. Exact at every ISA level.
int64_t dot_s32(const int32_t* a, const int32_t* b, int n);
void axpy_s32(int64_t p, const int32_t* v, int n, int64_t* acc);

// The weighted values for a block of queries that share one KV head, so that
// each value row is loaded once for all of them (exact int64, so the blocking
// and the ISA level change no bit; the scores: int_attention.h):
//   acc[j][i] = Σ_{t < nk} p[j][t]·v[t][i] for i < n (|p| < 2^31; acc overwritten).
// Rows are ldp, ldv, ldacc elements apart.
void weighted_sum_s32(const int32_t* p, int ldp, int nq, const int32_t* v, int ldv, int nk, int n, int64_t* acc,
                      int ldacc);

// y[r] = sum_k W[r][k] * x[k], exact.
void gemv_s8(const int8_t* W, const int8_t* x, int rows, int cols, int32_t* y);

// Group-wise scaled product: y[r] = sum_g round(dot_g * act_scale[g] * weight_scale[r][g]),
// saturated to int32. weight_scale is [rows][groups] and already contains the
// factor that maps to y's fixed-point format.
void gemv_s8_grouped(const int8_t* W, const int8_t* x, int rows, int cols, int group, const Dyadic* act_scale,
                     const Dyadic* weight_scale, int32_t* y);

// The same for `tokens` input rows X[t][cols] with act_scale[t][groups] into
// Y[t][rows]. Loops weight rows outermost so each weight row is read once.
// `packed` (may be null or empty) is W's PackedS8: the AVX-512 level uses it.
void gemm_s8_grouped(const int8_t* W, const int8_t* X, int tokens, int rows, int cols, int group,
                     const Dyadic* act_scale, const Dyadic* weight_scale, int32_t* Y,
                     const PackedS8* packed = nullptr);

}  // namespace ispsim::integer
