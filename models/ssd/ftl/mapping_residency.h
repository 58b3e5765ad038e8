// Where the page-level mapping table lives, a pluggable role chosen once from
// ftl.mapping: what a lookup or an update of logical pages costs in flash
// operations. The table's contents are the MappingTable's (mapping.h); this
// role only tracks which parts of it are in controller DRAM.
//
// FULL: the whole table is in DRAM; every lookup is a hit, no flash work.
// CACHED (Gupta, Kim and Urgaonkar, "DFTL", ASPLOS 2009): the entries are
// grouped into translation pages of page_bytes / mapping_entry_bytes entries
// (translation page t holds logical pages [t x E, (t + 1) x E)). The DRAM holds
// mapping_dram_bytes / page_bytes of them, least recently used out first. A
// lookup or update of a page whose translation page is not cached reads that
// translation page (one page read: a miss); an update marks it dirty, and
// evicting a dirty translation page programs it (one page program).
//
// Where translation pages live (a simplification): translation page t is on
// unit t mod units (channel fastest, then die, then plane), in an area
// reserved outside the user capacity and the lines the FTL manages, never
// garbage-collected. The timing model needs only its die and plane.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "models/core/registry.h"
#include "models/nand/page_address.h"
#include "models/ssd/ftl/flash_op.h"
#include "models/ssd/ftl/ftl_config.h"

namespace ispsim::ftl {

// Logical pages looked up or updated, by outcome. Translation-page reads are
// the misses; programs are the dirty evictions.
struct MappingTraffic {
  uint64_t hits = 0;    // the entry's translation page was in DRAM
  uint64_t misses = 0;  // it was read from flash first
  uint64_t translation_programs = 0;
  double hit_rate() const { return hits + misses == 0 ? 1.0 : double(hits) / double(hits + misses); }
};

class MappingResidency {
 public:
  virtual ~MappingResidency() = default;
  // Logical pages [lpn, lpn + count) are looked up (update = false) or their
  // entries changed: appends the translation-page reads and programs that
  // implies (OpCause::kMapping) to `ops` if given.
  virtual void access(uint64_t lpn, uint64_t count, bool update, std::vector<FlashOp>* ops) = 0;
  // The table is persisted and the DRAM starts empty, as after a power cycle:
  // dirty translation pages are written back without operations.
  virtual void persist() = 0;
  virtual const MappingTraffic& traffic() const = 0;
};

class WholeTableInDram final : public MappingResidency {
 public:
  void access(uint64_t, uint64_t count, bool, std::vector<FlashOp>*) override { traffic_.hits += count; }
  void persist() override {}
  const MappingTraffic& traffic() const override { return traffic_; }

 private:
  MappingTraffic traffic_;
};

class CachedMapping final : public MappingResidency {
 public:
  explicit CachedMapping(const FtlConfig& config);
  void access(uint64_t lpn, uint64_t count, bool update, std::vector<FlashOp>* ops) override;
  void persist() override;
  const MappingTraffic& traffic() const override { return traffic_; }
  uint64_t cached() const { return cached_; }
  bool contains(uint64_t translation_page) const { return slots_[translation_page].cached; }

 private:
  // An intrusive LRU list over the translation pages; slot `head_` is the
  // list's anchor (next: most recently used, prev: least).
  struct Slot {
    uint64_t prev = 0, next = 0;
    bool cached = false, dirty = false;
  };
  // Makes translation page t cached and most recently used; true if it was cached.
  bool touch(uint64_t t, std::vector<FlashOp>* ops);
  void unlink(uint64_t t);
  void push_front(uint64_t t);
  void evict_least_recent(std::vector<FlashOp>* ops);

  uint64_t per_page_;  // entries per translation page
  uint64_t capacity_;  // translation pages the DRAM holds
  uint64_t head_;
  std::vector<Slot> slots_;
  uint64_t cached_ = 0;
  MappingTraffic traffic_;
};

// Where translation page t is (see above); `block` and `page` only stand for it.
nand::PageAddress translation_page_address(const Geometry& geometry, uint64_t t);

using MappingResidencyFactory = core::Factory<MappingResidency, const FtlConfig&>;

// The role's factory ("ftl.mapping": FULL, CACHED), filled by register_all() (gc_policy.h).
MappingResidencyFactory& mapping_residencies();

}  // namespace ispsim::ftl
