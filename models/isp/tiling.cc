#include "models/isp/tiling.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"

namespace ispsim::isp {

namespace {

void check_shape(const trace::ModelShape& shape, const std::string& where) {
  if (shape.layers() == 0) throw BadInput(where, "model shape has 0 layers");
  if (shape.kv_heads() == 0) throw BadInput(where, "model shape has 0 KV heads");
  if (shape.heads() == 0 || shape.heads() % shape.kv_heads() != 0) {
    throw BadInput(where, "model shape: heads = " + std::to_string(shape.heads()) +
                              " is not a positive multiple of kv_heads = " + std::to_string(shape.kv_heads()));
  }
  if (shape.head_dim() == 0) throw BadInput(where, "model shape has head_dim 0");
  if (shape.kv_bits() == 0) throw BadInput(where, "model shape has kv_bits 0");
}

}  // namespace

uint64_t kv_bytes_per_token_head(const trace::ModelShape& shape) {
  return 2ull * shape.head_dim() * shape.kv_bits() / 8;
}

uint64_t kv_bytes_per_token(const trace::ModelShape& shape) {
  return kv_bytes_per_token_head(shape) * shape.kv_heads();
}

uint32_t tokens_per_tile(uint32_t page_bytes, const trace::ModelShape& shape, const std::string& where) {
  check_shape(shape, where);
  const uint64_t bits = 2ull * shape.head_dim() * shape.kv_bits();
  if (bits % 8 != 0) {
    throw BadInput(where, "K and V of one token of one head take " + std::to_string(bits) +
                              " bits, not a whole number of bytes");
  }
  const uint64_t t = uint64_t(page_bytes) * 8 / bits;
  if (t == 0) {
    throw BadInput(where, "one token of one KV head (" + std::to_string(bits / 8) +
                              " bytes of K and V) does not fit in a " + std::to_string(page_bytes) + "-byte page");
  }
  return uint32_t(t);
}

uint64_t pages_for_tokens(uint64_t tokens, uint32_t tokens_per_tile, uint32_t kv_heads) {
  return (tokens + tokens_per_tile - 1) / tokens_per_tile * kv_heads;
}

KvPlacement::KvPlacement(const nand::FlashConfig& flash, const trace::ModelShape& shape,
                         uint64_t precomputed_tokens, uint64_t appended_capacity, const std::string& where,
                         uint32_t appended_slots)
    : flash_(flash),
      layout_(flash),
      shape_(shape),
      tokens_per_tile_(isp::tokens_per_tile(flash.page_bytes, shape, where)),
      kv_heads_(shape.kv_heads()),
      layers_(shape.layers()),
      precomputed_tokens_(precomputed_tokens),
      appended_capacity_(appended_capacity),
      slots_(std::max<uint32_t>(1, appended_slots)) {
  pre_tiles_ = (precomputed_tokens + tokens_per_tile_ - 1) / tokens_per_tile_;
  app_tiles_ = (appended_capacity + tokens_per_tile_ - 1) / tokens_per_tile_;
  const long double slot_pages = (long double)layers_ * app_tiles_ * kv_heads_;
  const uint64_t cycle = uint64_t(flash.channels) * flash.dies_per_channel * flash.planes_per_die;
  // Checked in long double so that absurd token counts cannot wrap around.
  const long double pages = (long double)layers_ * pre_tiles_ * kv_heads_ +
                            (slots_ == 1 ? slot_pages : slots_ * (std::ceil(slot_pages / cycle) * cycle));
  if (pages > (long double)layout_.capacity_pages()) {
    throw BadInput(where, "KV of " + std::to_string(precomputed_tokens) + " precomputed + " +
                              (slots_ > 1 ? std::to_string(slots_) + " x " : std::string()) +
                              std::to_string(appended_capacity) + " appended tokens per layer needs " +
                              std::to_string((unsigned long long)pages) + " pages; the flash has " +
                              std::to_string(layout_.capacity_pages()));
  }
  slot_stride_ = uint64_t(slot_pages);
  if (slots_ > 1) slot_stride_ = (slot_stride_ + cycle - 1) / cycle * cycle;
}

uint64_t KvPlacement::tiles_per_layer(trace::KvRegion region) const {
  return region == trace::KV_REGION_PRECOMPUTED ? pre_tiles_ : slots_ * app_tiles_;
}

uint64_t KvPlacement::tile_index(uint32_t layer, trace::KvRegion region, uint64_t tile, uint32_t kv_head) const {
  const std::string where = "kv placement";
  if (region != trace::KV_REGION_PRECOMPUTED && region != trace::KV_REGION_APPENDED) {
    throw BadInput(where, "KV region unspecified");
  }
  if (layer >= layers_) {
    throw BadInput(where, "layer " + std::to_string(layer) + " of a " + std::to_string(layers_) + "-layer model");
  }
  if (kv_head >= kv_heads_) {
    throw BadInput(where, "KV head " + std::to_string(kv_head) + " of " + std::to_string(kv_heads_));
  }
  const uint64_t tiles = tiles_per_layer(region);
  if (tile >= tiles) {
    throw BadInput(where, std::string(region == trace::KV_REGION_PRECOMPUTED ? "precomputed" : "appended") +
                              " tile " + std::to_string(tile) + " of " + std::to_string(tiles) + " per layer");
  }
  if (region == trace::KV_REGION_PRECOMPUTED) return (uint64_t(layer) * pre_tiles_ + tile) * kv_heads_ + kv_head;
  const uint64_t slot = tile / app_tiles_, t = tile % app_tiles_;
  return uint64_t(layers_) * pre_tiles_ * kv_heads_ + slot * slot_stride_ +
         (uint64_t(layer) * app_tiles_ + t) * kv_heads_ + kv_head;
}

nand::PageAddress KvPlacement::address(uint32_t layer, trace::KvRegion region, uint64_t tile,
                                       uint32_t kv_head) const {
  const uint64_t index = tile_index(layer, region, tile, kv_head);
  return ideal() ? layout_.address(index, "kv placement") : map_->run(index).address;
}

bool KvPlacement::unmoved_since(const MapState& then, uint32_t layer, trace::KvRegion region) const {
  if (then.ideal != ideal()) return false;
  if (then.ideal) return true;
  const uint64_t tiles = tiles_per_layer(region);
  if (tiles == 0) return true;
  const uint64_t first = tile_index(layer, region, 0, 0);
  return map_->unchanged_since(then.version, first, tile_index(layer, region, tiles - 1, kv_heads_ - 1) + 1);
}

bool KvPlacement::page_follows(uint32_t layer, trace::KvRegion region, uint64_t entry) const {
  const uint64_t index = tile_index(layer, region, entry / tokens_per_tile_, 0);
  return ideal() || (index > 0 && map_->run(index - 1).count > 1);
}

uint64_t KvPlacement::total_pages() const {
  return uint64_t(layers_) * (pre_tiles_ + app_tiles_) * kv_heads_ + (slots_ - 1) * slot_stride_;
}

void KvPlacement::check_range(trace::KvRegion region, uint64_t begin, uint64_t end) const {
  if (region == trace::KV_REGION_APPENDED && slots_ > 1 && begin / slot_entries() != (end - 1) / slot_entries()) {
    throw BadInput("kv placement", "appended entries [" + std::to_string(begin) + ", " + std::to_string(end) +
                                       ") span two slots of " + std::to_string(slot_entries()) + " entries");
  }
  const uint64_t limit = region == trace::KV_REGION_PRECOMPUTED ? precomputed_tokens_ : appended_capacity();
  if (end > limit) {
    throw BadInput("kv placement", std::string(region == trace::KV_REGION_PRECOMPUTED ? "precomputed" : "appended") +
                                       " entries [" + std::to_string(begin) + ", " + std::to_string(end) +
                                       ") exceed the region's " + std::to_string(limit) + " per layer");
  }
}

std::vector<KvPlacement::PageRef> KvPlacement::pages(uint32_t layer, trace::KvRegion region, uint64_t begin,
                                                     uint64_t end) const {
  std::vector<PageRef> out;
  if (end <= begin) return out;
  check_range(region, begin, end);  // before reserving
  out.reserve(((end - 1) / tokens_per_tile_ - begin / tokens_per_tile_ + 1) * kv_heads_);
  for_each_page(layer, region, begin, end, [&](const PageRef& ref) { out.push_back(ref); });
  return out;
}

std::vector<KvPlacement::PageRun> KvPlacement::page_runs(uint32_t layer, trace::KvRegion region, uint64_t begin,
                                                         uint64_t end) const {
  std::vector<PageRun> runs;
  if (end <= begin) return runs;
  check_range(region, begin, end);
  nand::PageAddress after;  // the address after the last run's last page in the layout order
  auto extend = [&](const nand::PageAddress& first, uint32_t entries, uint64_t count) {
    if (!runs.empty() && runs.back().entries == entries && first == after) {
      runs.back().count += count;
    } else {
      runs.push_back({first, entries, count});
    }
    if (count == 1) {
      after = first;
      layout_.next(after);
    } else {
      after = layout_.advanced(first, count);
    }
  };
  // The first tile, the whole tiles between, the last tile: a run each (cut
  // where the page map's runs end), joined where their counts agree.
  const uint64_t T = tokens_per_tile_, first = begin / T, last = (end - 1) / T;
  auto entries_of = [&](uint64_t tile) { return uint32_t(std::min(end, (tile + 1) * T) - std::max(begin, tile * T)); };
  const bool mapped = !ideal();
  uint64_t index = mapped ? tile_index(layer, region, first, 0) : 0;  // a region's pages have consecutive indexes
  auto tiles = [&](uint64_t tile, uint64_t count) {
    if (!mapped) return extend(address(layer, region, tile, 0), entries_of(tile), count * kv_heads_);
    for (uint64_t left = count * kv_heads_; left > 0;) {
      const PageMap::Run run = map_->run(index);
      const uint64_t n = std::min(left, run.count);
      extend(run.address, entries_of(tile), n);
      index += n;
      left -= n;
    }
  };
  tiles(first, 1);
  if (last > first + 1) tiles(first + 1, last - first - 1);
  if (last > first) tiles(last, 1);
  return runs;
}

}  // namespace ispsim::isp
