// The vocabulary of an attention op on the flash: the work the host runtime
// sends (AttentionWork), the op once checked against the KV placement
// (CheckedAttention), its plan and traffic, and the tiles of its passes
// (PassTiles): what the planner (attention_planner.h) makes, the engine
// (attention_engine.h) and the event-free pass scheduler (pass_scheduler.h) use.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/isp/page_compute.h"
#include "models/isp/stream_filter.h"
#include "models/nand/page_address.h"
#include "traces/trace.pb.h"

namespace ispsim::isp {

// One attention op, the one type from the host runtime (platforms/systems/
// runtime.h) through the NVMe command to this engine. The engine reads the
// fields up to `causal`; the command's operand sizes are what crosses PCIe
// (link::Nvme::fused_attention) and do not change the engine's work.
struct AttentionWork {
  uint32_t layer = 0;
  uint64_t query_rows = 0;
  trace::ModelShape shape;
  uint64_t context_tokens = 0;                  // precomputed positions [0, C) read from flash
  const trace::BitVector* hkvd_mask = nullptr;  // nullable; bit_length == context_tokens
  uint64_t appended_tokens_in_flash = 0;        // read from the appended region (HKVD substitutes included)
  uint64_t appended_tokens_supplied = 0;        // came with the command, already on chip
  bool causal = true;
  // Where the op's request's appended entries start in the layer's appended
  // region: 0, or the first entry of its slot (KvPlacement, appended slots).
  uint64_t appended_base = 0;

  // The fused command's operands, bytes (set by the runtime).
  uint64_t hkvd_tokens = 0;        // set bits of the mask: substitutes in the appended region
  uint64_t supplied_kv_bytes = 0;  // KV of the supplied entries
  uint64_t mask_bytes = 0, q_bytes = 0, output_bytes = 0;
};

enum class Organization { CENTRALIZED, PER_CHANNEL };
enum class Reduction { CONTROLLER_DRAM, GLOBAL_SRAM };
const char* to_string(Organization organization);
const char* to_string(Reduction reduction);

// What check() derives from an op: its shape, row chunks and mode.
struct AttentionShape {
  std::string where;             // "attention layer <l>", for errors
  uint32_t group = 1;            // g = heads / kv_heads
  uint32_t head_dim = 0;
  uint32_t kv_bits = 0;
  uint32_t act_bits = 0;
  uint64_t substitutes = 0;      // H
  uint64_t appended_total = 0;   // A = in flash + supplied
  uint64_t passes = 1;
  uint64_t rows_per_pass = 0;
  ComputeMode mode = 0;
};

// An op checked against the engine's placement, with its own copy of the HKVD
// mask (the caller's need not outlive it). Only AttentionPlanner::check() makes
// one; run(), prefetch(), plan() and pass_tiles() take it, so an op is checked
// once however many of them see it.
class CheckedAttention {
 public:
  const AttentionWork& work() const { return work_; }
  const AttentionShape& shape() const { return shape_; }

 private:
  friend class AttentionPlanner;
  friend class AttentionEngine;
  CheckedAttention() = default;
  AttentionWork work_;  // hkvd_mask points into mask_ (or is null)
  std::shared_ptr<const trace::BitVector> mask_;
  AttentionShape shape_;
  std::shared_ptr<const StreamFilter> filter_;  // over mask_; each pass copies it with its rows
};

// The bytes one op moved (a prefetch's pages included), counted where they move
// (NAND pages delivered, controller DRAM and internal bus bytes): what the SSD
// charges the op's NAND, DRAM and bus energy from, instead of differencing the
// engine's totals around the op.
struct AttentionTraffic {
  uint64_t pages_read = 0;
  uint64_t dram_bytes = 0;
  uint64_t bus_bytes = 0;
};

// What one op costs, known before it runs (used by run() and by tests).
struct AttentionPlan {
  uint64_t passes = 1;           // row chunks (GLOBAL_SRAM buffers)
  uint64_t rows_per_pass = 0;
  ComputeMode mode = 0;          // index into the accelerator's modes()
  uint64_t pages_per_pass = 0;   // NAND pages the first pass reads (later passes' rows may see more)
  uint64_t pages_read = 0;       // NAND pages read over all passes
  uint64_t supplied_tiles = 0;   // on-chip tiles of supplied own tokens, per pass
  uint64_t tokens_kept = 0;      // over all passes
  uint64_t tokens_substituted = 0;
  uint64_t tokens_dropped = 0;
  uint64_t macs = 0;
  uint64_t simd_cycles = 0;      // accelerator cycles summed over pages and tiles
  uint64_t sram_io_cycles = 0;   // of which exposed scratchpad / SRAM traffic
  uint64_t partials = 0;         // partial outputs merged
  uint64_t reduction_cycles = 0; // LSE occupancy summed
  uint64_t dram_bytes = 0;       // controller DRAM bytes, both directions
  uint64_t bus_bytes = 0;        // internal bus bytes (CENTRALIZED)
  double energy_pj = 0;          // accelerator + coordinator dynamic energy
};

// One tile of a pass: a NAND page of the op's stream, or an on-chip tile of own
// tokens that came with the command. The timing model and the numerical check
// (tests/models/isp) walk the same list.
struct PlannedTile {
  bool in_flash = true;            // false: supplied with the command
  trace::KvRegion region = trace::KV_REGION_UNSPECIFIED;
  nand::PageAddress address;       // in_flash only
  unsigned channel = 0;            // channel whose accelerator computes it
  uint32_t kv_head = 0;
  uint64_t first_entry = 0;        // position (precomputed) or append index (appended)
  uint32_t entries = 0;
  FilterResult filter;             // counts (tokens listed when asked for)
  TileCost cost;                   // the accelerator's cost of the tile
};

// The rows and tiles of one pass (row chunk).
struct PassTiles {
  uint64_t first_row = 0;            // index among the op's query rows
  uint64_t rows = 0;
  std::vector<uint64_t> row_positions;  // token position of each row of the pass
  uint64_t row_heads_per_tile = 0;   // rows x heads / kv_heads
  std::vector<PlannedTile> tiles;    // NAND pages in stream order, then supplied tiles
  // Consecutive tiles alike in all but their place (KV head, address,
  // channel): a pass is mostly full pages of one cost. A run's tiles are on
  // consecutive channels (mod the channels; all on 0 when centralized and supplied).
  struct Run {
    size_t first = 0;  // index in tiles
    uint64_t count = 0;
  };
  std::vector<Run> runs;
  // False: `tiles` holds each run's first tile only (all an aggregated pass
  // needs, looked up or scheduled: see for_each_tile()).
  bool listed = true;
  // The planner's kept listing of the layer that `tiles` and `runs` begin with,
  // lent to this pass (AttentionPlanner::recycle() gives it back): 0, none.
  uint64_t borrowed_listing = 0;
  uint32_t borrowed_layer = 0;
  // The listing's runs: runs[0, borrowed_runs - 1) are its, the same
  // whenever a pass borrows it with as many (a listing only grows at its
  // last run), so what is made of them alone may be kept under
  // (borrowed_listing, borrowed_runs).
  size_t borrowed_runs = 0;
};

// What passes make of a borrowed listing's runs but its last, kept by layer
// while passes borrow it alike (PassTiles::borrowed_runs).
template <typename Value>
class BorrowedPrefixes {
 public:
  // The runs the value stands for (0: none, the pass borrows no listing of two runs).
  static size_t runs(const PassTiles& t) {
    return t.borrowed_listing != 0 && t.borrowed_runs >= 2 ? t.borrowed_runs - 1 : 0;
  }
  const Value* find(const PassTiles& t) const {
    if (t.borrowed_layer >= kept_.size()) return nullptr;
    const Kept& k = kept_[t.borrowed_layer];
    return k.listing == t.borrowed_listing && k.runs == runs(t) ? &k.value : nullptr;
  }
  void keep(const PassTiles& t, const Value& value) {
    if (kept_.size() <= t.borrowed_layer) kept_.resize(t.borrowed_layer + 1);
    kept_[t.borrowed_layer] = {t.borrowed_listing, runs(t), value};
  }

 private:
  struct Kept {
    uint64_t listing = 0;
    size_t runs = 0;
    Value value;
  };
  std::vector<Kept> kept_;
};

}  // namespace ispsim::isp
