#include "models/host/host_memory.h"

#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <utility>

namespace ispsim::host {

namespace {

accounting::MemoryAccounting physical_accounting(const HostConfig& config) {
  accounting::MemoryAccounting a;
  a.workspace_bytes = config.workspace_bytes;
  a.tied_lm_head = config.tied_lm_head;
  return a;
}

}  // namespace

HostMemory::HostMemory(const std::string& path, const HostConfig& config, const trace::ModelShape& shape)
    : weight_bytes_(model_weight_bytes(shape, config.tied_lm_head)),
      workspace_bytes_(config.workspace_bytes),
      dram_bytes_(config.dram_capacity_bytes),
      capacity_(accounting::kv_budget_bytes(dram_bytes_, shape, physical_accounting(config))),
      policy_(config.staging_policy),
      stats_(path),
      hit_bytes_(stats_.counter("hit_bytes", "bytes", "KV bytes read from host staging")),
      miss_bytes_(stats_.counter("miss_bytes", "bytes", "KV bytes looked up but not staged (read from the SSD)")),
      evicted_bytes_(stats_.counter("evicted_bytes", "bytes", "staged KV bytes evicted to make room")),
      evictions_(stats_.counter("evictions", "count", "staged keys evicted or shrunk to make room")) {
  stats_.formula_integer("staging_capacity", "bytes", "DRAM left for KV staging after weights and workspace",
                         [this] { return capacity_; });
  stats_.formula_integer("weight_bytes", "bytes", "model weights held in host DRAM", [this] { return weight_bytes_; });
  stats_.formula_integer("resident_bytes", "bytes", "KV bytes staged at the end", [this] { return used_; });
  stats_.formula("hit_rate", "ratio", "hit_bytes / (hit_bytes + miss_bytes): the share of looked-up KV found in host memory",
                 [this] {
                   const double looked_up = static_cast<double>(hit_bytes_.value() + miss_bytes_.value());
                   return looked_up > 0 ? static_cast<double>(hit_bytes_.value()) / looked_up : 0.0;
                 });
}

void HostMemory::plan(uint64_t kv_bytes) {
  planned_kv_bytes_ = kv_bytes;
  for (auto& [key, p] : placed_) place(p);
}

// The key's resident share, floor(total x capacity / K), or all of it when the
// request's KV fits.
void HostMemory::place(Placed& p) {
  used_ -= p.resident;
  if (planned_kv_bytes_ <= capacity_)
    p.resident = std::min(p.total, capacity_ - used_);
  else
    p.resident = static_cast<uint64_t>(static_cast<unsigned __int128>(p.total) * capacity_ / planned_kv_bytes_);
  used_ += p.resident;
}

void HostMemory::append(const StagingKey& key, uint64_t bytes) {
  if (policy_ == StagingPolicy::kLru) {
    insert(key, resident(key) + bytes);
    return;
  }
  Placed& p = placed_[key];
  p.total += bytes;
  p.fresh = bytes;
  place(p);
}

void HostMemory::overwrite(const StagingKey& key, uint64_t bytes) {
  if (policy_ == StagingPolicy::kLru)
    touch(key);
  else
    placed_[key].fresh = bytes;
}

void HostMemory::fetched(const StagingKey& key, uint64_t read_bytes, uint64_t key_bytes) {
  if (policy_ == StagingPolicy::kLru) {
    insert(key, resident(key) + read_bytes);
    return;
  }
  Placed& p = placed_[key];
  if (key_bytes <= p.total) return;
  p.total = key_bytes;
  place(p);
}

bool HostMemory::weights_fit() const { return weight_bytes_ + workspace_bytes_ <= dram_bytes_; }

uint64_t HostMemory::resident(const StagingKey& key) const {
  if (policy_ == StagingPolicy::kFlexGenPlacement) {
    const auto placed = placed_.find(key);
    return placed == placed_.end() ? 0 : placed->second.resident;
  }
  auto it = index_.find(key);
  return it == index_.end() ? 0 : it->second->second;
}

void HostMemory::touch(const StagingKey& key) {
  auto it = index_.find(key);
  if (it != index_.end()) lru_.splice(lru_.begin(), lru_, it->second);
}

uint64_t HostMemory::lookup(const StagingKey& key, uint64_t bytes) {
  uint64_t in_memory = resident(key);
  if (policy_ == StagingPolicy::kFlexGenPlacement)
    if (const auto placed = placed_.find(key); placed != placed_.end()) in_memory += std::exchange(placed->second.fresh, 0);
  const uint64_t hit = std::min(in_memory, bytes);
  hit_bytes_ += hit;
  miss_bytes_ += bytes - hit;
  touch(key);
  return hit;
}

void HostMemory::retain(const std::function<bool(const StagingKey&)>& keep) {
  for (auto it = placed_.begin(); it != placed_.end();) {
    if (keep(it->first)) {
      ++it;
      continue;
    }
    used_ -= it->second.resident;
    it = placed_.erase(it);
  }
  for (auto it = lru_.begin(); it != lru_.end();) {
    if (keep(it->first)) {
      ++it;
      continue;
    }
    used_ -= it->second;
    index_.erase(it->first);
    it = lru_.erase(it);
  }
}

uint64_t HostMemory::insert(const StagingKey& key, uint64_t bytes) {
  if (policy_ != StagingPolicy::kLru) throw std::logic_error("HostMemory::insert is the LRU policy's");
  const uint64_t wanted = std::min(bytes, capacity_);
  // Take the key out first so that it is never its own victim.
  auto it = index_.find(key);
  if (it != index_.end()) {
    used_ -= it->second->second;
    lru_.erase(it->second);
    index_.erase(it);
  }
  uint64_t evicted = 0;
  while (used_ + wanted > capacity_ && !lru_.empty()) {
    auto& [victim, size] = lru_.back();
    const uint64_t need = used_ + wanted - capacity_;
    if (size > need) {
      // Shrink the least recently used key instead of dropping it whole: a
      // partially staged layer still saves that many SSD bytes.
      size -= need;
      used_ -= need;
      evicted += need;
      ++evictions_;
      break;
    }
    used_ -= size;
    evicted += size;
    ++evictions_;
    index_.erase(victim);
    lru_.pop_back();
  }
  if (wanted > 0) {
    lru_.emplace_front(key, wanted);
    index_[key] = lru_.begin();
    used_ += wanted;
  }
  evicted_bytes_ += evicted;
  return evicted;
}

}  // namespace ispsim::host
