// NAND-aware KV tiling and placement (MemLLM Sec. V-C).
//
// Tile = page: one page holds K and V of T tokens of ONE KV head,
//   T = floor(page_bytes / (2 * head_dim * kv_bits / 8))
// (32 tokens for FP16, head_dim 128, 16 KB pages). A token range of n tokens of
// one layer and region takes ceil(n / T) * kv_heads pages.
//
// KvPlacement maps (layer, region, token tile, kv head) to a linear tile index and
// through nand::Layout to a page address (tiles interleaved across channels, then
// striped across dies). The precomputed region of every layer comes first, then
// the appended (out-of-place) region of every layer:
//
//   precomputed: index = (layer * P + tile) * kv_heads + kv_head,  P = ceil(C / T)
//   appended:    index = L * P * kv_heads + (layer * A + tile) * kv_heads + kv_head,
//                A = ceil(appended_capacity / T)
//
// A request stream holds several requests' appended KV at once (appended_slots
// S, one slot each): slot s is the whole appended region above, again, from
// index L * P * kv_heads + s * R, with R = L * A * kv_heads rounded up to a
// whole number of the layout's cycles (channels x dies x planes pages), so that
// a page of every slot is on the channel, die and plane of slot 0's. A layer's
// appended tiles are numbered slot after slot: tile s * A + t is tile t of slot s.
//
// Precomputed tokens are addressed by position [0, C). Appended entries are
// addressed by their append index (0, 1, ... in the order they were appended),
// which is not their token position: MemLLM appends the recomputed HKVD KV
// (scattered positions), then the query's and the decoded tokens' KV.
// The same placement serves the ISP's attention streams, the SSD's conventional
// host reads and its appends.
//
// Loop order (NAND-stationary, Algorithm 1): KV pages outermost, each page read
// once; Q tiles stream through the page while it sits in the scratchpad.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "models/nand/flash_config.h"
#include "models/nand/layout.h"
#include "models/nand/page_address.h"
#include "traces/trace.pb.h"

namespace ispsim::isp {

// Tokens per tile T; throws BadInput(where, ...) when one token of one head
// (K and V) does not fit in a page or the element width is not whole bytes per
// token.
uint32_t tokens_per_tile(uint32_t page_bytes, const trace::ModelShape& shape,
                         const std::string& where = "tiling");
// Bytes of K and V of one token of one KV head: 2 * head_dim * kv_bits / 8.
uint64_t kv_bytes_per_token_head(const trace::ModelShape& shape);
// Bytes of K and V of one token of one layer (all KV heads).
uint64_t kv_bytes_per_token(const trace::ModelShape& shape);
// Pages holding `tokens` consecutive entries of one layer and region: ceil(tokens / T) * kv_heads.
uint64_t pages_for_tokens(uint64_t tokens, uint32_t tokens_per_tile, uint32_t kv_heads);

// Where the linear pages are on the flash. Without one, KvPlacement puts page i
// at nand::Layout's address i, the ideal stripe; an SSD gives its FTL's
// mapping (models/ssd/flash_translation.h).
class PageMap {
 public:
  struct Run {
    nand::PageAddress address;  // of the page asked for
    uint64_t count = 1;         // pages from it on that follow each other in the layout order (>= 1)
  };
  virtual ~PageMap() = default;
  virtual Run run(uint64_t index) const = 0;
  // Every page is on the channel, die and plane the layout gives it. The
  // timing depends on nothing else (nand::Die), so the layout's addresses stand
  // for the pages then.
  virtual bool ideal() const = 0;
  // The map's changes so far (a map whose pages never move may say 0), and
  // whether none since `version` moved a page of [first, end): what was read
  // of those pages then is still true.
  virtual uint64_t version() const { return 0; }
  virtual bool unchanged_since(uint64_t version, uint64_t first, uint64_t end) const {
    (void)first, (void)end;
    return version == this->version();
  }
};

class KvPlacement {
 public:
  // `precomputed_tokens` C per layer (the request's context), `appended_capacity`
  // entries per layer (recomputed HKVD + query + answer tokens). Throws BadInput
  // when the regions exceed the flash or the shape is unusable.
  // `appended_slots` S >= 1 slots of appended_capacity entries each (see above).
  KvPlacement(const nand::FlashConfig& flash, const trace::ModelShape& shape,
              uint64_t precomputed_tokens, uint64_t appended_capacity,
              const std::string& where = "kv placement", uint32_t appended_slots = 1);

  uint32_t tokens_per_tile() const { return tokens_per_tile_; }
  uint32_t kv_heads() const { return kv_heads_; }
  uint32_t layers() const { return layers_; }
  uint64_t precomputed_tokens() const { return precomputed_tokens_; }
  // Appended entries per layer, every slot's: S x slot_entries() (the capacity itself for one slot).
  uint64_t appended_capacity() const { return slots_ == 1 ? appended_capacity_ : slots_ * slot_entries(); }
  uint32_t appended_slots() const { return slots_; }
  // Entries per layer of one slot, from entry s x slot_entries() on: A x T (the capacity for one slot).
  uint64_t slot_entries() const { return slots_ == 1 ? appended_capacity_ : app_tiles_ * tokens_per_tile_; }
  const trace::ModelShape& shape() const { return shape_; }
  const nand::FlashConfig& flash() const { return flash_; }
  const nand::Layout& layout() const { return layout_; }

  // Token tiles per layer of a region (ceil(tokens / T); appended: of every slot).
  uint64_t tiles_per_layer(trace::KvRegion region) const;
  // Linear tile (page) index; throws BadInput on an out-of-range argument.
  uint64_t tile_index(uint32_t layer, trace::KvRegion region, uint64_t tile, uint32_t kv_head) const;
  nand::PageAddress address(uint32_t layer, trace::KvRegion region, uint64_t tile,
                            uint32_t kv_head) const;
  uint64_t total_pages() const;
  // Resolves addresses through `map` (nullable: the layout; it must outlive
  // the placement).
  void set_page_map(const PageMap* map) { map_ = map; }
  // The layout's addresses are where the pages are, channel, die and plane.
  bool ideal() const { return map_ == nullptr || map_->ideal(); }
  // The page map as it is now, and whether a layer's region has the same
  // addresses as then (both ideal, or no page of the region moved since).
  struct MapState {
    bool ideal = true;
    uint64_t version = 0;
  };
  MapState map_state() const { return {ideal(), map_ == nullptr ? 0 : map_->version()}; }
  bool unmoved_since(const MapState& then, uint32_t layer, trace::KvRegion region) const;

  // One page of a stream, with what it holds.
  struct PageRef {
    nand::PageAddress address;
    uint32_t layer = 0;
    trace::KvRegion region = trace::KV_REGION_UNSPECIFIED;
    uint64_t tile = 0;       // token tile within the layer's region
    uint32_t kv_head = 0;
    uint64_t first_entry = 0;  // first entry (position or append index) of the tile
    uint32_t entries = 0;      // entries of [begin, end) on this page (<= T)
    bool follows = true;       // the address follows the previous page's in the layout order
  };
  // The pages of entries [begin, end) of one layer and region, tile-major and
  // kv-head-minor (consecutive pages use consecutive channels). Empty for an
  // empty range; BadInput when the range exceeds the region.
  std::vector<PageRef> pages(uint32_t layer, trace::KvRegion region, uint64_t begin,
                             uint64_t end) const;
  // The same pages as runs: pages that follow each other in the layout order
  // and hold the same number of entries, in that order. On the layout's own
  // addresses a range has at most three (its first tile, its whole tiles, its
  // last tile), so a read's bookkeeping need not visit its pages; through a
  // page map, a run ends where the map's does.
  struct PageRun {
    nand::PageAddress first;
    uint32_t entries = 0;  // of every page of the run
    uint64_t count = 0;
  };
  std::vector<PageRun> page_runs(uint32_t layer, trace::KvRegion region, uint64_t begin, uint64_t end) const;
  // The same pages, each handed to visit(const PageRef&) in that order: no list.
  template <typename Visit>
  void for_each_page(uint32_t layer, trace::KvRegion region, uint64_t begin, uint64_t end, Visit visit) const;
  // Whether the page of entry `entry`'s tile (KV head 0) is in the map's run of
  // the page before it: for_each_run() from an earlier entry visits both at once.
  bool page_follows(uint32_t layer, trace::KvRegion region, uint64_t entry) const;
  // The same pages as the map's runs: visit(first address, first page, pages),
  // pages counted from the range's first tile's head 0, in that order; pages of
  // one visit follow each other in the layout order, and the first page of a
  // visit after the first is where for_each_page() says it does not follow.
  template <typename Visit>
  void for_each_run(uint32_t layer, trace::KvRegion region, uint64_t begin, uint64_t end, Visit visit) const;

 private:
  // BadInput when [begin, end) exceeds the region's entries per layer or spans two slots.
  void check_range(trace::KvRegion region, uint64_t begin, uint64_t end) const;

  nand::FlashConfig flash_;
  nand::Layout layout_;
  const PageMap* map_ = nullptr;
  trace::ModelShape shape_;
  uint32_t tokens_per_tile_ = 0;
  uint32_t kv_heads_ = 0;
  uint32_t layers_ = 0;
  uint64_t precomputed_tokens_ = 0;
  uint64_t appended_capacity_ = 0;
  uint64_t pre_tiles_ = 0;
  uint64_t app_tiles_ = 0;      // A, per slot
  uint32_t slots_ = 1;          // S
  uint64_t slot_stride_ = 0;    // R: pages from one slot's first to the next's
};

// The map's runs, each page's address following from the one before.
template <typename Visit>
void KvPlacement::for_each_page(uint32_t layer, trace::KvRegion region, uint64_t begin, uint64_t end,
                                Visit visit) const {
  const uint64_t T = tokens_per_tile_;
  PageRef ref;
  ref.layer = layer;
  ref.region = region;
  for_each_run(layer, region, begin, end, [&](const nand::PageAddress& first, uint64_t first_page, uint64_t pages) {
    ref.address = first;
    for (uint64_t page = first_page; page < first_page + pages; ++page) {
      if (page != first_page) layout_.next(ref.address);
      ref.follows = page != first_page || page == 0;
      ref.tile = begin / T + page / kv_heads_;
      ref.kv_head = uint32_t(page % kv_heads_);
      ref.first_entry = std::max(begin, ref.tile * T);
      ref.entries = uint32_t(std::min(end, (ref.tile + 1) * T) - ref.first_entry);
      visit(static_cast<const PageRef&>(ref));
    }
  });
}

// A region's pages of one layer have consecutive tile indexes (see above), so
// the range is checked once and the map asked once a run.
template <typename Visit>
void KvPlacement::for_each_run(uint32_t layer, trace::KvRegion region, uint64_t begin, uint64_t end,
                               Visit visit) const {
  if (end <= begin) return;
  check_range(region, begin, end);
  const uint64_t T = tokens_per_tile_;
  const uint64_t pages = ((end + T - 1) / T - begin / T) * kv_heads_;
  if (ideal()) return visit(address(layer, region, begin / T, 0), uint64_t(0), pages);
  uint64_t index = tile_index(layer, region, begin / T, 0);
  for (uint64_t page = 0; page < pages;) {
    const PageMap::Run run = map_->run(index);
    const uint64_t n = std::min(run.count, pages - page);
    visit(run.address, page, n);
    page += n;
    index += n;
  }
}

}  // namespace ispsim::isp
