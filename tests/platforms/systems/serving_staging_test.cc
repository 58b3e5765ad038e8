// Host DRAM staging shared by the requests in service together
// (platforms/systems/serving_staging.h): a new request keeps what the others
// staged, and FlexGen's placement is planned over all of them.
#include <gtest/gtest.h>

#include "models/host/host_memory.h"
#include "platforms/systems/serving_staging.h"
#include "schema/resolve.h"

namespace ispsim::systems {
namespace {

host::HostConfig host_config() {
  return host::HostConfig::from_params(schema::resolved(schema::HostParams(), "host"), "host");
}

trace::ModelShape shape() {
  trace::ModelShape m;
  m.set_layers(2);
  m.set_hidden(64);
  m.set_heads(2);
  m.set_kv_heads(2);
  m.set_head_dim(32);
  m.set_ffn_dim(128);
  m.set_vocab(100);
  m.set_weight_bits(16);
  m.set_kv_bits(16);
  m.set_activation_bits(16);
  return m;
}

workload::StreamRequest request(uint64_t index, uint64_t document) {
  workload::StreamRequest r;
  r.set_index(index);
  workload::DocumentRef* d = r.add_documents();
  d->set_id(document);
  d->set_tokens(100);
  return r;
}

host::StagingKey appended_of(uint64_t serial) {
  return {0, trace::KV_REGION_APPENDED, DocumentStaging::request_owner(serial)};
}

// Request 0 appends half the capacity C and plans C; request 1 starts while
// it is in service and plans C too: request 0's KV stays, at the share
// C / 2 x C / (C + C) of FlexGen's placement over both.
TEST(DocumentStaging, RequestsInServiceTogetherShareTheStagingArea) {
  host::HostMemory memory("memory", host_config(), shape());
  const uint64_t c = memory.staging_capacity();
  const host::StagingPolicy flexgen = host::StagingPolicy::kFlexGenPlacement;
  StagingShare share;
  DocumentStaging first(memory, request(0, 5), 0, 1000, flexgen, &share);
  first.plan(c);
  first.append(0, trace::KV_REGION_APPENDED, c / 2);
  EXPECT_EQ(memory.resident(appended_of(0)), c / 2);
  DocumentStaging second(memory, request(1, 7), 1, 1000, flexgen, &share);
  EXPECT_EQ(memory.resident(appended_of(0)), c / 2);  // kept
  second.plan(c);
  EXPECT_EQ(memory.resident(appended_of(0)), static_cast<uint64_t>(static_cast<unsigned __int128>(c / 2) * c / (2 * c)));
  // Once request 0's ops are done, the next request no longer keeps its KV.
  share.remove(0);
  DocumentStaging third(memory, request(2, 9), 2, 1000, flexgen, &share);
  EXPECT_EQ(memory.resident(appended_of(0)), 0u);
}

// One request at a time (no share): a new request drops the previous one's appended KV.
TEST(DocumentStaging, OneAtATimeDropsThePreviousRequestsKv) {
  host::HostMemory memory("memory", host_config(), shape());
  const host::StagingPolicy flexgen = host::StagingPolicy::kFlexGenPlacement;
  DocumentStaging first(memory, request(0, 5), 0, 1000, flexgen);
  first.plan(1000);
  first.append(0, trace::KV_REGION_APPENDED, 1000);
  EXPECT_EQ(memory.resident(appended_of(0)), 1000u);
  DocumentStaging second(memory, request(1, 7), 1, 1000, flexgen);
  EXPECT_EQ(memory.resident(appended_of(0)), 0u);
}

}  // namespace
}  // namespace ispsim::systems
