// The flash translation layer's state machine, without time: page-level
// mapping (mapping.h), out-of-place writes through one write frontier, TRIM,
// garbage collection (gc_policy.h), static and dynamic wear levelling and the
// endurance limit. Every call returns the flash operations it implies, with
// physical addresses, so that a timing model can put them on dies and channels.
//
// Allocation. The unit of allocation and of GC is a line: block b of every
// plane of every die (ftl_config.h, as FEMU's page-level FTL groups blocks).
//
// At home while the drive is fresh: a host write of logical page lpn goes to
// its home page, physical page lpn, the page the KV layout
// (models/nand/layout.h) gives it, while that page has never been programmed:
// its line was never written (and taking it leaves more than
// foreground_free_lines() free), or the line took pages at home since it left
// the factory and this one is still erased. Such a home line is closed (GC may
// reclaim it) but keeps a bit per page of what was programmed until it is
// full; once erased it is a line like any other. So a fresh drive holds
// every page exactly where the layout puts it, whatever order the pages come
// in: the KV of each layer's appended region, written one tile per decode
// step, lands on the layout's stripe. Like the layout, this programs a block's
// pages in the order the data comes, not strictly page after page.
//
// Otherwise at the write frontier: one open line, one open block per plane. A
// logical page goes to the next free page of its home unit, unit lpn mod
// units (channel fastest, then die, then plane: the unit of the layout, as
// MQSim's static plane allocation fixes a page's channel, die and plane by its
// address), or, when that block of the line is full, of the unit with the most
// room. A sequential run therefore stripes over channels, dies and planes and
// lands on consecutive physical pages. Host data and GC copies share the
// frontier, as the analytic write-amplification models assume. A new line is
// the free line with the fewest erases (dynamic wear levelling), the highest
// numbered among equals: on a fresh drive the frontier starts in the spare
// lines past the logical capacity and leaves the home lines free.
//
// GC. Opening a line that leaves fewer than foreground_free_lines() free runs
// GC first (foreground); background_gc() reclaims a line while fewer than
// background_free_lines() are free, for the timing model to call when idle.
// Reclaiming a line reads and re-programs its valid pages at the frontier and
// erases its blocks.
//
// Wear. Every erase counts per block. When the most-erased line is more than
// static_wear_leveling_threshold erases ahead of the least-erased line holding
// data, that line's data is moved (static wear levelling) so its blocks return
// to use. A line whose blocks reach endurance_pe_cycles is retired; when the
// retired lines eat the spare capacity GC needs, writes throw WornOut.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

#include "models/ssd/ftl/flash_op.h"
#include "models/ssd/ftl/ftl_config.h"
#include "models/ssd/ftl/gc_policy.h"
#include "models/ssd/ftl/mapping.h"
#include "models/ssd/ftl/mapping_residency.h"

namespace ispsim::ftl {

struct FtlCounters {
  uint64_t host_pages = 0;      // pages programmed for host writes
  uint64_t gc_pages = 0;        // valid pages GC copied (one read and one program each)
  uint64_t wl_pages = 0;        // valid pages static wear levelling copied
  uint64_t trimmed_pages = 0;   // mapped pages a TRIM unmapped
  uint64_t block_erases = 0;
  uint64_t gc_lines = 0;        // lines GC reclaimed
  uint64_t wl_lines = 0;        // lines wear levelling moved
  uint64_t programs() const { return host_pages + gc_pages + wl_pages; }
};

// The drive ran out of usable blocks: retired lines left GC no room.
class WornOut : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Ftl {
 public:
  enum class LineState : uint8_t { kFree, kOpen, kClosed, kRetired };

  explicit Ftl(const FtlConfig& config);

  // Writes logical pages [lpn, lpn + count) out of place; appends the flash
  // operations (host programs, and GC and wear levelling when they run) to
  // `ops` if given. BadInput past the logical capacity.
  void write(uint64_t lpn, uint64_t count, std::vector<FlashOp>* ops = nullptr);
  // Unmaps [lpn, lpn + count): its pages become invalid, reads of it find nothing.
  void trim(uint64_t lpn, uint64_t count);
  // Physical page of a logical page, none when unmapped or trimmed.
  std::optional<uint64_t> lookup(uint64_t lpn) const;
  // Logical pages [lpn, lpn + count) looked up for a read: the translation-page
  // reads and programs of a cached mapping (OpCause::kMapping) to `ops`.
  void look_up(uint64_t lpn, uint64_t count, std::vector<FlashOp>* ops) {
    residency_->access(lpn, count, /*update=*/false, ops);
  }
  // Reclaims one line if fewer than background_free_lines() are free; false if
  // there was nothing to do.
  bool background_gc(std::vector<FlashOp>* ops = nullptr);

  const FtlConfig& config() const { return config_; }
  const Geometry& geometry() const { return config_.geometry; }
  uint64_t logical_pages() const { return logical_pages_; }
  const MappingTable& mapping() const { return *mapping_; }
  // Controller DRAM of the page-level table: logical pages x mapping_entry_bytes.
  uint64_t mapping_table_bytes() const { return config_.mapping_table_bytes(); }
  // Which of the table's entries are in controller DRAM (ftl.mapping); every
  // write's and GC copy's mapping update goes through it.
  const MappingResidency& residency() const { return *residency_; }
  // The table persisted, the DRAM cache empty (MappingResidency::persist).
  void persist_mapping() { residency_->persist(); }
  const FtlCounters& counters() const { return counters_; }
  // Write amplification since the start: programs / host pages (1 before any write).
  double waf() const;

  uint32_t erase_count(uint64_t block) const { return erases_[block]; }
  // Blocks by P/E count, in decades: 0, 1-9, 10-99, 100-999, 1000-9999, 10000 and more.
  static constexpr size_t kEraseBuckets = 6;
  std::array<uint64_t, kEraseBuckets> erase_histogram() const;
  uint32_t max_erase_count() const { return *std::max_element(erases_.begin(), erases_.end()); }
  uint32_t valid_pages(uint64_t block) const { return block_valid_[block]; }
  LineState line_state(uint64_t line) const { return lines_[line].state; }
  uint64_t free_lines() const { return free_.size(); }
  uint64_t retired_lines() const;

 private:
  friend class DriveState;  // saves and restores the state below
  struct Line {
    LineState state = LineState::kFree;
    uint64_t valid = 0;
    uint64_t last_write = 0;
    std::vector<PageRun> written;  // runs programmed since the erase, in physical order
    // A home line not yet full: a bit per slot, set when programmed (empty otherwise).
    std::vector<uint64_t> home;
    uint64_t home_pages = 0;  // bits set in home
  };
  // Fewest erases first, then the highest line.
  struct FreeOrder {
    bool operator()(const std::pair<uint32_t, uint64_t>& a, const std::pair<uint32_t, uint64_t>& b) const {
      return a.first != b.first ? a.first < b.first : a.second > b.second;
    }
  };

  void program(uint64_t lpn, uint64_t count, OpCause cause, std::vector<FlashOp>* ops);
  // Pages of [lpn, lpn + count), from lpn on and in lpn's line, that can go
  // to their home pages; 0 if lpn cannot.
  uint64_t home_run(uint64_t lpn, uint64_t count) const;
  static bool home_programmed(const Line& line, uint64_t slot) { return (line.home[slot / 64] >> (slot % 64)) & 1; }
  // Programs [lpn, lpn + n) at their home pages; returns their line.
  uint64_t place_home(uint64_t lpn, uint64_t n);
  // Places the first n >= 1 pages of [lpn, lpn + count) in the open line, on
  // consecutive physical pages from the one returned.
  uint64_t place(uint64_t lpn, uint64_t count, uint64_t& n);
  // The open line's blocks filled as `used` slots in frontier order fill them.
  void set_lockstep_fill(uint64_t used);
  // Physical pages [ppn, ppn + count) of the open line have been programmed.
  bool programmed_in_open_line(uint64_t ppn, uint64_t count) const;
  void open_line(std::vector<FlashOp>* ops);
  void run_foreground_gc(std::vector<FlashOp>* ops);
  void level_wear(std::vector<FlashOp>* ops);
  bool collect_victim(std::vector<FlashOp>* ops);
  void reclaim(uint64_t line, OpCause cause, std::vector<FlashOp>* ops);
  // `runs` in physical order, those that continue each other (logical and physical) joined.
  static std::vector<PageRun> physical_runs(std::vector<PageRun> runs);
  void relocate(uint64_t lpn, uint64_t ppn, uint64_t count, OpCause cause, std::vector<FlashOp>* ops);
  void erase(uint64_t line, OpCause cause, std::vector<FlashOp>* ops);
  // Adds `delta` to the valid counts of physical pages [ppn, ppn + count).
  void add_valid(uint64_t ppn, uint64_t count, int delta);
  void invalidate(const std::vector<PageRun>& runs);
  void free_line(uint64_t line);
  uint32_t line_erases(uint64_t line) const { return erases_[line * geometry().units()]; }

  FtlConfig config_;
  uint64_t logical_pages_ = 0;
  std::unique_ptr<MappingTable> mapping_;
  std::unique_ptr<GcPolicy> policy_;
  std::unique_ptr<MappingResidency> residency_;
  std::vector<Line> lines_;
  std::vector<uint32_t> erases_;       // per block
  std::vector<uint32_t> block_valid_;  // per block
  std::set<std::pair<uint32_t, uint64_t>, FreeOrder> free_;  // (erases, line)
  std::optional<uint64_t> open_;
  std::vector<uint32_t> fill_;  // per unit: pages written in its block of the open line
  uint64_t used_ = 0;           // pages written in the open line (the sum of fill_)
  bool lockstep_ = true;        // fill_ is that of used_ slots in frontier order
  uint64_t clock_ = 0;  // host pages written: the age of cost-benefit GC
  bool collecting_ = false;
  FtlCounters counters_;
  std::vector<PageRun> scratch_;
};

const char* to_string(OpKind kind);
const char* to_string(OpCause cause);

}  // namespace ispsim::ftl
