#include "models/isp/elastic_simd.h"

namespace ispsim::isp {

namespace {

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

uint64_t ceil_log2(uint64_t x) {
  uint64_t levels = 0;
  while ((uint64_t(1) << levels) < x) ++levels;
  return levels;
}

}  // namespace

const char* to_string(SimdMode mode) { return mode == SimdMode::kBroadside ? "BROADSIDE" : "CASCADED"; }

ElasticSimd::ElasticSimd(const IspConfig& config) : config_(config) {}

uint64_t ElasticSimd::softmax_latency_cycles() const {
  return 2 * ceil_log2(config_.pes) + config_.exp_lut_latency_cycles;
}

PageCost ElasticSimd::page_cost(SimdMode mode, uint64_t tokens, uint64_t row_heads, uint32_t head_dim,
                                uint32_t kv_element_bits, uint32_t q_element_bits) const {
  PageCost cost;
  if (tokens == 0 || row_heads == 0) return cost;
  const uint64_t t = tokens, n = row_heads, d = head_dim;
  const uint64_t lanes = uint64_t(config_.pes) * config_.macs_per_pe_per_cycle;  // P * m
  const uint64_t latency = softmax_latency_cycles();
  cost.macs = 2 * n * t * d;
  uint64_t kv_reads = 0;  // K and V elements read from the scratchpad
  if (mode == SimdMode::kBroadside) {
    const uint64_t parallel = d < lanes ? lanes / d : 1;
    const uint64_t passes = ceil_div(d, lanes);
    cost.q_tiles = 1;
    cost.cycles = 2 * ceil_div(n * t, parallel) * passes + latency;
    kv_reads = 2 * n * t * d;
  } else {
    const uint64_t P = config_.pes;
    const uint64_t per_token = ceil_div(d, config_.macs_per_pe_per_cycle);
    cost.q_tiles = ceil_div(n, P);
    const uint64_t full = n / P, rest = n % P;
    cost.cycles = full * (2 * (t * per_token + P - 1) + latency);
    if (rest > 0) cost.cycles += 2 * (t * per_token + rest - 1) + latency;
    kv_reads = 2 * cost.q_tiles * t * d;
  }
  cost.scratchpad_bytes = kv_reads * kv_element_bits / 8 + n * d * q_element_bits / 8;
  cost.exps = n * t;
  cost.vector_ops = 2 * n * t;
  cost.energy_pj = double(cost.macs) * config_.mac_pj + double(cost.exps) * config_.exp_pj +
                   double(cost.vector_ops) * config_.vector_op_pj +
                   double(cost.scratchpad_bytes) * config_.scratchpad_pj_per_byte;
  return cost;
}

SimdMode ElasticSimd::choose_mode(uint64_t tokens, uint64_t row_heads, uint32_t head_dim, uint32_t kv_element_bits,
                                  uint32_t q_element_bits) const {
  switch (config_.mode_policy) {
    case ModePolicy::kAlwaysBroadside: return SimdMode::kBroadside;
    case ModePolicy::kAlwaysCascaded: return SimdMode::kCascaded;
    default: break;
  }
  const PageCost b = page_cost(SimdMode::kBroadside, tokens, row_heads, head_dim, kv_element_bits, q_element_bits);
  const PageCost c = page_cost(SimdMode::kCascaded, tokens, row_heads, head_dim, kv_element_bits, q_element_bits);
  if (config_.mode_policy == ModePolicy::kFewestCycles) {
    return c.cycles < b.cycles ? SimdMode::kCascaded : SimdMode::kBroadside;
  }
  // Energy-delay product; ties go to broadside.
  return double(c.cycles) * c.energy_pj < double(b.cycles) * b.energy_pj ? SimdMode::kCascaded
                                                                          : SimdMode::kBroadside;
}

const std::vector<ModeInfo>& ElasticSimd::modes() const {
  static const std::vector<ModeInfo> modes{
      {"broadside", "accelerator time (filter + SIMD) of tiles in broadside mode"},
      {"cascaded", "accelerator time (filter + SIMD) of tiles in cascaded mode"}};
  return modes;
}

ComputeMode ElasticSimd::choose_mode(uint64_t tokens, const TileShape& shape) const {
  return mode_of(choose_mode(tokens, shape.row_heads, shape.head_dim, shape.kv_bits, shape.q_bits));
}

TileCost ElasticSimd::tile_cost(ComputeMode mode, const FilterResult& filter, uint32_t /*entries*/,
                                const TileShape& shape) const {
  const PageCost page =
      page_cost(simd_mode_of(mode), filter.kept, shape.row_heads, shape.head_dim, shape.kv_bits, shape.q_bits);
  TileCost cost = compute_of(page, filter.kept);
  cost.add_sram_io(filter.cycles, 0, 0.0);  // the Stream Filter's pass over the tile's entries
  return cost;
}

TileCost ElasticSimd::compute_of(const PageCost& page, uint64_t tokens) {
  TileCost cost;
  cost.compute_cycles = page.cycles;
  cost.cycles = page.cycles;
  cost.macs = page.macs;
  cost.computed_tokens = page.macs > 0 ? tokens : 0;
  cost.scratchpad_bytes = page.scratchpad_bytes;
  cost.energy_pj = page.energy_pj;
  return cost;
}

double ElasticSimd::peak_power_w() const {
  const double macs_per_s = double(config_.pes) * config_.macs_per_pe_per_cycle * config_.clock_ghz * 1e9;
  return config_.static_power_w + macs_per_s * config_.mac_pj * 1e-12;
}


}  // namespace ispsim::isp
