// What an attention op costs before it runs: the checks of an op against the
// KV placement, the tiles of each pass (NAND pages in stream order, then the
// supplied tiles, in runs of alike tiles), each tile's time and bytes, and the
// op's plan. Pure functions of the configuration (two caches aside: the last
// checked mask per layer, a finished pass's tile storage); the engine's two
// timing models (page events, attention_engine.h; event-free passes,
// pass_scheduler.h) both read their tiles and costs from here.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "models/core/server.h"
#include "models/isp/attention_work.h"
#include "models/isp/isp_config.h"
#include "models/isp/lse_reduction.h"
#include "models/isp/page_compute.h"
#include "models/isp/tiling.h"

namespace ispsim::isp {

// Costs of one computed tile that the timing models and plan() count alike.
struct TileAccount {
  uint64_t dram_bytes = 0;
  uint64_t bus_bytes = 0;
  bool partial = false;
  uint64_t reduction_cycles = 0;
  double compute_pj = 0;    // accelerator (channel or central)
  double reduction_pj = 0;  // LSE engine (+ global SRAM)
};

class AttentionPlanner {
 public:
  // `placement`, `compute` and `controller_dram` (whose occupancy times a
  // page's Q delivery with CONTROLLER_DRAM) must outlive the planner.
  AttentionPlanner(const KvPlacement& placement, const IspConfig& isp, const PageCompute& compute,
                   const CoordinatorConfig& coordinator, Organization organization, Reduction reduction,
                   const core::Server& controller_dram, uint32_t page_bytes, unsigned channels);

  // The op's checks (BadInput "attention layer <l>": mask length, rows beyond
  // the appended entries, tokens beyond the placement's regions, a shape other
  // than the placement's), made once.
  CheckedAttention check(const AttentionWork& work) const;
  // The counts a run of the op makes, without simulating.
  AttentionPlan plan(const CheckedAttention& op) const;
  // The tiles of pass `pass` (0 .. passes - 1); `with_tokens` lists the
  // filtered tokens of every tile (functional use).
  PassTiles pass_tiles(const CheckedAttention& op, uint64_t pass, bool with_tokens = false, bool listed = true) const;
  // As pass_tiles(); not `listed`: each run's first tile only (all an
  // event-free pass needs).
  PassTiles tiles_of(const AttentionWork& work, const AttentionShape& shape, const StreamFilter& op_filter,
                     uint64_t pass, bool with_tokens, bool listed = true) const;
  // Gives a finished pass's tile storage back for the next tiles_of() (and
  // the layer's kept listing it began with, if lent to it).
  void recycle(PassTiles& tiles) const;
  // The tiles of `pass`'s runs [first_run, end_run), in list order, whether the
  // pass is listed or not: visit(tile, index, address, channel) with `tile` its
  // run's first (alike in all but place) and `index` its place in the listing.
  template <typename Visit>
  void for_each_tile(const PassTiles& pass, size_t first_run, size_t end_run, uint64_t first_index,
                     Visit visit) const;

  // A computed tile's Q bytes (0 when nothing in it is kept).
  uint64_t q_bytes(const PlannedTile& tile, uint64_t row_heads, uint32_t act_bits) const;
  // The accelerator's time for the tile.
  uint64_t compute_ps(const PlannedTile& tile) const;
  // The tile's time on its channel: its compute, at least its Q's delivery.
  uint64_t page_time_ps(const PlannedTile& tile, uint64_t row_heads, uint32_t act_bits) const;
  // The tile's bytes and energies (see attention_engine.h).
  TileAccount account(const PlannedTile& tile, uint64_t row_heads, const AttentionShape& shape,
                      const trace::ModelShape& model) const;

  Organization organization() const { return organization_; }
  Reduction reduction() const { return reduction_; }
  const LseReduction& lse() const { return lse_; }
  const CoordinatorConfig& coordinator() const { return coordinator_; }
  const IspConfig& isp() const { return isp_; }

 private:
  void check_against_placement(const AttentionWork& work, const std::string& where) const;
  void share_or_make_filter(const AttentionWork& work, CheckedAttention& checked) const;
  void check_rows(const AttentionWork& work, AttentionShape& shape) const;

  const KvPlacement& placement_;
  const IspConfig isp_;
  const PageCompute& compute_;
  const CoordinatorConfig coordinator_;
  const Organization organization_;
  const Reduction reduction_;
  const core::Server& dram_;
  const LseReduction lse_;
  const uint32_t page_bytes_;
  const unsigned channels_;

  // A layer's precomputed tiles [0, end) as an unlisted pass lists them, kept
  // while its filter, rows and mode stay and its pages do not move: a decode
  // step's pass lists the same ones as the step before (every context position
  // visible to its row); a row chunk's pass, those of the chunk before and more.
  // Lent, not copied, to the pass that begins with them: the pass appends its
  // other tiles, and recycle() cuts them off again.
  struct PrecomputedListing {
    std::shared_ptr<const StreamFilter> filter;  // held, so that its address names it
    uint64_t end = 0, row_heads = 0;
    ComputeMode mode = 0;
    uint32_t head_dim = 0, kv_bits = 0, act_bits = 0;
    std::vector<PlannedTile> tiles;
    std::vector<PassTiles::Run> runs;
    size_t tile_count = 0, run_count = 0;  // kept, also while lent
    uint64_t last_run_count = 0;           // a pass's next tiles may join the last run
    uint64_t name = 0;                     // unique among the listings kept
    KvPlacement::MapState map;             // where the pages were: valid while none moved
    bool lent = false;
    // Whether it begins the listing of a pass that sees [0, prefix) whole, with the same filter, rows and mode.
    bool begins(const StreamFilter* f, uint64_t prefix, const PassTiles& out, const AttentionShape& shape) const {
      return filter.get() == f && end <= prefix && row_heads == out.row_heads_per_tile && mode == shape.mode &&
             head_dim == shape.head_dim && kv_bits == shape.kv_bits && act_bits == shape.act_bits;
    }
  };
  // The listing of `work`'s layer, if the pass's (filter, rows, mode) are
  // those it was made with, it sees the listing's tiles whole (`prefix`), its
  // pages have not moved and it is not lent.
  PrecomputedListing* kept_listing(const AttentionWork& work, const StreamFilter& op_filter, uint64_t prefix,
                                   const PassTiles& out, const AttentionShape& shape) const;
  void lend_listing(PrecomputedListing& listing, uint32_t layer, PassTiles& out) const;
  // The lent listing now ends at `end`: `out`'s tiles so far.
  void extend_listing(PrecomputedListing& listing, uint64_t end, PassTiles& out) const;
  void take_back_listing(PassTiles& tiles) const;
  void keep_listing(const AttentionWork& work, const StreamFilter& op_filter, uint64_t end, const PassTiles& out,
                    const AttentionShape& shape) const;
  mutable std::vector<PrecomputedListing> listings_;  // by layer
  mutable uint64_t listings_made_ = 0;

  mutable PassTiles spare_;  // a finished pass's storage, see tiles_of()
  struct Checked {           // the last mask check() copied for a layer, and its filter
    std::shared_ptr<const trace::BitVector> mask;
    std::shared_ptr<const StreamFilter> filter;
    uint64_t context_tokens = 0;
    bool causal = true;
  };
  mutable std::vector<Checked> last_checked_;  // by layer
};

template <typename Visit>
void AttentionPlanner::for_each_tile(const PassTiles& pass, size_t first_run, size_t end_run, uint64_t first_index,
                                     Visit visit) const {
  const bool per_channel = organization_ == Organization::PER_CHANNEL;
  uint64_t index = first_index;
  for (size_t r = first_run; r < end_run; ++r) {
    const PlannedTile& first = pass.tiles[pass.runs[r].first];
    nand::PageAddress address = first.address;
    unsigned channel = first.channel;
    for (uint64_t k = 0; k < pass.runs[r].count; ++k, ++index) {
      visit(first, index, address, channel);
      if (first.in_flash) {  // a run's pages follow each other in the layout
        placement_.layout().next(address);
        channel = address.channel;
      } else if (per_channel) {  // supplied tile k -> channel k mod C
        channel = channel + 1 == channels_ ? 0 : channel + 1;
      }
    }
  }
}

}  // namespace ispsim::isp
