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

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <systemc>

#include "models/core/stats.h"
#include "models/core/vcd.h"

namespace ispsim::core {

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

}  // namespace ispsim::core
