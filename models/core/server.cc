#include "models/core/server.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

#include "models/core/sim_time.h"

namespace ispsim::core {

using sc_core::sc_time;

Server::Server(sc_core::sc_module_name name, double bytes_per_ns, const sc_time& latency)
    : sc_module(name),
      bytes_per_ns_(bytes_per_ns),
      latency_(latency),
      stats_(this->name()),
      requests_(stats_.counter("requests", "count", "requests served")),
      bytes_(stats_.counter("bytes", "bytes", "bytes moved")) {
  stats_.formula("busy_time", "ns", "time occupied by requests",
                 [this] { return static_cast<double>(busy_ps_) / 1e3; });
  stats_.formula("utilization", "ratio", "busy time / simulated time", [this] {
    const double now = static_cast<double>(sc_core::sc_time_stamp().value());
    return now > 0 ? static_cast<double>(busy_ps_) / now : 0.0;
  });
  SC_HAS_PROCESS(Server);
  SC_METHOD(complete);
  sensitive << next_done_;
  dont_initialize();
}

sc_time Server::occupancy(uint64_t bytes) const {
  if (bytes == 0) return sc_core::SC_ZERO_TIME;
  if (bytes_per_ns_ <= 0) throw std::logic_error(std::string(name()) + ": transfer on a server without a rate");
  return sc_time::from_value(static_cast<uint64_t>(std::llround(static_cast<double>(bytes) / bytes_per_ns_ * 1e3)));
}

sc_time Server::transfer(uint64_t bytes, Done done) { return submit(occupancy(bytes), bytes, std::move(done)); }

sc_time Server::submit(const sc_time& occupancy, uint64_t bytes, Done done) {
  const uint64_t now = sc_core::sc_time_stamp().value();
  const uint64_t start = std::max<uint64_t>(now, free_at_ps_);
  free_at_ps_ = add_ps(start, occupancy.value());
  busy_ps_ = add_ps(busy_ps_, occupancy.value());
  ++requests_;
  bytes_ += bytes;
  const uint64_t done_ps = add_ps(free_at_ps_, latency_.value());
  const bool was_empty = pending_.empty();
  pending_.push_back({done_ps, std::move(done)});
  outstanding_.set(pending_.size());
  if (was_empty) next_done_.notify(sc_time::from_value(done_ps - now));
  return sc_time::from_value(done_ps);
}

sc_time Server::free_at() const {
  return sc_time::from_value(std::max<uint64_t>(free_at_ps_, sc_core::sc_time_stamp().value()));
}

void Server::book(const FcfsClock& clock) { book(clock.use()); }

void Server::book(const ClockUse& use) {
  free_at_ps_ = std::max(free_at_ps_, use.free_ps);
  busy_ps_ += use.busy_ps;
  requests_ += use.requests;
  bytes_ += use.bytes;
}

void Server::complete() {
  const uint64_t now = sc_core::sc_time_stamp().value();
  std::vector<Done> due;
  while (!pending_.empty() && pending_.front().done_ps <= now) {
    due.push_back(std::move(pending_.front().done));
    pending_.pop_front();
  }
  outstanding_.set(pending_.size());
  if (!pending_.empty()) next_done_.notify(sc_time::from_value(pending_.front().done_ps - now));
  for (Done& d : due)
    if (d) d();
}

void Server::trace(vcd::Writer& writer, const vcd::Kind& kind) {
  writer.add(std::string(name()) + ".outstanding", 16, outstanding_, {kind.role, kind.channel, nullptr});
}

}  // namespace ispsim::core
