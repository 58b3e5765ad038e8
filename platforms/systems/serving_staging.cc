#include "platforms/systems/serving_staging.h"

#include <algorithm>
#include <set>

namespace ispsim::systems {

DocumentStaging::DocumentStaging(host::HostMemory& memory, const workload::StreamRequest& request, uint64_t serial,
                                 uint64_t kv_bytes_per_token, host::StagingPolicy policy, StagingShare* share)
    : memory_(memory), serial_(serial), share_(share) {
  std::set<uint64_t> owners;
  for (const workload::DocumentRef& d : request.documents()) {
    documents_.push_back(d.id());
    document_bytes_.push_back(d.tokens() * kv_bytes_per_token);
    owners.insert(document_owner(d.id()));
  }
  if (share_) {
    for (const auto& [other, used] : share_->owners) owners.insert(used.begin(), used.end());
    std::set<uint64_t>& mine = share_->owners[serial_];
    mine.insert(request_owner(serial_));
    for (const uint64_t d : documents_) mine.insert(document_owner(d));
  }
  const bool lru = policy == host::StagingPolicy::kLru;
  memory_.retain([&](const host::StagingKey& key) {
    const bool document = key.owner != 0 && key.owner < kRequestOwners;
    return (document && lru) || owners.count(key.owner);
  });
}

void DocumentStaging::plan(uint64_t kv_bytes) {
  if (!share_) return memory_.plan(kv_bytes);
  share_->planned[serial_] = kv_bytes;
  uint64_t total = 0;
  for (const auto& [serial, bytes] : share_->planned) total += bytes;
  memory_.plan(total);
}

std::vector<uint64_t> DocumentStaging::split(uint64_t bytes) const {
  std::vector<uint64_t> parts;
  for (const uint64_t b : document_bytes_) {
    parts.push_back(std::min(b, bytes));
    bytes -= parts.back();
  }
  if (!parts.empty()) parts.back() += bytes;  // beyond the documents (not in a generated request)
  return parts;
}

uint64_t DocumentStaging::lookup(uint32_t layer, trace::KvRegion region, uint64_t bytes) {
  if (region != trace::KV_REGION_PRECOMPUTED) return memory_.lookup(request_key(layer, region), bytes);
  const std::vector<uint64_t> parts = split(bytes);
  uint64_t hit = 0;
  for (size_t d = 0; d < parts.size(); ++d)
    if (parts[d] > 0) hit += memory_.lookup(document_key(layer, d), parts[d]);
  return hit;
}

void DocumentStaging::append(uint32_t layer, trace::KvRegion region, uint64_t bytes) {
  memory_.append(request_key(layer, region), bytes);
}

void DocumentStaging::overwrite(uint32_t layer, trace::KvRegion region, uint64_t bytes) {
  if (region != trace::KV_REGION_PRECOMPUTED) return memory_.overwrite(request_key(layer, region), bytes);
  uint64_t total = 0, given = 0;
  for (const uint64_t b : document_bytes_) total += b;
  for (size_t d = 0; d < documents_.size(); ++d) {
    const auto proportional = static_cast<uint64_t>(static_cast<unsigned __int128>(bytes) * document_bytes_[d] / total);
    const uint64_t share = d + 1 == documents_.size() ? bytes - given : proportional;
    given += share;
    memory_.overwrite(document_key(layer, d), share);
  }
}

// The read brought what the documents missed, in context order.
void DocumentStaging::fetched(uint32_t layer, trace::KvRegion region, uint64_t read_bytes, uint64_t key_bytes) {
  if (region != trace::KV_REGION_PRECOMPUTED)
    return memory_.fetched(request_key(layer, region), read_bytes, key_bytes);
  const std::vector<uint64_t> parts = split(key_bytes);
  for (size_t d = 0; d < parts.size(); ++d) {
    const uint64_t missed = parts[d] - std::min(parts[d], memory_.resident(document_key(layer, d)));
    const uint64_t arrived = std::min(missed, read_bytes);
    read_bytes -= arrived;
    if (parts[d] > 0) memory_.fetched(document_key(layer, d), arrived, parts[d]);
  }
}

}  // namespace ispsim::systems
