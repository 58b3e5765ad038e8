// The Stream Filter (MemLLM Sec. IV-A, V-A): before a KV page enters the
// Elastic-SIMD it is compacted into a dense masked-KV tile.
//
// Appended (out-of-place) entries of a layer, in append order: first the H
// recomputed HKVD entries (H = popcount of the mask, at the mask's set
// positions, ascending), then the layer's own new tokens at positions C, C+1, ...
// (query, then decoded tokens). So append index k has position
//   k-th set bit of the mask   if k < H
//   C + (k - H)                otherwise.
//
// A precomputed page (positions p .. p+e-1):
//   - a token no query row can see is DROPPED: with a causal mask, position >
//     max_row_position (the last position of any row; e.g. the context after the
//     last HKVD row of a recomputation pass);
//   - a visible token whose mask bit is set is SUBSTITUTED: the tile gets the
//     recomputed entry from the out-of-place region instead (it still counts as
//     kept and is computed here, once);
//   - every other token is KEPT as read.
// An appended page: entries k < H are the substitutes themselves; the filter
// hands them to their precomputed page (FORWARDED, not computed again); own
// tokens are kept if visible, else dropped.
//
// Time: ceil(entries / tokens_per_cycle) cycles per page (the filter reads every
// entry of the page once).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/isp/isp_config.h"
#include "traces/trace.pb.h"

namespace ispsim::isp {

struct FilterContext {
  uint64_t context_tokens = 0;                  // C: precomputed positions [0, C)
  const trace::BitVector* hkvd_mask = nullptr;  // nullable; bit_length must be C
  bool causal = true;
  uint64_t max_row_position = 0;                // last position of any query row
};

struct FilteredToken {
  uint64_t position = 0;
  bool substituted = false;   // recomputed entry from the out-of-place region
  bool appended = false;      // the entry lives in the appended region
  uint64_t append_index = 0;  // valid when substituted or appended
};

struct FilterResult {
  uint32_t kept = 0;         // tokens in the dense tile (computed), substitutes included
  uint32_t substituted = 0;  // kept tokens replaced by their recomputed entry
  uint32_t dropped = 0;      // invisible to every row
  uint32_t forwarded = 0;    // appended substitutes handed to their precomputed page
  uint64_t cycles = 0;
  std::vector<FilteredToken> tokens;  // filled only when asked for (functional use)
};

class StreamFilter {
 public:
  // Throws BadInput(where, ...) when the mask's length is not C or the mask has
  // set bits past its length.
  StreamFilter(const IspConfig& config, const FilterContext& context,
               const std::string& where = "stream filter");

  uint64_t substitutes() const { return set_positions_->size(); }  // H
  uint64_t position_of_appended(uint64_t append_index) const;
  bool is_substituted(uint64_t position) const;
  bool visible(uint64_t position) const;
  // How many of the region's first `end` entries come before its first entry
  // that no row can see (positions grow with the entry index in both regions,
  // so the visible entries are a prefix).
  uint64_t visible_entries(trace::KvRegion region, uint64_t end) const;
  // The end of the region's entries from `first` (before `end`) that are kept
  // as read: visible, neither substituted nor forwarded (`first` if none is).
  uint64_t kept_as_read_end(trace::KvRegion region, uint64_t first, uint64_t end) const;
  // The end of the appended entries from `first` (before `end`) that are
  // forwarded: the first H, the substitutes (`first` if none is).
  uint64_t forwarded_end(uint64_t first, uint64_t end) const {
    return std::max(first, std::min<uint64_t>(end, set_positions_->size()));
  }

  // `with_tokens` fills FilterResult::tokens.
  FilterResult precomputed_page(uint64_t first_position, uint32_t entries,
                                bool with_tokens = false) const;
  // precomputed_page() without tokens, for pages in ascending position:
  // `cursor` (0 before the first) carries the mask's rank from page to page, so
  // a pass's pages cost one sweep of the set positions, not a search each.
  FilterResult precomputed_counts(uint64_t first_position, uint32_t entries, size_t& cursor) const;
  FilterResult appended_page(uint64_t first_append_index, uint32_t entries,
                             bool with_tokens = false) const;
  uint64_t cycles(uint32_t entries) const;
  // The rows' last position, once known (their positions come from this filter).
  void set_max_row_position(uint64_t position) { context_.max_row_position = position; }

 private:
  static std::shared_ptr<const std::vector<uint64_t>> set_positions(const FilterContext& context,
                                                                    const std::string& where);
  // The counts, with rank(p) the number of set positions before p.
  template <typename Rank>
  FilterResult precomputed_counts(uint64_t first_position, uint32_t entries, Rank rank) const;
  // The end of the visible prefix of positions [begin, end).
  uint64_t visible_before(uint64_t begin, uint64_t end) const;
  IspConfig config_;
  FilterContext context_;
  // Positions of the mask's set bits, ascending; shared by copies, so that a
  // pass's filter (its op's, with the rows' last position) costs no rescan.
  std::shared_ptr<const std::vector<uint64_t>> set_positions_;
};

}  // namespace ispsim::isp
