#include "models/cim/unit.h"

#include <stdexcept>

namespace ispsim::cim {

Unit::Unit(sc_core::sc_module_name name, const sc_core::sc_time& latency, core::EnergyLedger* ledger)
    : sc_module(name),
      component_(this->name()),
      ledger_(ledger),
      server_("server", 0.0, latency),
      stats_(this->name()),
      energy_(stats_.scalar("energy", "pJ", "dynamic energy of the work this unit did")) {}

void Unit::submit(const sc_core::sc_time& setup, const sc_core::sc_time& occupancy, uint64_t bytes, double energy_pj,
                  Done done) {
  if (!(energy_pj >= 0)) throw std::logic_error(component_ + ": negative or NaN energy");
  const sc_core::sc_time total = setup + occupancy;
  const uint64_t start_ps = server_.free_at().value();
  server_.submit(total, bytes, std::move(done));
  energy_ += energy_pj;
  if (ledger_) ledger_->add(component_, energy_pj * 1e-12, start_ps, start_ps + total.value());
}

PcieResource::PcieResource(sc_core::sc_module_name name, link::PcieLink& link, link::Direction direction,
                           link::Purpose purpose)
    : sc_module(name),
      component_(link.name()),
      link_(link),
      direction_(direction),
      purpose_(purpose),
      setup_("dma_setup", 0.0, sc_core::SC_ZERO_TIME) {}

void PcieResource::submit(const sc_core::sc_time& setup, const sc_core::sc_time&, uint64_t bytes, double,
                          Done done) {
  setup_.submit(setup, 0, [this, bytes, done = std::move(done)]() mutable {
    link_.transfer(direction_, bytes, purpose_, std::move(done));
  });
}

}  // namespace ispsim::cim
