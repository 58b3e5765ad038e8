// The Elastic-SIMD without its Stream Filter ("elastic_no_filter"): one of
// MemLLM's accelerator comparison designs (Sec. V-B's argument for the filter,
// reference/paper2-memllm-isp.md). The same PEs, modes and mode policy as
// elastic_simd.h (IspParams.pes, macs_per_pe_per_cycle, mode_policy, energies),
// so the same power budget (peak_power_w() equal by construction: the filter's
// own power is not given to anything else); what changes is the tile
// (unfiltered_tile.h): every entry of a tile with work is computed (padded),
// and recomputed entries are staged through the global SRAM
// (IspParams.staging) instead of being merged on the fly.
//
// Per tile: compute = ElasticSimd::page_cost(mode, padded tokens) cycles,
// SRAM I/O = staging cycles (no filter pass); energy = SIMD energy of the
// padded tokens + staging energy.
#pragma once

#include <string>
#include <vector>

#include "models/isp/elastic_simd.h"
#include "models/isp/unfiltered_tile.h"

namespace ispsim::isp {

class ElasticNoFilter : public PageCompute {
 public:
  ElasticNoFilter(const IspConfig& config, const schema::IspParams& params, const std::string& where);

  const std::vector<ModeInfo>& modes() const override;
  ComputeMode choose_mode(uint64_t tokens, const TileShape& shape) const override;
  TileCost tile_cost(ComputeMode mode, const FilterResult& filter, uint32_t entries,
                     const TileShape& shape) const override;
  uint64_t cycles_to_ps(uint64_t cycles) const override { return simd_.cycles_to_ps(cycles); }
  double static_power_w() const override { return simd_.static_power_w(); }
  double peak_power_w() const override { return simd_.peak_power_w(); }

 private:
  ElasticSimd simd_;
  StagingConfig staging_;
};

}  // namespace ispsim::isp
