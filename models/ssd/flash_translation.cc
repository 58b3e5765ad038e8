#include "models/ssd/flash_translation.h"

#include <algorithm>

#include "common/error.h"
#include "models/ssd/ftl/drive_state.h"
#include "models/ssd/ftl/precondition.h"

namespace ispsim::ssd {

FlashTranslation::FlashTranslation(const ftl::FtlConfig& config, const nand::FlashConfig& flash, uint64_t kv_pages,
                                   const std::string& where, const DriveStart& start)
    : ftl_(config), layout_(flash), kv_pages_(kv_pages) {
  if (kv_pages > ftl_.logical_pages()) {
    throw BadInput(where, "the KV space needs " + std::to_string(kv_pages) + " pages; the drive's logical capacity is " +
                              std::to_string(ftl_.logical_pages()) + " pages (physical pages x (1 - spare_factor " +
                              std::to_string(config.spare_factor) + "))");
  }
  if (!start.state_path.empty()) ftl::DriveState::load(ftl_, start.state_path);
  if (start.precondition) ftl::precondition(ftl_);
  // A used drive has idled before the run: background GC has freed its lines.
  while (ftl_.background_gc()) {
  }
  misplaced_ = misplaced(0, kv_pages_);
}

void FlashTranslation::store(uint64_t lpn, uint64_t count) {
  write(lpn, count);
  ftl_.persist_mapping();
}

std::vector<ftl::FlashOp> FlashTranslation::look_up(uint64_t lpn, uint64_t count) {
  std::vector<ftl::FlashOp> ops;
  ftl_.look_up(lpn, count, &ops);
  return ops;
}

std::vector<ftl::FlashOp> FlashTranslation::write(uint64_t lpn, uint64_t count) {
  std::vector<ftl::FlashOp> ops;
  const uint64_t before = misplaced(lpn, count);
  ftl_.write(lpn, count, &ops);
  const bool others_moved = std::any_of(ops.begin(), ops.end(),
                                        [](const ftl::FlashOp& op) { return op.cause != ftl::OpCause::kHost; });
  // GC and wear levelling move pages anywhere: count again, which they make rare.
  misplaced_ = others_moved ? misplaced(0, kv_pages_) : misplaced_ - before + misplaced(lpn, count);
  if (others_moved) {
    changed(0, UINT64_MAX);
  } else {
    changed(lpn, lpn + count);
  }
  return ops;
}

std::vector<ftl::FlashOp> FlashTranslation::background_gc() {
  std::vector<ftl::FlashOp> ops;
  if (ftl_.background_gc(&ops)) {  // GC moves pages anywhere
    misplaced_ = misplaced(0, kv_pages_);
    changed(0, UINT64_MAX);
  }
  return ops;
}

void FlashTranslation::trim(uint64_t lpn, uint64_t count) {
  misplaced_ -= misplaced(lpn, count);
  ftl_.trim(lpn, count);
  changed(lpn, lpn + count);
}

void FlashTranslation::changed(uint64_t first, uint64_t end) {
  changes_[version_ % changes_.size()] = {first, end};
  ++version_;
}

bool FlashTranslation::unchanged_since(uint64_t version, uint64_t first, uint64_t end) const {
  if (version > version_ || version_ - version > changes_.size()) return false;  // forgotten
  for (uint64_t v = version; v < version_; ++v) {
    const Change& c = changes_[v % changes_.size()];
    if (c.first < end && first < c.end) return false;
  }
  return true;
}

isp::PageMap::Run FlashTranslation::run(uint64_t index) const {
  const ftl::Segment s = ftl_.mapping().segment(index);
  const uint64_t end = std::min(s.run.lpn + s.run.count, kv_pages_);
  Run r;
  r.count = end > index ? end - index : 1;
  r.address = s.mapped ? address(s.run.ppn + (index - s.run.lpn)) : layout_.address(index, "ftl");
  return r;
}

uint64_t FlashTranslation::misplaced(uint64_t lpn, uint64_t count) const {
  const uint64_t units = ftl_.geometry().units();
  const uint64_t end = std::min(kv_pages_, lpn + count);
  uint64_t pages = 0;
  for (uint64_t x = lpn; x < end;) {
    const ftl::Segment s = ftl_.mapping().segment(x);
    const uint64_t stop = std::min(end, s.run.lpn + s.run.count);
    // An extent keeps its logical-to-physical offset: all its pages are on their home unit, or none.
    if (s.mapped && s.run.ppn % units != s.run.lpn % units) pages += stop - x;
    x = stop;
  }
  return pages;
}

}  // namespace ispsim::ssd
