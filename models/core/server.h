// A first-come-first-served timed resource: a link, a bus, a memory port or a
// compute unit that serves one request at a time. A request occupies the server
// for its occupancy time (bytes / rate for a transfer) and completes `latency`
// after its occupancy ends, so the latency of back-to-back requests overlaps
// (a pipelined link): request i starts at max(submit time, end of occupancy of
// request i-1) and completes at start + occupancy + latency.
//
// Completions are delivered by one SC_METHOD and one sc_event per pending
// completion time, in submission order. Callbacks may submit new requests.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <systemc>

#include "models/core/stats.h"
#include "models/core/vcd.h"

namespace ispsim::core {

class FcfsClock;

// Times in arithmetic progression: first, first + spacing, ... (`count` of them).
struct Spaced {
  uint64_t first_ps = 0;
  uint64_t spacing_ps = 0;
  uint64_t count = 0;
  uint64_t at(uint64_t k) const { return first_ps + k * spacing_ps; }
  uint64_t last() const { return at(count - 1); }  // count >= 1
  // How many come before `t`.
  uint64_t before(uint64_t t) const {
    if (count == 0 || first_ps >= t) return 0;
    return spacing_ps == 0 ? count : std::min(count, (t - first_ps - 1) / spacing_ps + 1);
  }
  // The first `n` (<= count) of them, and the rest.
  Spaced head(uint64_t n) const { return {first_ps, spacing_ps, n}; }
  Spaced tail(uint64_t n) const { return {at(n), spacing_ps, count - n}; }
};

// What a batch of requests scheduled by an FcfsClock did to its server, for
// Server::book(): the end of its last occupancy and its totals.
struct ClockUse {
  uint64_t free_ps = 0;
  uint64_t busy_ps = 0;
  uint64_t requests = 0;
  uint64_t bytes = 0;
  // The same use, its free time relative to `base` (free before it: free at it), or moved on by `by`.
  ClockUse relative_to(uint64_t base) const {
    ClockUse u = *this;
    u.free_ps = free_ps > base ? free_ps - base : 0;
    return u;
  }
  ClockUse moved(uint64_t by) const {
    ClockUse u = *this;
    u.free_ps += by;
    return u;
  }
};

class Server : public sc_core::sc_module {
 public:
  using Done = std::function<void()>;

  // `bytes_per_ns` (= GB/s) converts transfer sizes to occupancy; 0 for a
  // server that only takes explicit occupancy times (a compute unit).
  // Statistics: <name>.requests, .bytes, .busy_time, .utilization.
  Server(sc_core::sc_module_name name, double bytes_per_ns, const sc_core::sc_time& latency);

  // Occupancy of a transfer of `bytes`: bytes / rate, rounded to the nearest
  // picosecond (SystemC's resolution). Zero bytes take zero time.
  sc_core::sc_time occupancy(uint64_t bytes) const;

  // Queues a transfer of `bytes`; returns its completion time. `done` (may be
  // empty) runs at that time.
  sc_core::sc_time transfer(uint64_t bytes, Done done);
  // Queues a request that occupies the server for `occupancy` and moves `bytes`
  // (for the statistics only).
  sc_core::sc_time submit(const sc_core::sc_time& occupancy, uint64_t bytes, Done done);

  // When the server can start its next request (>= now when busy).
  sc_core::sc_time free_at() const;
  // Requests whose schedule was computed ahead without events (FcfsClock, the
  // aggregated streaming mode): counted in the statistics, and the server stays
  // busy until the clock's last occupancy ends (later requests queue behind
  // them). Their completions are the caller's business (no callbacks, no
  // waveform change).
  void book(const FcfsClock& clock);
  void book(const ClockUse& use);
  uint64_t requests() const { return requests_.value(); }
  uint64_t bytes() const { return bytes_.value(); }
  sc_core::sc_time busy_time() const { return sc_core::sc_time::from_value(busy_ps_); }
  double bytes_per_ns() const { return bytes_per_ns_; }
  const sc_core::sc_time& latency() const { return latency_; }

  // Waveform: <name>.outstanding (requests submitted and not completed), of
  // the owner's role (kind.encoding is ignored: it is a count).
  void trace(vcd::Writer& writer, const vcd::Kind& kind = {});

 private:
  struct Pending {
    uint64_t done_ps;
    Done done;
  };
  void complete();

  friend class FcfsClock;
  const double bytes_per_ns_;
  const sc_core::sc_time latency_;
  uint64_t free_at_ps_ = 0;
  uint64_t busy_ps_ = 0;
  std::deque<Pending> pending_;
  sc_core::sc_event next_done_;
  stats::Group stats_;
  stats::Counter& requests_;
  stats::Counter& bytes_;
  vcd::Signal outstanding_;
};

// A Server's arithmetic without events, for a batch of requests whose submit
// times are known ahead: request i starts at max(submit, end of the previous
// occupancy), completes `latency` after its occupancy ends, exactly as
// Server::submit() would have placed it had nothing else been submitted
// meanwhile. Starts from the server's state; Server::book() applies the result.
class FcfsClock {
 public:
  explicit FcfsClock(const Server& server)
      : server_(server), latency_ps_(server.latency_.value()), free_ps_(server.free_at_ps_) {}
  // Returns the completion time (ps).
  uint64_t submit(uint64_t at_ps, uint64_t occupancy_ps, uint64_t bytes) {
    const uint64_t start = at_ps > free_ps_ ? at_ps : free_ps_;
    free_ps_ = start + occupancy_ps;
    busy_ps_ += occupancy_ps;
    ++requests_;
    bytes_ += bytes;
    return free_ps_ + latency_ps_;
  }
  uint64_t transfer(uint64_t at_ps, uint64_t bytes) { return submit(at_ps, occupancy_ps(bytes), bytes); }
  // As submit() when `really`, else nothing (and 0): for a loop that chooses
  // request by request, without a branch to mispredict.
  uint64_t submit_if(bool really, uint64_t at_ps, uint64_t occupancy_ps, uint64_t bytes) {
    const uint64_t start = at_ps > free_ps_ ? at_ps : free_ps_;
    const uint64_t n = really ? 1 : 0;
    free_ps_ = really ? start + occupancy_ps : free_ps_;
    busy_ps_ += n * occupancy_ps;
    requests_ += n;
    bytes_ += n * bytes;
    return n * (free_ps_ + latency_ps_);
  }
  // `times` (>= 1) requests alike submitted at once: as many submit() calls, the last's completion.
  uint64_t submit_repeated(uint64_t at_ps, uint64_t occupancy_ps, uint64_t bytes, uint64_t times) {
    return submit_spaced(at_ps, 0, occupancy_ps, bytes, times);
  }
  // `times` (>= 1) requests alike submitted `spacing_ps` apart from `first_at_ps`:
  // as many submit() calls, the last's completion. Request k ends at
  // max(free, first) + (k + 1) x occupancy or at its own submit + occupancy,
  // whichever is later, so the last ends at the later of the two for k = times - 1.
  uint64_t submit_spaced(uint64_t first_at_ps, uint64_t spacing_ps, uint64_t occupancy_ps, uint64_t bytes,
                         uint64_t times) {
    return last_of(submit_runs({first_at_ps, spacing_ps, times}, occupancy_ps, bytes));
  }
  // The completions of requests submitted at `at` (count >= 1), each standing
  // for `requests` submitted together (occupancy and bytes their sums, its
  // completion their last's): the first in backlog, end to end, then (when the
  // spacing exceeds the occupancy) the rest at their own submit + occupancy.
  using Completions = std::array<Spaced, 2>;  // the second may be empty
  static uint64_t last_of(const Completions& ends) { return (ends[1].count > 0 ? ends[1] : ends[0]).last(); }
  Completions submit_runs(const Spaced& at, uint64_t occupancy_ps, uint64_t bytes, uint64_t requests = 1) {
    const uint64_t start = at.first_ps > free_ps_ ? at.first_ps : free_ps_;
    // Request k ends at max(start + (k + 1) o, at(k) + o): the backlog's for k <= (start - first) / (s - o).
    uint64_t backlog = at.count;
    if (at.spacing_ps > occupancy_ps)
      backlog = std::min(at.count, (start - at.first_ps) / (at.spacing_ps - occupancy_ps) + 1);
    Completions ends;
    ends[0] = {start + occupancy_ps + latency_ps_, occupancy_ps, backlog};
    ends[1] = {at.at(backlog) + occupancy_ps + latency_ps_, at.spacing_ps, at.count - backlog};
    free_ps_ = last_of(ends) - latency_ps_;
    busy_ps_ += at.count * occupancy_ps;
    requests_ += at.count * requests;
    bytes_ += at.count * bytes;
    return ends;
  }
  uint64_t free_ps() const { return free_ps_; }
  uint64_t busy_ps() const { return busy_ps_; }
  uint64_t requests() const { return requests_; }
  uint64_t bytes() const { return bytes_; }
  ClockUse use() const { return {free_ps_, busy_ps_, requests_, bytes_}; }
  // Goes on from a state use() gave (of a clock of the same server).
  void continue_from(const ClockUse& use) {
    free_ps_ = use.free_ps;
    busy_ps_ = use.busy_ps;
    requests_ = use.requests;
    bytes_ = use.bytes;
  }

  // The server's occupancy for `bytes`. A batch moves few distinct sizes (a
  // page, a partial, Q rows): the last two sizes' occupancies are kept.
  uint64_t occupancy_ps(uint64_t bytes) {
    for (const Occupancy& o : recent_)
      if (o.bytes == bytes && o.ps != UINT64_MAX) return o.ps;
    Occupancy& slot = recent_[next_recent_];
    next_recent_ ^= 1;
    slot = {bytes, server_.occupancy(bytes).value()};
    return slot.ps;
  }

 private:
  struct Occupancy {
    uint64_t bytes = 0, ps = UINT64_MAX;
  };

  const Server& server_;
  const uint64_t latency_ps_;
  Occupancy recent_[2];
  unsigned next_recent_ = 0;
  uint64_t free_ps_;
  uint64_t busy_ps_ = 0;
  uint64_t requests_ = 0;
  uint64_t bytes_ = 0;
};

}  // namespace ispsim::core
