#include "models/core/examples/fixed_delay_link.h"

#include <stdexcept>
#include <string>

namespace ispsim::examples {

FixedDelayLink::FixedDelayLink(sc_core::sc_module_name name, const FixedDelayLinkParams& params)
    : ToyLink(name),
      delay_(params.delay_ns(), sc_core::SC_NS),
      stats_(this->name()),
      messages_(stats_.counter("messages", "count", "messages delivered or in flight")),
      bytes_(stats_.counter("bytes", "bytes", "bytes of those messages")) {
  SC_HAS_PROCESS(FixedDelayLink);
  SC_METHOD(arrive);
  sensitive << arrival_;
  dont_initialize();
}

void FixedDelayLink::send(uint64_t bytes) {
  if (busy_) throw std::logic_error(std::string(name()) + ": send while a message is in flight");
  busy_ = true;
  busy_signal_.set(1);
  ++messages_;
  bytes_ += bytes;
  arrival_.notify(delay_);
}

void FixedDelayLink::arrive() {
  busy_ = false;
  busy_signal_.set(0);
  delivered.notify(sc_core::SC_ZERO_TIME);
}

void FixedDelayLink::trace(vcd::Writer& writer) { writer.add(std::string(name()) + ".busy", 1, busy_signal_); }

}  // namespace ispsim::examples
