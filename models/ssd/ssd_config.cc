#include "models/ssd/ssd_config.h"

#include <cmath>

#include "schema/resolve.h"

namespace ispsim::ssd {

namespace {

// Rounded to the nearest picosecond (SystemC's resolution) so tests can write the same formula.
sc_core::sc_time nanoseconds(double ns) {
  return sc_core::sc_time::from_value(static_cast<sc_dt::uint64>(std::llround(ns * 1e3)));
}

double joules_per_byte(double pj_per_bit) { return pj_per_bit * 8 * 1e-12; }

}  // namespace

SsdConfig SsdConfig::from_params(const schema::SsdParams& params, const std::string& where) {
  schema::require_resolved(params, where);
  const schema::SsdParams& p = params;

  SsdConfig c;
  c.organization = p.organization() == schema::SsdParams::CENTRALIZED ? isp::Organization::CENTRALIZED
                                                                        : isp::Organization::PER_CHANNEL;
  c.reduction = p.reduction() == schema::SsdParams::CONTROLLER_DRAM ? isp::Reduction::CONTROLLER_DRAM
                                                                     : isp::Reduction::GLOBAL_SRAM;
  c.dram_bytes_per_ns = p.dram_bandwidth_gbps();
  c.dram_latency = nanoseconds(p.dram_latency_ns());
  c.dram_joules_per_byte = joules_per_byte(p.dram_pj_per_bit());
  c.dram_static_w = p.dram_static_w();
  c.bus_bytes_per_ns = p.bus_bandwidth_gbps();
  c.bus_latency = nanoseconds(p.bus_latency_ns());
  c.bus_joules_per_byte = joules_per_byte(p.bus_pj_per_bit());
  c.firmware_per_command = nanoseconds(p.firmware_ns_per_command());
  c.controller_static_w = p.controller_static_w();
  c.controller_active_w = p.controller_active_w();
  c.stage_host_reads_in_dram = p.stage_host_reads_in_dram();
  c.aggregated_streams = p.stream_model() == schema::SsdParams::AGGREGATED;
  c.in_flash_read_speedup = p.in_flash_read_speedup();
  return c;
}

}  // namespace ispsim::ssd
