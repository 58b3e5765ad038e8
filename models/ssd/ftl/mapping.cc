#include "models/ssd/ftl/mapping.h"

#include <iterator>

namespace ispsim::ftl {

ExtentMap::Extents::const_iterator ExtentMap::upper_bound(uint64_t lpn) const {
  if (valid_last_) {
    auto it = last_upper_;
    if (it != extents_.end() && lpn >= it->first) ++it;  // moved on to the next extent
    if ((it == extents_.end() || lpn < it->first) && (it == extents_.begin() || std::prev(it)->first <= lpn))
      return last_upper_ = it;
  }
  valid_last_ = true;
  return last_upper_ = extents_.upper_bound(lpn);
}

Segment ExtentMap::segment(uint64_t lpn) const {
  auto it = upper_bound(lpn);
  if (it != extents_.begin()) {
    const auto prev = std::prev(it);
    if (lpn < prev->first + prev->second.count)
      return Segment{true, PageRun{prev->first, prev->second.ppn, prev->second.count}};
  }
  const uint64_t gap = it == extents_.end() ? UINT64_MAX - lpn : it->first - lpn;
  return Segment{false, PageRun{lpn, 0, gap}};
}

void ExtentMap::split_at(uint64_t lpn) {
  auto it = extents_.upper_bound(lpn);
  if (it == extents_.begin()) return;
  --it;
  const uint64_t offset = lpn - it->first;
  if (offset == 0 || offset >= it->second.count) return;
  extents_.emplace_hint(std::next(it), lpn, Extent{it->second.count - offset, it->second.ppn + offset});
  it->second.count = offset;
}

void ExtentMap::merge_with_next(Extents::iterator it) {
  const auto next = std::next(it);
  if (next == extents_.end()) return;
  if (it->first + it->second.count != next->first) return;
  if (it->second.ppn + it->second.count != next->second.ppn) return;
  it->second.count += next->second.count;
  extents_.erase(next);
}

void ExtentMap::unmap(uint64_t lpn, uint64_t count, std::vector<PageRun>& removed) {
  valid_last_ = false;
  if (count == 0) return;
  split_at(lpn);
  split_at(lpn + count);
  auto it = extents_.lower_bound(lpn);
  while (it != extents_.end() && it->first < lpn + count) {
    removed.push_back(PageRun{it->first, it->second.ppn, it->second.count});
    mapped_pages_ -= it->second.count;
    it = extents_.erase(it);
  }
}

void ExtentMap::map(const PageRun& run, std::vector<PageRun>& replaced) {
  valid_last_ = false;
  if (run.count == 0) return;
  auto it = extents_.find(run.lpn);
  if (it != extents_.end() && it->second.count == run.count) {
    // Rewriting exactly one extent (random overwrites, GC copies): in place.
    replaced.push_back(PageRun{run.lpn, it->second.ppn, run.count});
    it->second.ppn = run.ppn;
  } else {
    unmap(run.lpn, run.count, replaced);
    it = extents_.emplace(run.lpn, Extent{run.count, run.ppn}).first;
    mapped_pages_ += run.count;
  }
  merge_with_next(it);
  if (it != extents_.begin()) merge_with_next(std::prev(it));
}

void ExtentMap::for_each(const std::function<void(const PageRun&)>& visit) const {
  for (const auto& [lpn, e] : extents_) visit(PageRun{lpn, e.ppn, e.count});
}

uint64_t ExtentMap::memory_bytes() const {
  // A red-black tree node: the key and value plus three pointers and a colour,
  // rounded up to the allocator's 16-byte granule.
  constexpr uint64_t kNodeBytes = (sizeof(uint64_t) + sizeof(Extent) + 4 * sizeof(void*) + 15) / 16 * 16;
  return extents_.size() * kNodeBytes;
}

}  // namespace ispsim::ftl
