#include "models/isp/elastic_no_filter.h"

namespace ispsim::isp {

ElasticNoFilter::ElasticNoFilter(const IspConfig& config, const schema::IspParams& params,
                                 const std::string& where)
    : simd_(config), staging_(StagingConfig::from_params(params, where)) {}

const std::vector<ModeInfo>& ElasticNoFilter::modes() const {
  static const std::vector<ModeInfo> modes{
      {"broadside", "accelerator time (staging + SIMD, padded tiles) of tiles in broadside mode"},
      {"cascaded", "accelerator time (staging + SIMD, padded tiles) of tiles in cascaded mode"}};
  return modes;
}

ComputeMode ElasticNoFilter::choose_mode(uint64_t tokens, const TileShape& shape) const {
  return simd_.choose_mode(tokens, shape);
}

TileCost ElasticNoFilter::tile_cost(ComputeMode mode, const FilterResult& filter, uint32_t entries,
                                    const TileShape& shape) const {
  const UnfilteredTile tile = unfiltered_tile(filter, entries, shape, staging_);
  const PageCost page = simd_.page_cost(ElasticSimd::simd_mode_of(mode), tile.tokens, shape.row_heads,
                                        shape.head_dim, shape.kv_bits, shape.q_bits);
  TileCost cost = ElasticSimd::compute_of(page, tile.tokens);
  cost.add_sram_io(tile.staging_cycles, tile.staging_bytes, tile.staging_pj);
  return cost;
}


}  // namespace ispsim::isp
