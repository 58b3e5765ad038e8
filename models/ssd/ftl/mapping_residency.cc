#include "models/ssd/ftl/mapping_residency.h"

#include <algorithm>

namespace ispsim::ftl {

CachedMapping::CachedMapping(const FtlConfig& config)
    : per_page_(config.entries_per_translation_page()),
      capacity_(config.cached_translation_pages()),
      head_(config.translation_pages()),
      slots_(config.translation_pages() + 1) {
  slots_[head_].prev = slots_[head_].next = head_;
}

void CachedMapping::access(uint64_t lpn, uint64_t count, bool update, std::vector<FlashOp>* ops) {
  const uint64_t end = lpn + count;
  for (uint64_t t = lpn / per_page_; t * per_page_ < end; ++t) {
    const uint64_t pages = std::min(end, (t + 1) * per_page_) - std::max(lpn, t * per_page_);
    // The first page of the translation page misses or hits; the rest find it cached.
    const bool hit = touch(t, ops);
    traffic_.hits += hit ? pages : pages - 1;
    traffic_.misses += hit ? 0 : 1;
    if (update) slots_[t].dirty = true;
  }
}

bool CachedMapping::touch(uint64_t t, std::vector<FlashOp>* ops) {
  if (slots_[t].cached) {
    unlink(t);
    push_front(t);
    return true;
  }
  if (cached_ == capacity_) evict_least_recent(ops);
  if (ops) ops->push_back(FlashOp{OpKind::kRead, OpCause::kMapping, t, 1});
  slots_[t].cached = true;
  slots_[t].dirty = false;
  ++cached_;
  push_front(t);
  return false;
}

void CachedMapping::evict_least_recent(std::vector<FlashOp>* ops) {
  const uint64_t t = slots_[head_].prev;
  if (slots_[t].dirty) {
    if (ops) ops->push_back(FlashOp{OpKind::kProgram, OpCause::kMapping, t, 1});
    ++traffic_.translation_programs;
  }
  unlink(t);
  slots_[t].cached = slots_[t].dirty = false;
  --cached_;
}

void CachedMapping::unlink(uint64_t t) {
  slots_[slots_[t].prev].next = slots_[t].next;
  slots_[slots_[t].next].prev = slots_[t].prev;
}

void CachedMapping::push_front(uint64_t t) {
  slots_[t].prev = head_;
  slots_[t].next = slots_[head_].next;
  slots_[slots_[head_].next].prev = t;
  slots_[head_].next = t;
}

void CachedMapping::persist() {
  for (Slot& s : slots_) s = Slot();
  slots_[head_].prev = slots_[head_].next = head_;
  cached_ = 0;
}

nand::PageAddress translation_page_address(const Geometry& geometry, uint64_t t) {
  nand::PageAddress a = geometry.block_address(t % geometry.units());
  a.page = uint32_t(t / geometry.units() % geometry.pages_per_block);
  return a;
}

MappingResidencyFactory& mapping_residencies() {
  static MappingResidencyFactory factory("ftl.mapping");
  return factory;
}

}  // namespace ispsim::ftl
