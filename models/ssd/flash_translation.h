// The SSD's flash translation layer in its timing model: the FTL of
// models/ssd/ftl holds the drive's logical pages, and the KV space is their
// front: KvPlacement's linear page i is logical page i. It is the placement's
// page map (isp::PageMap), so host reads and the ISP's attention passes find
// each page where the FTL put it.
//
// The precomputed KV is on the drive before the run: store() writes it in
// order, without time. Appends and host write-backs are written out of place
// (write()), and the SSD runs the flash operations the FTL returns. A fresh
// drive puts every page on its home unit (ftl.h), which is the channel, die
// and plane the layout gives it: the placement stays ideal and every timing
// equals that of the layout. A page not yet programmed (still in the write
// buffer) is found at its layout address.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/isp/tiling.h"
#include "models/nand/flash_config.h"
#include "models/nand/layout.h"
#include "models/ssd/ftl/ftl.h"

namespace ispsim::ssd {

// The drive a run starts on: fresh (the default), a saved drive state
// (ftl/drive_state.h), and/or preconditioned (ftl/precondition.h; after the
// load, when both are asked for). A used drive starts as it is after idling:
// background GC has reclaimed lines until ftl.gc_background_free_ratio of
// them are free (no time: the idle time before the run).
struct DriveStart {
  std::string state_path;
  bool precondition = false;
};

class FlashTranslation : public isp::PageMap {
 public:
  // BadInput naming `where` when `kv_pages` exceed the drive's logical
  // capacity; BadInput naming the file when the drive state cannot be loaded.
  FlashTranslation(const ftl::FtlConfig& config, const nand::FlashConfig& flash, uint64_t kv_pages,
                   const std::string& where = "ftl", const DriveStart& start = DriveStart());

  // Logical pages [lpn, lpn + count) hold data before the run: written, no
  // time; the mapping is persisted, a cached mapping's DRAM empty.
  void store(uint64_t lpn, uint64_t count);
  // Writes [lpn, lpn + count) out of place: the flash operations, in the FTL's
  // order (GC's reads, programs and erases before the host programs they made room for).
  std::vector<ftl::FlashOp> write(uint64_t lpn, uint64_t count);
  // Logical pages [lpn, lpn + count) looked up for a read: the cached
  // mapping's translation-page reads and programs (none with the whole table in DRAM).
  std::vector<ftl::FlashOp> look_up(uint64_t lpn, uint64_t count);
  bool mapping_cached() const { return ftl_.config().mapping == ftl::FtlConfig::Mapping::kCached; }
  nand::PageAddress translation_page_address(uint64_t t) const {
    return ftl::translation_page_address(ftl_.geometry(), t);
  }
  // Unmaps [lpn, lpn + count) (TRIM; not a lookup of the cached mapping).
  void trim(uint64_t lpn, uint64_t count);
  // One line reclaimed by background GC (ftl::Ftl::background_gc): its flash
  // operations, none when enough lines are free.
  std::vector<ftl::FlashOp> background_gc();

  Run run(uint64_t index) const override;
  bool ideal() const override { return misplaced_ == 0; }
  uint64_t version() const override { return version_; }
  bool unchanged_since(uint64_t version, uint64_t first, uint64_t end) const override;

  nand::PageAddress address(uint64_t ppn) const { return ftl_.geometry().address(ppn); }
  const ftl::Ftl& ftl() const { return ftl_; }
  uint64_t kv_pages() const { return kv_pages_; }

 private:
  // Pages of [lpn, lpn + count) in the KV space mapped off their layout unit.
  uint64_t misplaced(uint64_t lpn, uint64_t count) const;
  // A change of the map's logical pages [first, end) (all of them: GC moved pages).
  void changed(uint64_t first, uint64_t end);

  ftl::Ftl ftl_;
  nand::Layout layout_;
  uint64_t kv_pages_;
  uint64_t misplaced_ = 0;  // in the KV space (misplaced(0, kv_pages))
  // The last changes' ranges, by version modulo their number: enough for the
  // changes between two decode steps of a layer (an append per layer).
  struct Change {
    uint64_t first = 0, end = 0;
  };
  std::vector<Change> changes_ = std::vector<Change>(512);
  uint64_t version_ = 0;
};

}  // namespace ispsim::ssd
