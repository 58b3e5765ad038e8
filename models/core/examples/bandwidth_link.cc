#include "models/core/examples/bandwidth_link.h"

#include <stdexcept>
#include <string>

namespace ispsim::examples {

BandwidthLink::BandwidthLink(sc_core::sc_module_name name, const BandwidthLinkParams& params)
    : ToyLink(name),
      latency_ns_(params.latency_ns()),
      rate_gbps_(params.rate_gbps()),
      stats_(this->name()),
      messages_(stats_.counter("messages", "count", "messages delivered or in flight")),
      bytes_(stats_.counter("bytes", "bytes", "bytes of those messages")),
      busy_time_(stats_.scalar("busy_time", "ns", "time spent carrying messages")) {
  SC_HAS_PROCESS(BandwidthLink);
  SC_METHOD(arrive);
  sensitive << arrival_;
  dont_initialize();
  stats_.formula("bandwidth", "GB/s", "bytes / busy_time while busy, GB = 1e9 B", [this] {
    return busy_time_.value() > 0 ? bytes_.value() / busy_time_.value() : 0.0;
  });
}

sc_core::sc_time BandwidthLink::transfer_time(uint64_t bytes) const {
  return sc_core::sc_time(latency_ns_ + bytes / rate_gbps_, sc_core::SC_NS);
}

void BandwidthLink::send(uint64_t bytes) {
  if (busy_) throw std::logic_error(std::string(name()) + ": send while a message is in flight");
  const sc_core::sc_time t = transfer_time(bytes);
  busy_ = true;
  busy_signal_.set(1);
  ++messages_;
  bytes_ += bytes;
  busy_time_ += t / sc_core::sc_time(1, sc_core::SC_NS);
  arrival_.notify(t);
}

void BandwidthLink::arrive() {
  busy_ = false;
  busy_signal_.set(0);
  delivered.notify(sc_core::SC_ZERO_TIME);
}

void BandwidthLink::trace(vcd::Writer& writer) { writer.add(std::string(name()) + ".busy", 1, busy_signal_); }

}  // namespace ispsim::examples
