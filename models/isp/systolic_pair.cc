#include "models/isp/systolic_pair.h"

#include <cmath>


namespace ispsim::isp {

namespace {

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// The SIMD unit as an Elastic-SIMD of `lanes` one-MAC PEs (shared clock, energies, static power).
IspConfig lanes_config(IspConfig c, const schema::IspParams& p) {
  c.pes = p.systolic_pair().simd_lanes();
  c.macs_per_pe_per_cycle = 1;
  return c;
}

}  // namespace

SystolicPair::SystolicPair(const IspConfig& config, const schema::IspParams& params, const std::string& where)
    : lanes_(lanes_config(config, params)),
      staging_(StagingConfig::from_params(params, where)) {
  rows_ = params.systolic_pair().systolic_rows();
  cols_ = params.systolic_pair().systolic_cols();
  exchange_bytes_per_cycle_ = params.systolic_pair().exchange_bytes_per_cycle();
}

const std::vector<ModeInfo>& SystolicPair::modes() const {
  static const std::vector<ModeInfo> modes{
      {"vector", "accelerator time (staging + SIMD unit, padded tiles) of tiles in vector mode"},
      {"systolic", "accelerator time (staging + systolic array + SIMD softmax + SRAM exchange) of tiles in systolic mode"}};
  return modes;
}

uint64_t SystolicPair::gemm_cycles(uint64_t m, uint64_t k, uint64_t n) const {
  return ceil_div(m, rows_) * ceil_div(n, cols_) * k + rows_ + cols_ - 2;
}

TileCost SystolicPair::compute_cost(ComputeMode mode, uint64_t tokens, const TileShape& shape) const {
  const uint64_t t = tokens, n = shape.row_heads, d = shape.head_dim;
  if (t == 0 || n == 0) return TileCost{};
  if (mode == kVectorMode)
    return ElasticSimd::compute_of(lanes_.page_cost(SimdMode::kBroadside, t, n, d, shape.kv_bits, shape.q_bits), t);
  const IspConfig& c = lanes_.config();
  TileCost cost;
  const uint64_t softmax = 2 * ceil_div(n * t, c.pes) + lanes_.softmax_latency_cycles();
  cost.compute_cycles = gemm_cycles(n, d, t) + softmax + gemm_cycles(n, t, d);
  cost.cycles = cost.compute_cycles;
  cost.macs = 2 * n * t * d;
  cost.computed_tokens = t;
  const uint64_t operands =
      2 * ceil_div(n, rows_) * t * d * shape.kv_bits / 8 + ceil_div(t, cols_) * n * d * shape.q_bits / 8;
  cost.scratchpad_bytes = operands;
  cost.energy_pj = double(cost.macs) * c.mac_pj + double(n * t) * c.exp_pj + double(2 * n * t) * c.vector_op_pj +
                   double(operands) * c.scratchpad_pj_per_byte;
  // A written and read, P written and read, through the exchange port.
  const uint64_t exchange = 4 * n * t * shape.q_bits / 8;
  cost.add_sram_io(uint64_t(std::ceil(double(exchange) / exchange_bytes_per_cycle_ - 1e-9)), exchange,
                   double(exchange) * c.scratchpad_pj_per_byte);
  return cost;
}

ComputeMode SystolicPair::choose_mode(uint64_t tokens, const TileShape& shape) const {
  const TileCost v = compute_cost(kVectorMode, tokens, shape);
  const TileCost s = compute_cost(kSystolicMode, tokens, shape);
  return double(s.cycles) * s.energy_pj < double(v.cycles) * v.energy_pj ? kSystolicMode : kVectorMode;
}

TileCost SystolicPair::tile_cost(ComputeMode mode, const FilterResult& filter, uint32_t entries,
                                 const TileShape& shape) const {
  const UnfilteredTile tile = unfiltered_tile(filter, entries, shape, staging_);
  TileCost cost = compute_cost(mode, tile.tokens, shape);
  cost.add_sram_io(tile.staging_cycles, tile.staging_bytes, tile.staging_pj);
  return cost;
}

double SystolicPair::peak_power_w() const {
  const IspConfig& c = lanes_.config();
  const double mac_units = double(rows_) * cols_ + c.pes;
  return c.static_power_w + mac_units * c.clock_ghz * 1e9 * c.mac_pj * 1e-12;
}


}  // namespace ispsim::isp
