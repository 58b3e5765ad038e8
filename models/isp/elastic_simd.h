// Cost model of one Elastic-SIMD (MemLLM Sec. V-B, V-D): a 1D array of P PEs,
// each doing m FP16 MACs per cycle, with an in-situ vector ALU (reduce-max,
// reduce-sum, LUT exponential). One call costs one KV page (t tokens of one KV
// head, after the Stream Filter) against n = R x g query row-heads (R query rows,
// g = heads / kv_heads query heads sharing the KV head), head dimension d.
//
// Work: Q.K^T and P.V, each n * t * d MACs.
//
// BROADSIDE (GEMV): the PEs span the head dimension; one (row-head, token) pair
// per cycle and phase, its d products summed by an adder tree:
//   par    = max(1, floor(P*m / d))   pairs per cycle when d < P*m
//   passes = ceil(d / (P*m))          cycles per pair when d > P*m
//   cycles = 2 * ceil(n*t / par) * passes + L
// K and V are read from the scratchpad once per row-head: 2 * n * t * d elements.
//
// CASCADED (thin GEMM): each PE holds one row-head (output-stationary for Q.K^T,
// then input-stationary P for P.V); K (then V) vectors enter PE 0 and are
// forwarded row to row. A Q tile of n_i <= P row-heads takes
//   cycles_i = 2 * (t * ceil(d/m) + n_i - 1) + L      (fill/drain n_i - 1 per phase)
// and ceil(n / P) Q tiles stream through the stationary page. K and V are read
// once per Q tile: 2 * ceil(n/P) * t * d elements.
//
// L = 2 * ceil(log2 P) + exp_lut_latency: the in-situ softmax (reduce-max tree,
// LUT exp, reduce-sum tree) between the Q.K^T and P.V phases of a tile; the rest
// of the softmax overlaps the MACs (Sec. V-B: "without stalling the MAC
// pipeline"). A page with t = 0 (every token dropped) costs nothing.
//
// Energy per page: MACs * mac_pj + n*t exps * exp_pj + 2*n*t vector ops (one
// compare, one add per score) * vector_op_pj + scratchpad bytes read (K, V and
// the n Q row-head vectors) * scratchpad_pj_per_byte.
//
// Mode choice (IspParams.mode_policy, default LOWEST_ENERGY_DELAY): the mode with
// the smaller cycles x energy. Broadside is never slower than cascaded but reads
// K/V n times; cascaded reads them once per Q tile, so for thin GEMMs it wins on
// energy at a few percent more cycles; for GEMV (n small) broadside wins on both.
//
// As a PageCompute (page_compute.h, registered as "elastic_simd"): the modes are
// broadside (0) and cascaded (1); a tile costs the Stream Filter's pass over its
// entries (FilterResult::cycles, reported as SRAM I/O: the filter streams the
// page buffer into the dense tile) followed by page_cost() of the kept tokens.
#pragma once

#include <cstdint>
#include <vector>

#include "models/isp/isp_config.h"
#include "models/isp/page_compute.h"

namespace ispsim::isp {

enum class SimdMode { kBroadside, kCascaded };
const char* to_string(SimdMode mode);

struct PageCost {
  uint64_t cycles = 0;
  uint64_t macs = 0;
  uint64_t q_tiles = 0;          // ceil(n / P) in cascaded mode, 1 in broadside
  uint64_t scratchpad_bytes = 0; // bytes read from the scratchpad (K, V, Q)
  uint64_t exps = 0;
  uint64_t vector_ops = 0;
  double energy_pj = 0;
};

class ElasticSimd : public PageCompute {
 public:
  static constexpr ComputeMode kBroadsideMode = 0;
  static constexpr ComputeMode kCascadedMode = 1;
  static ComputeMode mode_of(SimdMode mode) { return mode == SimdMode::kBroadside ? kBroadsideMode : kCascadedMode; }
  static SimdMode simd_mode_of(ComputeMode mode) { return mode == kBroadsideMode ? SimdMode::kBroadside : SimdMode::kCascaded; }

  explicit ElasticSimd(const IspConfig& config);

  // Cost of one page: `tokens` t computed tokens, `row_heads` n, `head_dim` d,
  // `kv_element_bits` of the stored K/V, `q_element_bits` of Q.
  PageCost page_cost(SimdMode mode, uint64_t tokens, uint64_t row_heads, uint32_t head_dim,
                     uint32_t kv_element_bits, uint32_t q_element_bits) const;
  // The mode the policy picks for pages of this shape (full pages of `tokens`).
  SimdMode choose_mode(uint64_t tokens, uint64_t row_heads, uint32_t head_dim,
                       uint32_t kv_element_bits, uint32_t q_element_bits) const;
  // The compute part of a tile from a page cost (no SRAM I/O yet); the
  // accelerators built on this one add theirs with TileCost::add_sram_io().
  static TileCost compute_of(const PageCost& page, uint64_t tokens);
  // L: exposed softmax latency per tile, cycles.
  uint64_t softmax_latency_cycles() const;
  const IspConfig& config() const { return config_; }

  // PageCompute
  const std::vector<ModeInfo>& modes() const override;
  ComputeMode choose_mode(uint64_t tokens, const TileShape& shape) const override;
  TileCost tile_cost(ComputeMode mode, const FilterResult& filter, uint32_t entries,
                     const TileShape& shape) const override;
  uint64_t cycles_to_ps(uint64_t cycles) const override { return config_.cycles_to_ps(cycles); }
  double static_power_w() const override { return config_.static_power_w; }
  double peak_power_w() const override;

 private:
  IspConfig config_;
};

}  // namespace ispsim::isp
