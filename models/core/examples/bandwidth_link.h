// ToyLink "bandwidth": a message of B bytes takes latency + B / rate.
#pragma once

#include "models/core/examples/toy_link.h"
#include "models/core/stats.h"

namespace ispsim::examples {

class BandwidthLink : public ToyLink {
 public:
  BandwidthLink(sc_core::sc_module_name name, const BandwidthLinkParams& params);

  void send(uint64_t bytes) override;
  bool busy() const override { return busy_; }
  void trace(vcd::Writer& writer) override;

  // Delivery time of a message of `bytes`, rounded to the SystemC time resolution.
  sc_core::sc_time transfer_time(uint64_t bytes) const;

 private:
  void arrive();

  const double latency_ns_;
  const double rate_gbps_;  // = bytes per ns
  bool busy_ = false;
  sc_core::sc_event arrival_;
  stats::Group stats_;
  stats::Counter& messages_;
  stats::Counter& bytes_;
  stats::Scalar& busy_time_;
  vcd::Signal busy_signal_;
};

}  // namespace ispsim::examples
