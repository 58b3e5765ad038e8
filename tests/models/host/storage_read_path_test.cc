// StorageReadPath: a host software path of KV from the SSD, one
// first-come-first-served thread: done = max(arrival, previous end) +
// overhead + bytes / rate. The host has two, each with its own parameters.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <systemc>
#include <vector>

#include "common/error.h"
#include "models/host/host_config.h"
#include "models/host/storage_read_path.h"

namespace ispsim::host {
namespace {

using sc_core::sc_time;
using sc_core::SC_US;

// Load path: 20 us per request, 2 GB/s = 2 bytes per ns; swap path: 3 us, 8 GB/s.
HostConfig host_config() {
  schema::HostParams p;
  p.set_storage_read_overhead_us(20);
  p.set_storage_read_gbps(2);
  p.set_swap_read_overhead_us(3);
  p.set_swap_read_gbps(8);
  return HostConfig::from_params(schema::resolved(p, "test.host"), "test.host");
}
ReadPathConfig config() { return host_config().load_path; }

sc_time ps(uint64_t value) { return sc_time::from_value(value); }

TEST(StorageReadPath, IdleRequestIsOverheadPlusCopy) {
  StorageReadPath path("path", config());
  // 1 MiB at 2 GB/s = 524,288 ns, + 20 us.
  EXPECT_EQ(path.request_time(1 << 20), ps(544288000));
  sc_time done_at;
  const sc_time returned = path.deliver(1 << 20, [&] { done_at = sc_core::sc_time_stamp(); });
  sc_core::sc_start();
  EXPECT_EQ(done_at, ps(544288000));
  EXPECT_EQ(returned, done_at);
  EXPECT_EQ(path.requests(), 1u);
  EXPECT_EQ(path.bytes(), uint64_t{1} << 20);
  EXPECT_EQ(path.busy_time(), ps(544288000));
}

TEST(StorageReadPath, RequestsQueueOnOneThread) {
  StorageReadPath path("path", config());
  std::vector<sc_time> done;
  // Two arrivals at 0: the second waits for the first (20 us + 500 us each for 1e6 bytes).
  path.deliver(1000000, [&] { done.push_back(sc_core::sc_time_stamp()); });
  path.deliver(1000000, [&] { done.push_back(sc_core::sc_time_stamp()); });
  sc_core::sc_start();
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0], sc_time(520, SC_US));
  EXPECT_EQ(done[1], sc_time(1040, SC_US));
  EXPECT_EQ(path.bytes(), 2000000u);  // bytes conserved
}

// An arrival after the thread went idle starts at its arrival.
struct LateArrival : sc_core::sc_module {
  StorageReadPath path{"path", config()};
  std::vector<sc_time> done;
  SC_HAS_PROCESS(LateArrival);
  explicit LateArrival(sc_core::sc_module_name n) : sc_module(n) { SC_THREAD(run); }
  void run() {
    path.deliver(0, [this] { done.push_back(sc_core::sc_time_stamp()); });  // overhead only
    wait(sc_time(100, SC_US));
    path.deliver(2000, [this] { done.push_back(sc_core::sc_time_stamp()); });  // 20 us + 1 us
  }
};

TEST(StorageReadPath, LateArrivalStartsAtArrival) {
  LateArrival top("top");
  sc_core::sc_start();
  ASSERT_EQ(top.done.size(), 2u);
  EXPECT_EQ(top.done[0], sc_time(20, SC_US));
  EXPECT_EQ(top.done[1], sc_time(121, SC_US));
  EXPECT_EQ(top.path.busy_time(), sc_time(41, SC_US));  // busy time never exceeds the elapsed time
}

TEST(StorageReadPath, TheSwapPathHasItsOwnParameters) {
  StorageReadPath load("load", host_config().load_path);
  StorageReadPath swap("swap", host_config().swap_path);
  // 8e6 bytes: load 20 us + 4,000 us; swap 3 us + 1,000 us.
  EXPECT_EQ(load.request_time(8000000), sc_time(4020, SC_US));
  EXPECT_EQ(swap.request_time(8000000), sc_time(1003, SC_US));
}

TEST(StorageReadPath, RejectsOutOfRangeParameters) {
  schema::HostParams p;
  p.set_storage_read_gbps(0);
  EXPECT_THROW(HostConfig::from_params(schema::resolved(p, "test.host"), "test.host"), BadInput);
  schema::HostParams q;
  q.set_storage_read_overhead_us(-1);
  EXPECT_THROW(HostConfig::from_params(schema::resolved(q, "test.host"), "test.host"), BadInput);
  schema::HostParams r;
  r.set_swap_read_gbps(0);
  EXPECT_THROW(HostConfig::from_params(schema::resolved(r, "test.host"), "test.host"), BadInput);
}

}  // namespace
}  // namespace ispsim::host
