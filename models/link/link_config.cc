#include "models/link/link_config.h"

#include <cmath>

#include "common/error.h"
#include "schema/resolve.h"

namespace ispsim::link {

namespace {

sc_core::sc_time picoseconds(double ps) {
  return sc_core::sc_time::from_value(static_cast<sc_dt::uint64>(std::llround(ps)));
}

// Data bits per line bit of the generation's line code.
double encoding_efficiency(unsigned generation) { return generation <= 2 ? 8.0 / 10.0 : 128.0 / 130.0; }

}  // namespace

double lane_gigatransfers(unsigned generation, const std::string& where) {
  switch (generation) {
    case 1: return 2.5;
    case 2: return 5.0;
    case 3: return 8.0;
    case 4: return 16.0;
    case 5: return 32.0;
    default:
      throw BadInput(where, "pcie_generation = " + std::to_string(generation) + " is not a PCIe generation 1..5");
  }
}

double pcie_raw_bytes_per_ns(unsigned generation, unsigned lanes, const std::string& where) {
  return lane_gigatransfers(generation, where) * lanes * encoding_efficiency(generation) / 8.0;
}

LinkConfig LinkConfig::from_params(const schema::LinkParams& params, const std::string& where) {
  schema::require_resolved(params, where);
  const schema::LinkParams& p = params;

  LinkConfig c;
  c.generation = p.pcie_generation();
  c.lanes = p.lanes();
  c.raw_bytes_per_ns = pcie_raw_bytes_per_ns(c.generation, c.lanes, where);
  c.protocol_efficiency = p.protocol_efficiency();
  c.latency = picoseconds(p.latency_ns() * 1e3);
  c.energy_pj_per_bit = p.energy_pj_per_bit();
  c.static_power_w = p.static_power_w();
  c.interrupt_and_completion = picoseconds(p.interrupt_and_completion_ns() * 1e3);
  c.max_data_transfer_bytes = p.max_data_transfer_bytes();
  return c;
}

sc_core::sc_time LinkConfig::occupancy(uint64_t bytes) const {
  if (bytes == 0) return sc_core::SC_ZERO_TIME;
  // Same expression as core::Server::occupancy, so the closed form matches the simulation.
  const double ps = static_cast<double>(bytes) / effective_bytes_per_ns() * 1e3;
  if (ps >= 9.2e18)  // beyond 2^63 ps (106 days): a corrupt size, not a transfer
    throw BadInput("link", "a transfer of " + std::to_string(bytes) + " bytes exceeds 2^63 ps on the link");
  return picoseconds(ps);
}

sc_core::sc_time LinkConfig::transfer_time(uint64_t bytes) const { return occupancy(bytes) + latency; }

double LinkConfig::energy_pj(uint64_t bytes) const {
  const double line_bits = occupancy(bytes).to_seconds() * 1e9 * lane_gigatransfers(generation) * lanes;
  return line_bits * energy_pj_per_bit;
}

}  // namespace ispsim::link
