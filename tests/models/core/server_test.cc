// core::Server: exact completion times of a FCFS pipelined resource, statistics
// and the outstanding-requests waveform. Every TEST runs in its own process.
#include "models/core/server.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <sstream>
#include <stdexcept>
#include <systemc>
#include <vector>

#include "models/core/stats.h"
#include "models/core/vcd.h"
#include "tests/support/files.h"
#include "tests/support/vcd_check.h"

namespace ispsim::core {
namespace {

using sc_core::SC_NS;
using sc_core::SC_PS;
using sc_core::sc_time;

sc_time ns(double v) { return sc_time(v, SC_NS); }
uint64_t now_ps() { return sc_core::sc_time_stamp().value(); }

// Submits transfers at given times from an SC_THREAD and records completion times.
class Driver : public sc_core::sc_module {
 public:
  struct Request {
    sc_time at;
    uint64_t bytes;
  };
  Driver(sc_core::sc_module_name name, Server& server, std::vector<Request> requests)
      : sc_module(name), server_(server), requests_(std::move(requests)) {
    SC_HAS_PROCESS(Driver);
    SC_THREAD(run);
  }
  std::vector<uint64_t> returned_ps, done_ps;

 private:
  void run() {
    for (const Request& r : requests_) {
      if (r.at > sc_core::sc_time_stamp()) wait(r.at - sc_core::sc_time_stamp());
      returned_ps.push_back(server_.transfer(r.bytes, [this] { done_ps.push_back(now_ps()); }).value());
    }
  }
  Server& server_;
  std::vector<Request> requests_;
};

std::string stats_csv() {
  std::ostringstream os;
  stats::Registry::global().write_csv(os);
  return os.str();
}

TEST(Server, BackToBackTransfersPipelineTheLatency) {
  // 2 B/ns, 100 ns latency: 1000 B occupy 500 ns. Three at t=0 complete at
  // 0+500+100, 1000+100, 1500+100 ns: the latency overlaps the next occupancy.
  Server server("link", 2.0, ns(100));
  Driver driver("driver", server, {{ns(0), 1000}, {ns(0), 1000}, {ns(0), 1000}});
  sc_core::sc_start();
  const std::vector<uint64_t> expected = {600'000, 1'100'000, 1'600'000};
  EXPECT_EQ(driver.returned_ps, expected);
  EXPECT_EQ(driver.done_ps, expected);
  EXPECT_EQ(now_ps(), 1'600'000u);
}

TEST(Server, AnIdleServerStartsAtSubmission) {
  // Second request arrives at 2000 ns, long after the first is done (600 ns);
  // third arrives at 2100 ns while the second still occupies (until 2500).
  Server server("link", 2.0, ns(100));
  Driver driver("driver", server, {{ns(0), 1000}, {ns(2000), 1000}, {ns(2100), 200}});
  sc_core::sc_start();
  const std::vector<uint64_t> expected = {600'000, 2'600'000, 2'700'000};
  EXPECT_EQ(driver.done_ps, expected);
  EXPECT_EQ(server.busy_time(), ns(1100));
  EXPECT_EQ(server.requests(), 3u);
  EXPECT_EQ(server.bytes(), 2200u);
}

TEST(Server, OccupancyRoundsToThePicosecond) {
  Server server("link", 2.4, ns(0));
  // 4096 B / 2.4 B/ns = 1706.6666... ns -> 1706667 ps; 1 B -> 416.666 ps -> 417 ps.
  EXPECT_EQ(server.occupancy(4096).value(), 1'706'667u);
  EXPECT_EQ(server.occupancy(1).value(), 417u);
  EXPECT_EQ(server.occupancy(0), sc_core::SC_ZERO_TIME);
}

TEST(Server, CallbacksMaySubmitFollowUps) {
  // A chain: each completion submits the next request. The follow-up starts at
  // the completion time (600 ns), not when the occupancy ended (500 ns).
  Server server("link", 2.0, ns(100));
  std::vector<uint64_t> done;
  std::function<void()> next = [&] {
    done.push_back(now_ps());
    if (done.size() < 3) server.transfer(1000, next);
  };
  struct Kick : sc_core::sc_module {
    Kick(sc_core::sc_module_name n, std::function<void()> f) : sc_module(n), f_(std::move(f)) {
      SC_HAS_PROCESS(Kick);
      SC_THREAD(run);
    }
    void run() { f_(); }
    std::function<void()> f_;
  } kick("kick", [&] { server.transfer(1000, next); });
  sc_core::sc_start();
  EXPECT_EQ(done, (std::vector<uint64_t>{600'000, 1'200'000, 1'800'000}));
  EXPECT_EQ(server.busy_time(), ns(1500));
}

TEST(Server, CallbackSubmittingWhileOthersArePending) {
  // Requests A (done 600) and B (done 1100) queued at t=0; A's callback submits
  // C at 600 ns: C starts when B's occupancy ends (1000) and completes at 1600.
  Server server("link", 2.0, ns(100));
  std::vector<std::pair<char, uint64_t>> done;
  struct Kick : sc_core::sc_module {
    Kick(sc_core::sc_module_name n, std::function<void()> f) : sc_module(n), f_(std::move(f)) {
      SC_HAS_PROCESS(Kick);
      SC_THREAD(run);
    }
    void run() { f_(); }
    std::function<void()> f_;
  } kick("kick", [&] {
    server.transfer(1000, [&] {
      done.push_back({'A', now_ps()});
      EXPECT_EQ(server.transfer(1000, [&] { done.push_back({'C', now_ps()}); }).value(), 1'600'000u);
    });
    server.transfer(1000, [&] { done.push_back({'B', now_ps()}); });
  });
  sc_core::sc_start();
  EXPECT_EQ(done, (std::vector<std::pair<char, uint64_t>>{{'A', 600'000}, {'B', 1'100'000}, {'C', 1'600'000}}));
}

TEST(Server, ExplicitOccupancyAndZeroTimeRequests) {
  // A compute unit: no rate, explicit occupancy. Zero occupancy and zero
  // latency complete in the same time step, in submission order.
  Server unit("unit", 0.0, sc_core::SC_ZERO_TIME);
  std::vector<int> order;
  std::vector<uint64_t> at;
  struct Kick : sc_core::sc_module {
    Kick(sc_core::sc_module_name n, std::function<void()> f) : sc_module(n), f_(std::move(f)) {
      SC_HAS_PROCESS(Kick);
      SC_THREAD(run);
    }
    void run() {
      wait(sc_time(5, SC_NS));
      f_();
    }
    std::function<void()> f_;
  } kick("kick", [&] {
    EXPECT_EQ(unit.submit(sc_core::SC_ZERO_TIME, 0, [&] { order.push_back(1); at.push_back(now_ps()); }).value(),
              5'000u);
    EXPECT_EQ(unit.submit(sc_core::SC_ZERO_TIME, 64, [&] { order.push_back(2); at.push_back(now_ps()); }).value(),
              5'000u);
    EXPECT_EQ(unit.submit(ns(7), 0, [&] { order.push_back(3); at.push_back(now_ps()); }).value(), 12'000u);
    EXPECT_EQ(unit.submit(ns(1), 0, {}).value(), 13'000u);  // an empty callback is allowed
    EXPECT_EQ(unit.free_at(), ns(13));
  });
  sc_core::sc_start();
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(at, (std::vector<uint64_t>{5'000, 5'000, 12'000}));
  EXPECT_EQ(unit.requests(), 4u);
  EXPECT_EQ(unit.bytes(), 64u);
  EXPECT_THROW(unit.transfer(1, {}), std::logic_error);  // no rate
  EXPECT_NO_THROW(unit.transfer(0, {}));                  // zero bytes need no rate
}

TEST(Server, SubmitBeforeTheSimulationStarts) {
  // The runtime may queue work during elaboration.
  Server server("link", 1.0, ns(10));
  std::vector<uint64_t> done;
  EXPECT_EQ(server.transfer(100, [&] { done.push_back(now_ps()); }).value(), 110'000u);
  EXPECT_EQ(server.free_at(), ns(100));
  sc_core::sc_start();
  EXPECT_EQ(done, (std::vector<uint64_t>{110'000}));
}

TEST(Server, Statistics) {
  // Statistics are named by the SystemC path (here sys.link).
  struct System : sc_core::sc_module {
    explicit System(sc_core::sc_module_name n) : sc_module(n) {}
    Server link{"link", 2.0, ns(100)};
  } sys("sys");
  Server& server = sys.link;
  Driver driver("driver", server, {{ns(0), 1000}, {ns(0), 1000}, {ns(2000), 400}});
  sc_core::sc_start();
  // Busy 500 + 500 + 200 = 1200 ns of 2300 ns simulated.
  const std::string csv = stats_csv();
  EXPECT_NE(csv.find("sys.link.requests,3,count,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("sys.link.bytes,2400,bytes,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("sys.link.busy_time,1200,ns,"), std::string::npos) << csv;
  // utilization = 1200 / 2300, printed as the shortest text that round-trips.
  EXPECT_NE(csv.find("sys.link.utilization,0.5217391304347826,ratio,"), std::string::npos) << csv;
}

// Two clocks that served the same requests, however they were submitted.
void expect_same_use(const FcfsClock& a, const FcfsClock& b) {
  EXPECT_EQ(a.free_ps(), b.free_ps());
  EXPECT_EQ(a.busy_ps(), b.busy_ps());
  EXPECT_EQ(a.requests(), b.requests());
  EXPECT_EQ(a.bytes(), b.bytes());
}

// A run of alike requests submitted at once equals the same requests one by one.
TEST(Server, RepeatedSubmissionsEqualOneByOne) {
  Server server("unit", 0.0, ns(3));
  for (uint64_t times : {1, 2, 7}) {
    for (uint64_t at : {0, 5, 40, 1000}) {
      FcfsClock once(server), each(server);
      once.submit(10, 20, 4);  // busy until 30
      each.submit(10, 20, 4);
      uint64_t last = 0;
      for (uint64_t k = 0; k < times; ++k) last = each.submit(at, 11, 6);
      EXPECT_EQ(once.submit_repeated(at, 11, 6, times), last) << times << " at " << at;
      expect_same_use(once, each);
    }
  }
}

// Alike requests submitted at even spacing, before, during and after a
// backlog, slower and faster than the server, each standing for two: the
// closed forms (every completion, the last) equal the requests one by one.
TEST(Server, SpacedSubmissionsEqualOneByOne) {
  Server server("unit", 0.0, ns(3));
  for (uint64_t times : {1, 2, 7, 50}) {
    for (uint64_t at : {0, 5, 40, 1000}) {
      for (uint64_t spacing : {0, 4, 11, 12, 30}) {
        FcfsClock runs(server), last(server), each(server);
        for (FcfsClock* clock : {&runs, &last, &each}) clock->submit(10, 200, 4);  // busy until 210
        std::vector<uint64_t> want, got;
        for (uint64_t k = 0; k < times; ++k) {
          each.submit(at + k * spacing, 5, 2);  // a request of two: 5 + 6 ps
          want.push_back(each.submit(at + k * spacing, 6, 4));
        }
        for (const Spaced& ends : runs.submit_runs({at, spacing, times}, 11, 6, 2))
          for (uint64_t k = 0; k < ends.count; ++k) got.push_back(ends.at(k));
        EXPECT_EQ(got, want) << times << " at " << at << " every " << spacing;
        expect_same_use(runs, each);
        EXPECT_EQ(last.submit_spaced(at, spacing, 11, 6, times), want.back());
        EXPECT_EQ(last.free_ps(), each.free_ps());
        EXPECT_EQ(last.busy_ps(), each.busy_ps());
      }
    }
  }
}

TEST(Server, ASubmissionIfNotReallyChangesNothing) {
  Server server("unit", 0.0, ns(3));
  FcfsClock maybe(server), sure(server);
  EXPECT_EQ(maybe.submit_if(true, 10, 200, 4), sure.submit(10, 200, 4));
  EXPECT_EQ(maybe.submit_if(false, 500, 7, 9), 0u);
  EXPECT_EQ(maybe.submit_if(true, 100, 20, 1), sure.submit(100, 20, 1));  // queued behind the first
  expect_same_use(maybe, sure);
}

TEST(Spaced, CountsTheTimesBeforeAnInstantAndSplits) {
  const Spaced s{100, 10, 5};  // 100 .. 140
  EXPECT_EQ(s.before(100), 0u);
  EXPECT_EQ(s.before(101), 1u);
  EXPECT_EQ(s.before(140), 4u);
  EXPECT_EQ(s.before(141), 5u);
  EXPECT_EQ(s.last(), 140u);
  EXPECT_EQ(s.tail(2).first_ps, 120u);
  EXPECT_EQ(s.tail(2).count, 3u);
  EXPECT_EQ(s.head(2).last(), 110u);
  EXPECT_EQ((Spaced{7, 0, 3}).before(8), 3u);
  EXPECT_EQ((Spaced{7, 0, 3}).before(7), 0u);
}

TEST(Server, OutstandingWaveform) {
  Server server("link", 2.0, ns(100));
  Driver driver("driver", server, {{ns(0), 1000}, {ns(0), 1000}, {ns(2000), 1000}});
  vcd::Options opts;
  opts.path = ::testing::TempDir() + "server_" + std::to_string(::getpid()) + ".vcd";
  vcd::Writer writer(opts);
  server.trace(writer);
  sc_core::sc_start();
  writer.close();
  std::istringstream in(testing::read_text(opts.path));
  const testing::VcdContent vcd = testing::parse_vcd(in);
  ASSERT_TRUE(vcd.errors.empty());
  ASSERT_EQ(vcd.widths.count("link.outstanding"), 1u);
  // 2 queued at 0, one done at 600, the other at 1100, one more 2000..2600.
  std::vector<std::pair<uint64_t, std::string>> changes;
  for (const auto& [t, values] : vcd.values)
    if (values.count("link.outstanding")) changes.push_back({t, values.at("link.outstanding")});
  const std::vector<std::pair<uint64_t, std::string>> expected = {
      {0, "10"}, {600'000, "1"}, {1'100'000, "0"}, {2'000'000, "1"}, {2'600'000, "0"}};
  EXPECT_EQ(changes, expected);
  testing::expect_vcd_valid(opts.path);
}

}  // namespace
}  // namespace ispsim::core
