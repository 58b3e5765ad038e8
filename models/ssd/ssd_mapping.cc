// The cached mapping's timing in the SSD (DFTL, models/ssd/ftl/mapping_residency.h).
// With the whole table in controller DRAM none of this runs: lookups are not
// timed there, as before the cached mapping existed.
#include <algorithm>

#include "models/ssd/ssd.h"

namespace ispsim::ssd {

namespace {

constexpr int kDramComponent = 1;  // ssd.cc's index of the DRAM in the energy records

uint64_t now_ps() { return sc_core::sc_time_stamp().value(); }

}  // namespace

// One command's translation work: its hits (one DRAM access of their entries),
// the translation pages it reads, and the dirty ones it evicts.
struct Ssd::MappingWork {
  uint64_t hits = 0;
  std::vector<nand::PageAddress> reads, programs;
  uint64_t start_ps = 0, ticket = 0;
};

void Ssd::set_up_cached_mapping() {
  mapping_reader_ = std::make_unique<HostReader>("mapping_reader", flash_);
  stats_.formula_integer("ftl_mapping_cache_hits", "count",
                         "logical pages looked up or updated whose translation page was in controller DRAM",
                         [this] { return mapping_hits_; });
  stats_.formula_integer("ftl_mapping_cache_misses", "count",
                         "logical pages looked up or updated whose translation page was read from flash first",
                         [this] { return mapping_misses_; });
  stats_.formula("ftl_mapping_cache_hit_rate", "ratio", "mapping cache hits / (hits + misses); 1 before any lookup",
                 [this] {
                   const uint64_t all = mapping_hits_ + mapping_misses_;
                   return all == 0 ? 1.0 : double(mapping_hits_) / double(all);
                 });
  stats_.formula_integer("ftl_translation_pages_read", "count", "translation pages read from flash (cache misses)",
                         [this] { return translation_reads_; });
  stats_.formula_integer("ftl_translation_pages_programmed", "count",
                         "dirty translation pages programmed when evicted from controller DRAM",
                         [this] { return translation_programs_; });
  stats_.formula_integer("ftl_mapping_cache_pages", "count",
                         "translation pages controller DRAM holds (mapping_dram_bytes / page_bytes)",
                         [this] { return translation_->ftl().config().cached_translation_pages(); });
}

std::vector<Ssd::LogicalRange> Ssd::read_ranges(uint32_t layer, trace::KvRegion region, uint64_t begin,
                                                uint64_t end) const {
  if (!mapping_reader_) return {};
  const uint64_t tile = placement_->tokens_per_tile();
  const uint64_t first_tile = begin / tile, end_tile = (end + tile - 1) / tile;
  return {{placement_->tile_index(layer, region, first_tile, 0), (end_tile - first_tile) * placement_->kv_heads()}};
}

// The op's precomputed tiles [0, C) and its appended tiles in flash, every KV
// head: a layer's tiles of a region are consecutive logical pages. Each pass
// reads them again, so they are looked up once per pass.
std::vector<Ssd::LogicalRange> Ssd::attention_ranges(const isp::CheckedAttention& op) const {
  std::vector<LogicalRange> ranges;
  if (!mapping_reader_) return ranges;
  const isp::AttentionWork& w = op.work();
  const uint64_t tile = placement_->tokens_per_tile(), heads = placement_->kv_heads();
  std::vector<LogicalRange> pass;
  if (w.context_tokens > 0)
    pass.push_back({placement_->tile_index(w.layer, trace::KV_REGION_PRECOMPUTED, 0, 0),
                    (w.context_tokens + tile - 1) / tile * heads});
  if (w.appended_tokens_in_flash > 0) {
    const uint64_t first = w.appended_base / tile;
    const uint64_t end = (w.appended_base + w.appended_tokens_in_flash + tile - 1) / tile;
    pass.push_back({placement_->tile_index(w.layer, trace::KV_REGION_APPENDED, first, 0), (end - first) * heads});
  }
  for (uint64_t p = 0; p < op.shape().passes; ++p) ranges.insert(ranges.end(), pass.begin(), pass.end());
  return ranges;
}

Ssd::MappingWork Ssd::mapping_work(const std::vector<ftl::FlashOp>& ops, uint64_t hits) const {
  MappingWork work;
  work.hits = hits;
  for (const ftl::FlashOp& op : ops) {
    if (op.cause != ftl::OpCause::kMapping) continue;
    auto& list = op.kind == ftl::OpKind::kRead ? work.reads : work.programs;
    list.push_back(translation_->translation_page_address(op.first));
  }
  return work;
}

// The lookups happen when the job starts, so the cache sees them in the order
// the flash serves the commands.
void Ssd::look_up_mappings(std::vector<LogicalRange> ranges) {
  if (!mapping_reader_ || ranges.empty()) return;
  jobs_.push("mapping", [this, ranges = std::move(ranges)](FlashJobQueue::Done release) {
    const uint64_t hits_before = mapping_hits();
    std::vector<ftl::FlashOp> ops;
    for (const LogicalRange& r : ranges) {
      const std::vector<ftl::FlashOp> more = translation_->look_up(r.lpn, r.count);
      ops.insert(ops.end(), more.begin(), more.end());
    }
    auto work = std::make_shared<MappingWork>(mapping_work(ops, mapping_hits() - hits_before));
    program_translation_pages(std::move(work->programs));
    run_translation_reads(work, reader_, std::move(release));
  });
}

void Ssd::run_mapping_updates(std::vector<ftl::FlashOp>& ops, uint64_t hits) {
  if (!mapping_reader_) return;
  auto work = std::make_shared<MappingWork>(mapping_work(ops, hits));
  ops.erase(std::remove_if(ops.begin(), ops.end(),
                           [](const ftl::FlashOp& op) { return op.cause == ftl::OpCause::kMapping; }),
            ops.end());
  std::vector<nand::PageAddress> programs = std::move(work->programs);
  jobs_.push("program", [this, work](FlashJobQueue::Done release) {
    run_translation_reads(work, *mapping_reader_, std::move(release));
  });
  program_translation_pages(std::move(programs));
}

// The hits' entries in one DRAM access, then the misses' translation pages
// read on their dies (die-level pipeline); then the flash is released.
void Ssd::run_translation_reads(std::shared_ptr<MappingWork> work, HostReader& reader,
                                FlashJobQueue::Done release) {
  work->start_ps = now_ps();
  work->ticket = hold_energy(work->start_ps);
  mapping_hits_ += work->hits;
  mapping_misses_ += work->reads.size();
  auto read = [this, work, &reader, release = std::move(release)] {
    reader.start(
        work->reads, [](uint32_t) {},
        [this, work, release] {
          const uint64_t n = work->reads.size();
          translation_reads_ += n;
          record_nand(n, 0, n * flash_.config().page_bytes, work->start_ps);
          release_energy(work->ticket);
          release();
        },
        "ssd mapping");
  };
  if (work->hits == 0) return read();
  const uint64_t bytes = work->hits * translation_->ftl().config().mapping_entry_bytes;
  dram_.transfer(bytes, [this, bytes, work, read] {
    record(kDramComponent, double(bytes) * config_.dram_joules_per_byte, work->start_ps);
    read();
  });
}

void Ssd::program_translation_pages(std::vector<nand::PageAddress> pages) {
  if (pages.empty()) return;
  jobs_.push("program", [this, pages = std::move(pages)](FlashJobQueue::Done release) mutable {
    const uint64_t start = now_ps(), ticket = hold_energy(start), n = pages.size();
    program_batch_done_ = [this, n, start, ticket, release] {
      translation_programs_ += n;
      record_nand(0, n, n * flash_.config().page_bytes, start);
      release_energy(ticket);
      release();
    };
    appender_.start(std::move(pages), "ssd mapping");
  });
}

}  // namespace ispsim::ssd
