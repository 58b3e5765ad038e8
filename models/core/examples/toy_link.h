// The ToyLink role: the small pluggable role of the "add a module" walkthrough
// (docs/adding-a-module.md). A link carries one message at a time from one side
// to the other; implementations differ only in how long that takes.
#pragma once

#include <cstdint>
#include <systemc>

#include "models/core/examples/toy_link.pb.h"
#include "models/core/registry.h"
#include "models/core/vcd.h"

namespace ispsim::examples {

class ToyLink : public sc_core::sc_module {
 public:
  // Starts sending a message of `bytes` at the current time. Throws
  // std::logic_error if a message is still in flight (callers wait for
  // `delivered`).
  virtual void send(uint64_t bytes) = 0;
  virtual bool busy() const = 0;
  // Adds the link's state to a waveform under the link's SystemC name.
  virtual void trace(vcd::Writer& writer) = 0;

  // Notified (one delta cycle later) when the message in flight has arrived.
  sc_core::sc_event delivered;

 protected:
  explicit ToyLink(sc_core::sc_module_name name) : sc_module(name) {}
};

// Implementations are constructed from their SystemC name and the whole
// ToyLinkConfig; each reads its own sub-message.
using ToyLinkFactory = core::Factory<ToyLink, sc_core::sc_module_name, const ToyLinkConfig&>;

// The factory of the role, filled by examples::register_all().
ToyLinkFactory& toy_links();

}  // namespace ispsim::examples
