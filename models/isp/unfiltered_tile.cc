#include "models/isp/unfiltered_tile.h"

#include <cmath>

#include "schema/resolve.h"

namespace ispsim::isp {

StagingConfig StagingConfig::from_params(const schema::IspParams& params, const std::string& where) {
  schema::require_resolved(params, where);
  const schema::IspParams& p = params;
  StagingConfig c;
  c.bytes_per_cycle = p.staging().bytes_per_cycle();
  c.sram_pj_per_byte = p.staging().sram_pj_per_byte();
  c.scratchpad_pj_per_byte = p.scratchpad_pj_per_byte();
  return c;
}

UnfilteredTile unfiltered_tile(const FilterResult& filter, uint32_t entries, const TileShape& shape,
                               const StagingConfig& staging) {
  UnfilteredTile t;
  t.tokens = filter.kept > 0 ? entries : 0;
  t.staged_entries = uint64_t(filter.substituted) + filter.forwarded;
  const uint64_t entry_bytes = 2 * uint64_t(shape.head_dim) * shape.kv_bits / 8;
  const uint64_t moved = t.staged_entries * entry_bytes;
  t.staging_cycles = uint64_t(std::ceil(double(moved) / staging.bytes_per_cycle - 1e-9));
  t.staging_bytes = 2 * moved;
  t.staging_pj = double(moved) * (staging.sram_pj_per_byte + staging.scratchpad_pj_per_byte);
  return t;
}

}  // namespace ispsim::isp
