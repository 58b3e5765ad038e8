#include "models/host/host_memory.h"

#include <algorithm>
#include <iterator>

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
      stats_(path),
      hit_bytes_(stats_.counter("hit_bytes", "bytes", "KV bytes read from host staging")),
      miss_bytes_(stats_.counter("miss_bytes", "bytes", "KV bytes looked up but not staged (read from the SSD)")),
      evicted_bytes_(stats_.counter("evicted_bytes", "bytes", "staged KV bytes evicted to make room")),
      evictions_(stats_.counter("evictions", "count", "staged keys evicted or shrunk to make room")) {
  stats_.formula_integer("staging_capacity", "bytes", "DRAM left for KV staging after weights and workspace",
                         [this] { return capacity_; });
  stats_.formula_integer("weight_bytes", "bytes", "model weights held in host DRAM", [this] { return weight_bytes_; });
  stats_.formula_integer("resident_bytes", "bytes", "KV bytes staged at the end", [this] { return used_; });
}

bool HostMemory::weights_fit() const { return weight_bytes_ + workspace_bytes_ <= dram_bytes_; }

uint64_t HostMemory::resident(const StagingKey& key) const {
  auto it = index_.find(key);
  return it == index_.end() ? 0 : it->second->second;
}

void HostMemory::touch(const StagingKey& key) {
  auto it = index_.find(key);
  if (it != index_.end()) lru_.splice(lru_.begin(), lru_, it->second);
}

uint64_t HostMemory::lookup(const StagingKey& key, uint64_t bytes) {
  const uint64_t hit = std::min(resident(key), bytes);
  hit_bytes_ += hit;
  miss_bytes_ += bytes - hit;
  touch(key);
  return hit;
}

uint64_t HostMemory::insert(const StagingKey& key, uint64_t bytes) {
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
