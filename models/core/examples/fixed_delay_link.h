// ToyLink "fixed_delay": every message takes the same time, whatever its size.
#pragma once

#include "models/core/examples/toy_link.h"
#include "models/core/stats.h"

namespace ispsim::examples {

class FixedDelayLink : public ToyLink {
 public:
  FixedDelayLink(sc_core::sc_module_name name, const FixedDelayLinkParams& params);

  void send(uint64_t bytes) override;
  bool busy() const override { return busy_; }
  void trace(vcd::Writer& writer) override;

 private:
  void arrive();

  const sc_core::sc_time delay_;
  bool busy_ = false;
  sc_core::sc_event arrival_;
  stats::Group stats_;
  stats::Counter& messages_;
  stats::Counter& bytes_;
  vcd::Signal busy_signal_;
};

}  // namespace ispsim::examples
