// The host DRAM budget and FlexGen-style KV staging in it (MemLLM Sec. VI-A:
// both GPU baselines keep KV in idle host DRAM when it fits and re-read the rest
// from the SSD).
//
//   staging capacity = dram_capacity - model weights - workspace   (0 if negative)
//
// Weights and the rest of the accounting are the project's one memory
// accounting (traces/gen/memory_accounting.h, physical: one KV copy), shared
// with `ispsim trace gen --budget-table`.
//
// Staging is an LRU cache over keys (layer, region) of byte sizes. Making room
// drops least recently used keys; the last victim is only shrunk by the bytes
// still needed (a partially staged layer still saves that many SSD bytes). A key
// larger than the whole capacity is partially resident (`capacity` bytes).
// Staging hits cost no extra time: with unified memory the GPU reads staged KV
// in place, and that DRAM traffic is in the attention op's roofline.
//
// Statistics (under `path`): staging_capacity, weight_bytes (bytes),
// hit_bytes, miss_bytes, evicted_bytes (bytes), evictions (count), resident_bytes.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <string>
#include <utility>

#include "models/core/stats.h"
#include "models/host/host_config.h"
#include "traces/gen/memory_accounting.h"
#include "traces/trace.pb.h"

namespace ispsim::host {

using accounting::model_parameters;
using accounting::model_weight_bytes;

struct StagingKey {
  uint32_t layer = 0;
  trace::KvRegion region = trace::KV_REGION_UNSPECIFIED;
  bool operator<(const StagingKey& o) const {
    return layer != o.layer ? layer < o.layer : region < o.region;
  }
  bool operator==(const StagingKey& o) const { return layer == o.layer && region == o.region; }
};

class HostMemory {
 public:
  // `path` names the statistics (e.g. "system.host.memory").
  HostMemory(const std::string& path, const HostConfig& config, const trace::ModelShape& shape);
  HostMemory(const HostMemory&) = delete;
  HostMemory& operator=(const HostMemory&) = delete;

  uint64_t weight_bytes() const { return weight_bytes_; }
  // Whether weights + workspace fit in the DRAM budget.
  bool weights_fit() const;
  uint64_t staging_capacity() const { return capacity_; }

  // Bytes of `key` resident in staging (0 if absent).
  uint64_t resident(const StagingKey& key) const;
  // A read of `bytes` of `key`: counts min(resident, bytes) as hit bytes and the
  // rest as miss bytes, marks the key most recently used; returns the hit bytes.
  uint64_t lookup(const StagingKey& key, uint64_t bytes);
  // Makes `key` hold `bytes` (replacing its previous size), most recently used,
  // evicting (the last one possibly only in part) least recently used keys until it fits; a key larger than the
  // capacity keeps `capacity` bytes. Returns the bytes evicted from other keys
  // (evictions counts each key dropped or shrunk).
  uint64_t insert(const StagingKey& key, uint64_t bytes);
  // Marks `key` most recently used (no effect if absent).
  void touch(const StagingKey& key);

  uint64_t resident_bytes() const { return used_; }
  uint64_t hit_bytes() const { return hit_bytes_.value(); }
  uint64_t miss_bytes() const { return miss_bytes_.value(); }
  uint64_t evicted_bytes() const { return evicted_bytes_.value(); }
  uint64_t evictions() const { return evictions_.value(); }

 private:
  using Lru = std::list<std::pair<StagingKey, uint64_t>>;  // front = most recently used
  uint64_t weight_bytes_;
  uint64_t workspace_bytes_;
  uint64_t dram_bytes_;
  uint64_t capacity_;
  uint64_t used_ = 0;
  Lru lru_;
  std::map<StagingKey, Lru::iterator> index_;
  stats::Group stats_;
  stats::Counter& hit_bytes_;
  stats::Counter& miss_bytes_;
  stats::Counter& evicted_bytes_;
  stats::Counter& evictions_;
};

}  // namespace ispsim::host
