// Host DRAM staging that outlives a request (serving_blend.h): one HostMemory
// for the whole stream, keyed by document, so that a document's precomputed KV
// staged by an earlier request is where that request left it.
//
// A request's precomputed region is its documents one after the other; its
// reads and fetches of a layer's precomputed KV are split over the documents
// in that order (each document's key owns tokens x KV bytes per token), and
// the CacheBlend tokens recomputed in place are split over them in proportion
// to their bytes. Its appended KV (recomputed, query and answer entries) has a
// key of the request's own, dropped when the next request begins. Under LRU
// every document key stays until evicted; under FLEXGEN_PLACEMENT, whose
// placement is planned per request, only the new request's documents stay
// (each at most its new share). The document's staged KV counts as its
// precomputed KV for a later request (the recomputed tokens are not told
// apart). A stream of one request stages what a single run stages, split by
// document; with the whole KV fitting in the budget the hits are the same.
//
// With several requests in service at once (a batching host, serving_batch.h)
// they share a StagingShare: what any of them staged stays while it is in
// service (its documents and its appended KV), and FlexGen's placement is
// planned over the KV of all of them.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "models/host/host_memory.h"
#include "platforms/systems/runtime.h"
#include "traces/workload/workload.pb.h"

namespace ispsim::systems {

// The requests in service together, by serial: the KV each planned and the
// staging owners each uses (its documents' and its own). The executor removes
// a request when its last op has completed.
struct StagingShare {
  std::map<uint64_t, uint64_t> planned;
  std::map<uint64_t, std::set<uint64_t>> owners;
  void remove(uint64_t serial) {
    planned.erase(serial);
    owners.erase(serial);
  }
};

class DocumentStaging : public StagingPort {
 public:
  // Begins request `serial` of the stream on `memory`: drops what the policy
  // does not keep from earlier requests (see above), nor what the requests of
  // `share` (nullable: one request at a time) use.
  DocumentStaging(host::HostMemory& memory, const workload::StreamRequest& request, uint64_t serial,
                  uint64_t kv_bytes_per_token, host::StagingPolicy policy, StagingShare* share = nullptr);

  void plan(uint64_t kv_bytes) override;
  uint64_t lookup(uint32_t layer, trace::KvRegion region, uint64_t bytes) override;
  void append(uint32_t layer, trace::KvRegion region, uint64_t bytes) override;
  void overwrite(uint32_t layer, trace::KvRegion region, uint64_t bytes) override;
  void fetched(uint32_t layer, trace::KvRegion region, uint64_t read_bytes, uint64_t key_bytes) override;

  // The owner of a document's key, and of a request's appended KV.
  static uint64_t document_owner(uint64_t document_id) { return document_id + 1; }
  static uint64_t request_owner(uint64_t serial) { return kRequestOwners | serial; }

 private:
  static constexpr uint64_t kRequestOwners = uint64_t{1} << 63;
  // `bytes` of the layer's precomputed region split over the documents in order.
  std::vector<uint64_t> split(uint64_t bytes) const;
  host::StagingKey document_key(uint32_t layer, size_t d) const {
    return {layer, trace::KV_REGION_PRECOMPUTED, document_owner(documents_[d])};
  }
  host::StagingKey request_key(uint32_t layer, trace::KvRegion region) const {
    return {layer, region, request_owner(serial_)};
  }

  host::HostMemory& memory_;
  std::vector<uint64_t> documents_, document_bytes_;  // ids, and KV bytes per layer, in context order
  uint64_t serial_;
  StagingShare* share_;
};

}  // namespace ispsim::systems
