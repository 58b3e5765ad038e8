#include "models/isp/attention_planner.h"

#include <algorithm>
#include <stdexcept>

#include "common/error.h"

namespace ispsim::isp {

namespace {

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// Whether two tiles are alike in all but their place (PassTiles::Run): their
// counts, costs and size, whatever tokens they list.
bool alike(const PlannedTile& a, const PlannedTile& b) {
  const FilterResult& f = a.filter;
  const FilterResult& g = b.filter;
  const TileCost& c = a.cost;
  const TileCost& d = b.cost;
  return a.in_flash == b.in_flash && a.region == b.region && a.entries == b.entries && f.kept == g.kept &&
         f.substituted == g.substituted && f.dropped == g.dropped && f.forwarded == g.forwarded &&
         f.cycles == g.cycles && f.tokens.empty() && g.tokens.empty() && c.cycles == d.cycles &&
         c.compute_cycles == d.compute_cycles && c.sram_io_cycles == d.sram_io_cycles && c.macs == d.macs &&
         c.computed_tokens == d.computed_tokens && c.scratchpad_bytes == d.scratchpad_bytes &&
         c.energy_pj == d.energy_pj;
}

// Fills one pass's tile list (PassTiles): each tile filtered and costed,
// grouped in runs of alike tiles; listed, every tile (a token tile's KV heads
// after the first are copies of it), else each run's first only.
class TileLister {
 public:
  TileLister(PassTiles& out, const StreamFilter& filter, const PageCompute& compute, const AttentionShape& shape,
             bool with_tokens)
      : out_(out), filter_(filter), compute_(compute), shape_(shape), with_tokens_(with_tokens) {}

  // A token tile's filter and accelerator costs, the same for its KV heads.
  PlannedTile costed(bool in_flash, trace::KvRegion region, uint64_t first_entry, uint32_t entries) const {
    PlannedTile tile;
    tile.in_flash = in_flash;
    tile.region = region;
    tile.first_entry = first_entry;
    tile.entries = entries;
    tile.filter = region != trace::KV_REGION_PRECOMPUTED ? filter_.appended_page(first_entry, entries, with_tokens_)
                  : with_tokens_                             ? filter_.precomputed_page(first_entry, entries, true)
                                                             : filter_.precomputed_counts(first_entry, entries, rank_cursor_);
    tile.cost = compute_.tile_cost(shape_.mode, tile.filter, entries,
                                   TileShape{out_.row_heads_per_tile, shape_.head_dim, shape_.kv_bits, shape_.act_bits});
    return tile;
  }
  // `count` tiles like `tile`; true: it starts a run, and goes next in the list.
  bool extend_runs(const PlannedTile& tile, uint64_t count) {
    if (!out_.runs.empty() && alike(out_.tiles[out_.runs.back().first], tile)) {
      out_.runs.back().count += count;
      return false;
    }
    out_.runs.push_back({out_.tiles.size(), count});
    return true;
  }
  // `count` tiles alike to the last run's first that follow it.
  void join_run(uint64_t count) { out_.runs.back().count += count; }
  // One tile; a KV head after the first joins its head-0 tile's run. A page
  // that does not follow the one before in the layout order (the FTL put it
  // elsewhere) starts a run: a run's pages follow each other. Not listed: only
  // a run's first tile is kept.
  void place(PlannedTile tile, bool follows = true, bool listed = true) {
    bool starts = true;
    if (!follows) {
      out_.runs.push_back({out_.tiles.size(), 1});
    } else if (tile.kv_head == 0) {
      starts = extend_runs(tile, 1);
    } else {
      ++out_.runs.back().count;
      starts = false;
    }
    if (listed || starts) out_.tiles.push_back(std::move(tile));
  }

 private:
  PassTiles& out_;
  const StreamFilter& filter_;
  const PageCompute& compute_;
  const AttentionShape& shape_;
  const bool with_tokens_;
  mutable size_t rank_cursor_ = 0;  // a pass's precomputed pages come in ascending position
};

}  // namespace

AttentionPlanner::AttentionPlanner(const KvPlacement& placement, const IspConfig& isp, const PageCompute& compute,
                                   const CoordinatorConfig& coordinator, Organization organization,
                                   Reduction reduction, const core::Server& controller_dram, uint32_t page_bytes,
                                   unsigned channels)
    : placement_(placement),
      isp_(isp),
      compute_(compute),
      coordinator_(coordinator),
      organization_(organization),
      reduction_(reduction),
      dram_(controller_dram),
      lse_(coordinator),
      page_bytes_(page_bytes),
      channels_(channels) {}

void AttentionPlanner::check_against_placement(const AttentionWork& work, const std::string& where) const {
  const trace::ModelShape& want = placement_.shape();
  const trace::ModelShape& got = work.shape;
  if (got.layers() != want.layers() || got.heads() != want.heads() || got.kv_heads() != want.kv_heads() ||
      got.head_dim() != want.head_dim() || got.kv_bits() != want.kv_bits()) {
    throw BadInput(where, "model shape (layers " + std::to_string(got.layers()) + ", heads " +
                              std::to_string(got.heads()) + "/" + std::to_string(got.kv_heads()) + ", head_dim " +
                              std::to_string(got.head_dim()) + ", kv_bits " + std::to_string(got.kv_bits()) +
                              ") differs from the KV placement's");
  }
  if (work.layer >= want.layers()) {
    throw BadInput(where, "layer out of range (the model has " + std::to_string(want.layers()) + ")");
  }
  if (got.activation_bits() == 0) throw BadInput(where, "activation_bits is 0");
  if (work.context_tokens > placement_.precomputed_tokens()) {
    throw BadInput(where, std::to_string(work.context_tokens) + " context tokens exceed the " +
                              std::to_string(placement_.precomputed_tokens()) + " placed per layer");
  }
  if (work.appended_base + work.appended_tokens_in_flash > placement_.appended_capacity()) {
    throw BadInput(where, std::to_string(work.appended_tokens_in_flash) + " appended tokens in flash from entry " +
                              std::to_string(work.appended_base) + " exceed the " +
                              std::to_string(placement_.appended_capacity()) + " placed per layer");
  }
  if (work.appended_base % std::max<uint64_t>(1, placement_.slot_entries()) != 0)
    throw std::logic_error(where + ": appended base " + std::to_string(work.appended_base) +
                           " is not the first entry of a slot");
}

// A layer's ops in decode share their mask: its last op's copy and filter
// serve while it stays the same.
void AttentionPlanner::share_or_make_filter(const AttentionWork& work, CheckedAttention& checked) const {
  if (last_checked_.size() < placement_.shape().layers()) last_checked_.resize(placement_.shape().layers());
  Checked& last = last_checked_[work.layer];
  if (work.hkvd_mask != nullptr && last.mask != nullptr && last.context_tokens == work.context_tokens &&
      last.causal == work.causal && last.mask->bit_length() == work.hkvd_mask->bit_length() &&
      last.mask->bits() == work.hkvd_mask->bits()) {
    checked.mask_ = last.mask;
    checked.filter_ = last.filter;
    return;
  }
  if (work.hkvd_mask != nullptr) checked.mask_ = std::make_shared<const trace::BitVector>(*work.hkvd_mask);
  FilterContext context;
  context.context_tokens = work.context_tokens;
  context.hkvd_mask = checked.mask_.get();
  context.causal = work.causal;
  checked.filter_ = std::make_shared<const StreamFilter>(isp_, context, checked.shape_.where);
  last = {checked.mask_, checked.filter_, work.context_tokens, work.causal};
}

// The rows against the appended entries, and their passes (row chunks).
void AttentionPlanner::check_rows(const AttentionWork& work, AttentionShape& s) const {
  if (s.substitutes > s.appended_total) {
    throw BadInput(s.where, "the HKVD mask selects " + std::to_string(s.substitutes) + " tokens but only " +
                                std::to_string(s.appended_total) + " appended entries exist");
  }
  if (work.query_rows == 0) throw BadInput(s.where, "no query rows");
  if (work.query_rows > s.appended_total) {
    throw BadInput(s.where, std::to_string(work.query_rows) + " query rows but only " +
                                std::to_string(s.appended_total) +
                                " appended entries (the rows are the last appended entries)");
  }
  if (reduction_ == Reduction::GLOBAL_SRAM) {
    const RowChunking chunks = lse_.chunk_rows(work.query_rows, work.shape.heads(), s.head_dim, s.act_bits, s.where);
    s.passes = chunks.passes;
    s.rows_per_pass = chunks.rows_per_pass;
  } else {
    s.passes = 1;
    s.rows_per_pass = work.query_rows;
  }
}

CheckedAttention AttentionPlanner::check(const AttentionWork& work) const {
  CheckedAttention checked;
  AttentionShape& s = checked.shape_;
  s.where = "attention layer " + std::to_string(work.layer);
  check_against_placement(work, s.where);
  const trace::ModelShape& got = work.shape;
  s.group = got.heads() / got.kv_heads();
  s.head_dim = got.head_dim();
  s.kv_bits = got.kv_bits();
  s.act_bits = got.activation_bits();
  share_or_make_filter(work, checked);
  s.substitutes = checked.filter_->substitutes();
  s.appended_total = work.appended_tokens_in_flash + work.appended_tokens_supplied;
  check_rows(work, s);
  s.mode = compute_.choose_mode(placement_.tokens_per_tile(),
                                TileShape{s.rows_per_pass * s.group, s.head_dim, s.kv_bits, s.act_bits});
  checked.work_ = work;
  checked.work_.hkvd_mask = checked.mask_.get();
  return checked;
}

PassTiles AttentionPlanner::tiles_of(const AttentionWork& work, const AttentionShape& shape,
                                     const StreamFilter& op_filter, uint64_t pass, bool with_tokens,
                                     bool listed) const {
  PassTiles out;
  // Storage of a finished pass, reused: a long op's tile list is megabytes, and
  // allocating it afresh for every pass costs more than filling it.
  out.tiles = std::move(spare_.tiles);
  out.tiles.clear();
  out.runs = std::move(spare_.runs);
  out.runs.clear();
  out.first_row = pass * shape.rows_per_pass;
  out.rows = std::min(shape.rows_per_pass, work.query_rows - out.first_row);
  out.row_heads_per_tile = out.rows * shape.group;
  const uint64_t first_row_entry = shape.appended_total - work.query_rows + out.first_row;

  StreamFilter filter = op_filter;
  for (uint64_t r = 0; r < out.rows; ++r) out.row_positions.push_back(filter.position_of_appended(first_row_entry + r));
  filter.set_max_row_position(out.row_positions.back());  // positions grow with the append index

  TileLister lister(out, filter, compute_, shape, with_tokens);
  const uint64_t T = placement_.tokens_per_tile();
  const uint32_t heads = placement_.kv_heads();
  const uint64_t own_begin = std::max(work.appended_tokens_in_flash, shape.substitutes);
  const uint64_t supplied_tiles = ceil_div(shape.appended_total - std::min(own_begin, shape.appended_total), T);
  out.listed = listed;
  if (listed) {
    out.tiles.reserve((ceil_div(work.context_tokens, T) + ceil_div(work.appended_tokens_in_flash, T) + supplied_tiles) *
                      heads);
  }
  // The NAND pages: a token tile's KV heads are consecutive pages.
  // The firmware knows the pass's visible range: a page that no row of the pass
  // can see is neither read nor filtered, whatever the accelerator.
  for (trace::KvRegion region : {trace::KV_REGION_PRECOMPUTED, trace::KV_REGION_APPENDED}) {
    const uint64_t stored =
        region == trace::KV_REGION_PRECOMPUTED ? work.context_tokens : work.appended_tokens_in_flash;
    const uint64_t end = std::min(stored, ceil_div(filter.visible_entries(region, stored), T) * T);
    const uint64_t base = region == trace::KV_REGION_APPENDED ? work.appended_base : 0;  // a whole tile
    if (!listed) {  // each run's first page; through the FTL's map, a run ends where the map's does
      // The tiles of entries [from, to), after those listed; `first_follows`: its first page
      // continues the last run's pages in the layout, when alike.
      auto list_runs = [&](uint64_t from, uint64_t to, bool first_follows) {
        const uint64_t first_tile = from / T;
        auto tile_at = [&](uint64_t t) {
          return lister.costed(true, region, t * T, uint32_t(std::min(to, (t + 1) * T) - t * T));
        };
        // The end of the tiles alike to tile t: the whole tiles after a whole
        // tile kept as read, kept as read too; after a whole tile of
        // substitutes (forwarded), forwarded too.
        auto alike_end = [&](uint64_t t, const PlannedTile& tile) {
          if (region == trace::KV_REGION_APPENDED && tile.filter.forwarded == T)
            return std::max(t + 1, filter.forwarded_end((t + 1) * T, to) / T);
          if (tile.filter.kept != T || tile.filter.substituted != 0) return t + 1;
          return std::max(t + 1, filter.kept_as_read_end(region, (t + 1) * T, to) / T);
        };
        uint64_t costed_tile = ~uint64_t(0), alike_until = 0;
        PlannedTile tile;
        auto visit = [&](const nand::PageAddress& first, uint64_t first_page, uint64_t pages) {
          for (uint64_t page = first_page; page < first_page + pages;) {
            if (first_tile + page / heads != costed_tile) {
              costed_tile = first_tile + page / heads;
              tile = tile_at(costed_tile);
              alike_until = alike_end(costed_tile, tile);
            }
            PlannedTile placed = tile;
            placed.address = placement_.layout().advanced(first, page - first_page);
            placed.channel = placed.address.channel;
            placed.kv_head = uint32_t(page % heads);
            lister.place(std::move(placed), page != first_page || (page == 0 && first_follows), false);
            // The pages after it up to the end of its alike tiles join its run.
            const uint64_t stop = std::min(first_page + pages, (alike_until - first_tile) * heads);
            lister.join_run(stop - page - 1);
            page = stop;
          }
        };
        placement_.for_each_run(work.layer, region, base + from, base + to, visit);
      };
      // The whole tiles every row of the pass sees (all of them when every
      // position is visible): their listing depends on the filter, the rows and
      // the mode alone, so the layer's kept listing of a prefix of them serves,
      // extended (a decode step's pass sees what the step before's did; a row
      // chunk's, more than the chunk before's).
      const uint64_t visible = filter.visible_entries(region, stored);
      uint64_t prefix = 0;
      if (region == trace::KV_REGION_PRECOMPUTED && out.tiles.empty())
        prefix = visible == stored ? stored : visible / T * T;
      uint64_t from = 0;
      if (prefix > 0) {
        PrecomputedListing* kept = kept_listing(work, op_filter, prefix, out, shape);
        if (kept != nullptr) {
          lend_listing(*kept, work.layer, out);
          if (kept->end < prefix) {
            list_runs(kept->end, prefix, placement_.page_follows(work.layer, region, kept->end));
            extend_listing(*kept, prefix, out);
          }
        } else {
          list_runs(0, prefix, true);
          keep_listing(work, op_filter, prefix, out, shape);
        }
        from = prefix;
      }
      if (from < end) list_runs(from, end, from == 0 || placement_.page_follows(work.layer, region, base + from));
      continue;
    }
    PlannedTile costed;  // the token tile of the page's KV heads
    placement_.for_each_page(work.layer, region, base, base + end, [&](const KvPlacement::PageRef& ref) {
      if (ref.kv_head == 0) costed = lister.costed(true, region, ref.first_entry - base, ref.entries);
      PlannedTile tile = costed;
      tile.address = ref.address;
      tile.channel = ref.address.channel;
      tile.kv_head = ref.kv_head;
      lister.place(std::move(tile), ref.follows, listed);
    });
  }
  // Own tokens that came with the command (substitutes among the supplied
  // entries are forwarded to their precomputed pages, not computed here);
  // tile k of them goes to channel k mod C.
  auto channel_of = [&](uint64_t k) { return organization_ == Organization::PER_CHANNEL ? unsigned(k % channels_) : 0u; };
  uint64_t k = 0;
  for (uint64_t first = own_begin; first < shape.appended_total; first += T, k += heads) {
    PlannedTile tile =
        lister.costed(false, trace::KV_REGION_APPENDED, first, uint32_t(std::min(T, shape.appended_total - first)));
    tile.channel = channel_of(k);
    if (!listed) {
      if (lister.extend_runs(tile, heads)) out.tiles.push_back(std::move(tile));
      continue;
    }
    for (uint32_t h = 0; h < heads; ++h) {
      tile.channel = channel_of(k + h);
      tile.kv_head = h;
      lister.place(tile);
    }
  }
  return out;
}

void AttentionPlanner::recycle(PassTiles& tiles) const {
  take_back_listing(tiles);
  spare_.tiles = std::move(tiles.tiles);
  spare_.runs = std::move(tiles.runs);
}

// The pass's (empty) storage goes to the listing while it is lent.
void AttentionPlanner::lend_listing(PrecomputedListing& listing, uint32_t layer, PassTiles& out) const {
  std::swap(out.tiles, listing.tiles);
  std::swap(out.runs, listing.runs);
  listing.lent = true;
  out.borrowed_listing = listing.name;
  out.borrowed_layer = layer;
  out.borrowed_runs = listing.run_count;
}

// A listing made again while lent (a pass not recycled) is the layer's now:
// the lent one's storage is then the pass's to recycle.
void AttentionPlanner::take_back_listing(PassTiles& tiles) const {
  if (tiles.borrowed_listing == 0) return;
  const uint64_t name = tiles.borrowed_listing;
  tiles.borrowed_listing = 0;
  if (tiles.borrowed_layer >= listings_.size()) return;
  PrecomputedListing& listing = listings_[tiles.borrowed_layer];
  if (!listing.lent || listing.name != name) return;
  tiles.tiles.erase(tiles.tiles.begin() + std::ptrdiff_t(listing.tile_count), tiles.tiles.end());
  tiles.runs.resize(listing.run_count);
  if (!tiles.runs.empty()) tiles.runs.back().count = listing.last_run_count;
  std::swap(tiles.tiles, listing.tiles);
  std::swap(tiles.runs, listing.runs);
  listing.lent = false;
}

PassTiles AttentionPlanner::pass_tiles(const CheckedAttention& op, uint64_t pass, bool with_tokens,
                                       bool listed) const {
  if (pass >= op.shape().passes) {
    throw std::logic_error("pass_tiles: pass " + std::to_string(pass) + " of " + std::to_string(op.shape().passes));
  }
  return tiles_of(op.work(), op.shape(), *op.filter_, pass, with_tokens, listed);
}

AttentionPlanner::PrecomputedListing* AttentionPlanner::kept_listing(const AttentionWork& work,
                                                                    const StreamFilter& op_filter, uint64_t prefix,
                                                                    const PassTiles& out,
                                                                    const AttentionShape& shape) const {
  if (work.layer >= listings_.size()) return nullptr;
  PrecomputedListing& kept = listings_[work.layer];
  if (kept.lent || !kept.begins(&op_filter, prefix, out, shape)) return nullptr;
  return placement_.unmoved_since(kept.map, work.layer, trace::KV_REGION_PRECOMPUTED) ? &kept : nullptr;
}

void AttentionPlanner::extend_listing(PrecomputedListing& listing, uint64_t end, PassTiles& out) const {
  listing.end = end;
  listing.tile_count = out.tiles.size();
  listing.run_count = out.runs.size();
  out.borrowed_runs = listing.run_count;
  listing.last_run_count = out.runs.empty() ? 0 : out.runs.back().count;
  listing.map = placement_.map_state();  // its pages unmoved until now: kept_listing() checked
}

// Kept only for the layer's shared filter (check() made it; held here, its
// address cannot name another filter while the listing is kept).
void AttentionPlanner::keep_listing(const AttentionWork& work, const StreamFilter& op_filter, uint64_t end,
                                    const PassTiles& out, const AttentionShape& shape) const {
  if (work.layer >= last_checked_.size() || last_checked_[work.layer].filter.get() != &op_filter) return;
  if (listings_.size() < placement_.shape().layers()) listings_.resize(placement_.shape().layers());
  PrecomputedListing& kept = listings_[work.layer];
  kept.filter = last_checked_[work.layer].filter;
  kept.end = end;
  kept.row_heads = out.row_heads_per_tile;
  kept.mode = shape.mode;
  kept.head_dim = shape.head_dim;
  kept.kv_bits = shape.kv_bits;
  kept.act_bits = shape.act_bits;
  kept.tiles = out.tiles;
  kept.runs = out.runs;
  kept.tile_count = kept.tiles.size();
  kept.run_count = kept.runs.size();
  kept.last_run_count = kept.runs.empty() ? 0 : kept.runs.back().count;
  kept.name = ++listings_made_;
  kept.map = placement_.map_state();
  kept.lent = false;
}

uint64_t AttentionPlanner::q_bytes(const PlannedTile& tile, uint64_t row_heads, uint32_t act_bits) const {
  if (tile.filter.kept == 0) return 0;
  return row_heads * placement_.shape().head_dim() * act_bits / 8;
}

uint64_t AttentionPlanner::compute_ps(const PlannedTile& tile) const { return compute_.cycles_to_ps(tile.cost.cycles); }

uint64_t AttentionPlanner::page_time_ps(const PlannedTile& tile, uint64_t row_heads, uint32_t act_bits) const {
  const uint64_t compute = compute_ps(tile);
  const uint64_t q = q_bytes(tile, row_heads, act_bits);
  if (q == 0) return compute;
  // The page's Q rows arrive while the previous page is computed (Q tile double
  // buffer); a page cannot finish faster than its Q can be delivered.
  const uint64_t q_ps = reduction_ == Reduction::GLOBAL_SRAM
                            ? coordinator_.cycles_to_ps(ceil_div(q, coordinator_.sram_bytes_per_cycle))
                            : dram_.occupancy(q).value() * channels_;
  return std::max(compute, q_ps);
}

TileAccount AttentionPlanner::account(const PlannedTile& tile, uint64_t row_heads, const AttentionShape& shape,
                                      const trace::ModelShape& model) const {
  const uint64_t q = q_bytes(tile, row_heads, shape.act_bits);
  TileAccount a;
  a.compute_pj = tile.cost.energy_pj;
  if (tile.in_flash) a.compute_pj += double(page_bytes_) * isp_.scratchpad_pj_per_byte;  // page into the scratchpad
  const bool computed = tile.filter.kept > 0;
  const ReductionCost partial = lse_.partial_cost(computed ? row_heads : 0, shape.head_dim, shape.act_bits);
  if (organization_ == Organization::PER_CHANNEL) {
    a.partial = computed;
    if (computed) a.reduction_cycles = partial.occupancy_cycles;
    if (reduction_ == Reduction::GLOBAL_SRAM) {
      a.reduction_pj = partial.energy_pj + double(q) * coordinator_.sram_pj_per_byte;
    } else {
      a.dram_bytes = q + 2 * partial.partial_bytes;  // Q in; partial written and read back
      a.reduction_pj = double(computed ? row_heads : 0) * shape.head_dim * coordinator_.lse_pj_per_element;
    }
    return a;
  }
  // The page crosses the bus, is written to DRAM and read back; the running
  // (O, m, l) of its row-heads is read and written back with its Q rows.
  if (tile.in_flash) {
    a.bus_bytes = page_bytes_;
    a.dram_bytes = 2 * uint64_t(page_bytes_);
  } else {
    a.dram_bytes = tile.entries * kv_bytes_per_token_head(model);  // came by DMA into controller DRAM
  }
  if (reduction_ == Reduction::GLOBAL_SRAM) {
    a.reduction_pj = double(q + 2 * partial.partial_bytes) * coordinator_.sram_pj_per_byte;
  } else {
    a.dram_bytes += q + 2 * partial.partial_bytes;
  }
  return a;
}

AttentionPlan AttentionPlanner::plan(const CheckedAttention& op) const {
  const AttentionShape& shape = op.shape();
  AttentionPlan p;
  p.passes = shape.passes;
  p.rows_per_pass = shape.rows_per_pass;
  p.mode = shape.mode;
  for (uint64_t pass = 0; pass < shape.passes; ++pass) {
    const PassTiles tiles = tiles_of(op.work(), shape, *op.filter_, pass, false);
    for (const PlannedTile& tile : tiles.tiles) {
      if (tile.in_flash) ++p.pages_read;
      if (pass == 0) (tile.in_flash ? p.pages_per_pass : p.supplied_tiles) += 1;
      p.tokens_kept += tile.filter.kept;
      p.tokens_substituted += tile.filter.substituted;
      p.tokens_dropped += tile.filter.dropped;
      p.macs += tile.cost.macs;
      p.simd_cycles += tile.cost.cycles;
      p.sram_io_cycles += tile.cost.sram_io_cycles;
      const TileAccount a = account(tile, tiles.row_heads_per_tile, shape, op.work().shape);
      p.partials += a.partial ? 1 : 0;
      p.reduction_cycles += a.reduction_cycles;
      p.dram_bytes += a.dram_bytes;
      p.bus_bytes += a.bus_bytes;
      p.energy_pj += a.compute_pj + a.reduction_pj;
    }
  }
  return p;
}

}  // namespace ispsim::isp
