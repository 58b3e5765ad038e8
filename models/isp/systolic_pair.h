// The decoupled SIMD + systolic-array pair ("systolic_pair"): one of MemLLM's
// accelerator comparison designs (reference/paper2-memllm-isp.md Sec. III
// roofline: systolic arrays for dense GEMMs, SIMD arrays for GEMV and
// element-wise work, and neither alone; Sec. VI-A: Gemmini and Hwacha as the
// reference designs). Parameters: IspParams.systolic_pair (array R x C, S SIMD
// lanes, exchange port X bytes/cycle), the shared clock, energies and static
// power of IspParams, and IspParams.staging. No Stream Filter: tiles are
// padded and recomputed entries staged (unfiltered_tile.h).
//
// Per tile of t tokens (padded, see unfiltered_tile.h), n row-heads, head dim
// d, a = activation bytes, one mode per op:
//
// VECTOR (GEMV, the systolic array idle): the SIMD unit alone, an Elastic-SIMD
//   of S one-MAC PEs in broadside mode (elastic_simd.h): 2 * ceil(n*t / par) *
//   ceil(d / S) + L_S cycles, par = max(1, floor(S / d)),
//   L_S = 2 * ceil(log2 S) + exp_lut_latency_cycles; no SRAM exchange.
// SYSTOLIC (thin GEMM): Q.K^T and P.V on the output-stationary array, the
//   online softmax on the SIMD unit, the score matrix A and the probabilities
//   P exchanged through the scratchpad:
//     GEMM (M x K) x (K x N) = ceil(M/R) * ceil(N/C) * K + R + C - 2 cycles
//       (output blocks back to back, one fill and drain),
//     Q.K^T: M = n, K = d, N = t;   P.V: M = n, K = t, N = d;
//     softmax: 2 * ceil(n*t / S) + L_S (reduce-max, then exp and reduce-sum);
//     compute = Q.K^T + softmax + P.V (serial: each needs the previous one's result);
//     exchange = 4 * n * t * a bytes (A written and read, P written and read),
//       ceil(exchange / X) cycles of SRAM I/O.
//   Operand reads: K and V once per block row (ceil(n/R) * t * d elements
//   each), Q once per block column of Q.K^T (ceil(t/C) * n * d).
// SRAM I/O = exchange (SYSTOLIC) + staging; cycles = compute + SRAM I/O.
// MACs = 2 * n * t * d in both modes. Energy = MACs * mac_pj + n*t exps *
// exp_pj + 2*n*t vector ops * vector_op_pj + (operand + exchange bytes) *
// scratchpad_pj_per_byte + staging energy.
// Mode: the smaller cycles x energy (ties: VECTOR), as the Elastic-SIMD's
// default policy; with the defaults decode picks VECTOR and the fused thin
// GEMMs SYSTOLIC.
// Power budget: peak = static_power_w + (R*C + S) MAC units x clock x mac_pj;
// the defaults (8 x 8 + 64 = 128) equal the Elastic-SIMD's 128 PEs.
#pragma once

#include <string>
#include <vector>

#include "models/isp/elastic_simd.h"
#include "models/isp/unfiltered_tile.h"

namespace ispsim::isp {

class SystolicPair : public PageCompute {
 public:
  static constexpr ComputeMode kVectorMode = 0;
  static constexpr ComputeMode kSystolicMode = 1;

  SystolicPair(const IspConfig& config, const schema::IspParams& params, const std::string& where);

  const std::vector<ModeInfo>& modes() const override;
  ComputeMode choose_mode(uint64_t tokens, const TileShape& shape) const override;
  TileCost tile_cost(ComputeMode mode, const FilterResult& filter, uint32_t entries,
                     const TileShape& shape) const override;
  uint64_t cycles_to_ps(uint64_t cycles) const override { return lanes_.cycles_to_ps(cycles); }
  double static_power_w() const override { return lanes_.static_power_w(); }
  double peak_power_w() const override;

  // (M x K) x (K x N) on the array, cycles.
  uint64_t gemm_cycles(uint64_t m, uint64_t k, uint64_t n) const;

 private:
  // The tile's compute in `mode` for `tokens` computed tokens (no staging).
  TileCost compute_cost(ComputeMode mode, uint64_t tokens, const TileShape& shape) const;

  ElasticSimd lanes_;  // the SIMD unit: S one-MAC PEs, broadside
  StagingConfig staging_;
  uint32_t rows_ = 0, cols_ = 0;
  double exchange_bytes_per_cycle_ = 0;
};

}  // namespace ispsim::isp
