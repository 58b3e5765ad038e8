// The host DRAM budget and the KV staging in it (MemLLM Sec. VI-A: both GPU
// baselines keep KV in idle host DRAM when it fits and re-read the rest from
// the SSD, FlexGen-style).
//
//   staging capacity = dram_capacity - model weights - workspace   (0 if negative)
//
// Weights and the rest of the accounting are the project's one memory
// accounting (traces/memory_accounting.h, physical: one KV copy), shared
// with `ispsim trace gen --budget-table`.
//
// Two staging policies (host.staging_policy), over keys (layer, region):
// - FLEXGEN_PLACEMENT (default): FlexGen's placement. plan(K) is told the
//   request's KV K; every key keeps the same share of its bytes resident,
//   floor(bytes x capacity / K) (all of them when K fits), and what is streamed
//   in beyond that share is not kept. Cyclic access over the layers then hits
//   capacity / K of the bytes every pass, where LRU would hit nothing.
// - LRU: what is read or appended is kept; making room drops least recently
//   used keys, the last victim only shrunk by the bytes still needed. A key
//   larger than the whole capacity keeps `capacity` bytes.
// The KV an op has just appended (or overwritten in place) is in the GPU's
// working buffer: under FLEXGEN_PLACEMENT the next lookup of its key counts it
// as a hit (under LRU it is staged anyway). Staging hits cost no extra time: with unified memory the GPU reads staged
// KV in place, and that DRAM traffic is in the attention op's roofline.
//
// Statistics (under `path`): staging_capacity, weight_bytes, resident_bytes,
// hit_bytes, miss_bytes, evicted_bytes (bytes), evictions (count), hit_rate (ratio).
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <string>
#include <utility>

#include "models/core/stats.h"
#include "models/host/host_config.h"
#include "traces/memory_accounting.h"
#include "traces/trace.pb.h"

namespace ispsim::host {

using accounting::model_parameters;
using accounting::model_weight_bytes;

struct StagingKey {
  uint32_t layer = 0;
  trace::KvRegion region = trace::KV_REGION_UNSPECIFIED;
  // Whose KV: 0 in a single request; a served stream's document or request
  // (platforms/systems/serving_staging.h), so that staging outlives a request.
  uint64_t owner = 0;
  bool operator<(const StagingKey& o) const {
    if (layer != o.layer) return layer < o.layer;
    return region != o.region ? region < o.region : owner < o.owner;
  }
  bool operator==(const StagingKey& o) const { return layer == o.layer && region == o.region && owner == o.owner; }
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

  // FLEXGEN_PLACEMENT: the request's KV is `kv_bytes`; sets the resident share.
  void plan(uint64_t kv_bytes);

  // Bytes of `key` resident in staging (0 if absent).
  uint64_t resident(const StagingKey& key) const;
  // A read of `bytes` of `key`: counts min(resident + just appended, bytes) as hit
  // bytes and the rest as miss bytes, marks the key most recently used; returns
  // the hit bytes.
  uint64_t lookup(const StagingKey& key, uint64_t bytes);
  // `bytes` of new KV appended to `key`.
  void append(const StagingKey& key, uint64_t bytes);
  // `bytes` of `key`'s entries overwritten in place (CacheBlend's recomputed
  // tokens): no new bytes.
  void overwrite(const StagingKey& key, uint64_t bytes);
  // A read of `read_bytes` of `key` arrived; the op needed `key_bytes` of it in all.
  void fetched(const StagingKey& key, uint64_t read_bytes, uint64_t key_bytes);

  // LRU primitives (also what the LRU policy's append and fetched do):
  // Makes `key` hold `bytes` (replacing its previous size), most recently used,
  // evicting (the last one possibly only in part) least recently used keys until it fits; a key larger than the
  // capacity keeps `capacity` bytes. Returns the bytes evicted from other keys
  // (evictions counts each key dropped or shrunk).
  uint64_t insert(const StagingKey& key, uint64_t bytes);
  // Marks `key` most recently used (no effect if absent).
  void touch(const StagingKey& key);
  // Drops every key `keep` refuses (its bytes leave staging; not an eviction).
  void retain(const std::function<bool(const StagingKey&)>& keep);

  uint64_t resident_bytes() const { return used_; }
  uint64_t hit_bytes() const { return hit_bytes_.value(); }
  uint64_t miss_bytes() const { return miss_bytes_.value(); }
  uint64_t evicted_bytes() const { return evicted_bytes_.value(); }
  uint64_t evictions() const { return evictions_.value(); }

 private:
  struct Placed {  // FLEXGEN_PLACEMENT: one key
    uint64_t total = 0, resident = 0, fresh = 0;
  };
  void place(Placed& p);

  using Lru = std::list<std::pair<StagingKey, uint64_t>>;  // front = most recently used
  uint64_t weight_bytes_;
  uint64_t workspace_bytes_;
  uint64_t dram_bytes_;
  uint64_t capacity_;
  const StagingPolicy policy_;
  uint64_t planned_kv_bytes_ = 0;  // 0: not planned, every byte placed resident up to the capacity
  uint64_t used_ = 0;
  std::map<StagingKey, Placed> placed_;
  Lru lru_;
  std::map<StagingKey, Lru::iterator> index_;
  stats::Group stats_;
  stats::Counter& hit_bytes_;
  stats::Counter& miss_bytes_;
  stats::Counter& evicted_bytes_;
  stats::Counter& evictions_;
};

}  // namespace ispsim::host
