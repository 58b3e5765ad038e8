#include "models/cim/unit.h"

#include <cmath>
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
  record_energy(energy_pj * 1e-12, start_ps, start_ps + total.value());
}

void Unit::record_energy(double joules, uint64_t start_ps, uint64_t end_ps) {
  if (!ledger_) return;
  const double span = static_cast<double>(end_ps - start_ps), open_span = static_cast<double>(pending_.end_ps - pending_.start_ps);
  // Same power: joules / span equal (cross-multiplied; both zero-length at one instant also merge).
  const bool same_power = std::abs(joules * open_span - pending_.joules * span) <= 1e-9 * (joules * open_span + 1e-30);
  if (pending_.open && start_ps == pending_.end_ps && same_power && (span > 0) == (open_span > 0)) {
    pending_.joules += joules;
    pending_.end_ps = end_ps;
    if (++pending_.merged >= kMaxMergedRecords) flush_energy();
    return;
  }
  flush_energy();
  pending_ = {joules, start_ps, end_ps, ledger_->open(start_ps), 1, true};
}

void Unit::flush_energy() {
  if (!pending_.open || !ledger_) return;
  ledger_->add(component_, pending_.joules, pending_.start_ps, pending_.end_ps);
  ledger_->close(pending_.ticket);
  pending_.open = false;
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
