// What a KV tile costs an accelerator that has no Stream Filter (MemLLM's
// comparison designs: elastic_no_filter, systolic_pair; MemLLM Sec. III
// roofline: "handling the irregular attention masks introduces additional
// boundary zero-padding overhead", and Sec. V-A: the filter is what merges the
// out-of-place entries into the page).
//
// Without the filter nothing compacts a tile:
//   - PADDING: a tile that has any entry to compute goes through the MACs
//     whole, `entries` tokens; the entries the filter would have dropped
//     (invisible to every row) or forwarded (appended substitutes, computed in
//     their precomputed page) are padded (score -inf, weight 0). A tile with
//     nothing to compute is skipped, as with the filter: that follows from the
//     positions alone (the causal bound), no mask needed.
//   - STAGING: a recomputed HKVD entry reaches its precomputed page through
//     the global SRAM: when its appended page is read, each forwarded entry is
//     read from the out-of-place buffer and written to SRAM; before a
//     precomputed page is computed, each substituted entry is read from SRAM
//     and written over its slot in the page buffer. Per tile:
//       staged entries s = substituted + forwarded, entry bytes e = 2 * d * kv_bits / 8,
//       cycles = ceil(s * e / staging.bytes_per_cycle) (exposed: the page
//         cannot be computed before its substitutes are in place),
//       bytes  = 2 * s * e (one read and one write each),
//       energy = s * e * (staging.sram_pj_per_byte + scratchpad_pj_per_byte).
#pragma once

#include <cstdint>

#include "models/isp/page_compute.h"
#include "schema/isp_staging.pb.h"
#include "schema/resolve.h"

namespace ispsim::isp {

struct StagingConfig {
  double bytes_per_cycle = 0;
  double sram_pj_per_byte = 0;
  double scratchpad_pj_per_byte = 0;

  // `params` resolved (schema/resolve.h); unit conversions only. An unresolved
  // message is a programming error (std::logic_error naming `where`).
  static StagingConfig from_params(const schema::IspParams& params, const std::string& where);
};

struct UnfilteredTile {
  uint64_t tokens = 0;          // entries through the MACs (padding included)
  uint64_t staged_entries = 0;  // s
  uint64_t staging_cycles = 0;
  uint64_t staging_bytes = 0;   // scratchpad + SRAM bytes read and written
  double staging_pj = 0;
};

UnfilteredTile unfiltered_tile(const FilterResult& filter, uint32_t entries, const TileShape& shape,
                               const StagingConfig& staging);

}  // namespace ispsim::isp
