#include "models/isp/isp_config.h"

#include <cmath>

#include "common/error.h"
#include "schema/resolve.h"

namespace ispsim::isp {

namespace {

uint64_t cycles_at(uint64_t cycles, double clock_ghz) {
  return static_cast<uint64_t>(std::llround(double(cycles) * 1e3 / clock_ghz));
}

ModePolicy policy_of(schema::IspParams::ModePolicy p) {
  switch (p) {
    case schema::IspParams::FEWEST_CYCLES: return ModePolicy::kFewestCycles;
    case schema::IspParams::ALWAYS_BROADSIDE: return ModePolicy::kAlwaysBroadside;
    case schema::IspParams::ALWAYS_CASCADED: return ModePolicy::kAlwaysCascaded;
    default: return ModePolicy::kLowestEnergyDelay;
  }
}

}  // namespace

uint64_t IspConfig::cycles_to_ps(uint64_t cycles) const { return cycles_at(cycles, clock_ghz); }

uint64_t IspConfig::q_tile_bytes(uint32_t page_bytes, const std::string& where) const {
  const uint64_t buffers = uint64_t(precomputed_page_buffers) + out_of_place_page_buffers;
  const uint64_t used = buffers * page_bytes;
  if (used >= scratchpad_bytes) {
    throw BadInput(where, "scratchpad_bytes = " + std::to_string(scratchpad_bytes) + " bytes holds no Q tile next to " +
                              std::to_string(buffers) + " page buffers of " + std::to_string(page_bytes) + " bytes");
  }
  return scratchpad_bytes - used;
}

IspConfig IspConfig::from_params(const schema::IspParams& params, const std::string& where) {
  schema::require_resolved(params, where);
  const schema::IspParams& p = params;
  IspConfig c;
  c.pes = p.pes();
  c.clock_ghz = p.clock_ghz();
  c.macs_per_pe_per_cycle = p.macs_per_pe_per_cycle();
  c.scratchpad_bytes = p.scratchpad_bytes();
  c.precomputed_page_buffers = p.precomputed_page_buffers();
  c.out_of_place_page_buffers = p.out_of_place_page_buffers();
  c.stream_filter_tokens_per_cycle = p.stream_filter_tokens_per_cycle();
  c.exp_lut_latency_cycles = p.exp_lut_latency_cycles();
  c.mode_policy = policy_of(p.mode_policy());
  c.mac_pj = p.mac_pj();
  c.vector_op_pj = p.vector_op_pj();
  c.exp_pj = p.exp_pj();
  c.scratchpad_pj_per_byte = p.scratchpad_pj_per_byte();
  c.static_power_w = p.static_power_w();
  return c;
}

IspConfig IspConfig::defaults() {
  static const IspConfig resolved = from_params(schema::resolved(schema::IspParams(), "isp"));
  return resolved;
}

uint64_t CoordinatorConfig::cycles_to_ps(uint64_t cycles) const { return cycles_at(cycles, clock_ghz); }

CoordinatorConfig CoordinatorConfig::defaults() {
  static const CoordinatorConfig resolved = from_params(schema::resolved(schema::FlashCoordinatorParams(), "flash_coordinator"));
  return resolved;
}

CoordinatorConfig CoordinatorConfig::from_params(const schema::FlashCoordinatorParams& params,
                                                 const std::string& where) {
  schema::require_resolved(params, where);
  const schema::FlashCoordinatorParams& p = params;
  CoordinatorConfig c;
  c.global_sram_bytes = p.global_sram_bytes();
  c.q_buffer_bytes = p.q_buffer_bytes();
  c.clock_ghz = p.clock_ghz();
  c.sram_bytes_per_cycle = p.sram_bytes_per_cycle();
  c.lse_lanes = p.lse_lanes();
  c.lse_pipeline_cycles = p.lse_pipeline_cycles();
  c.lse_pj_per_element = p.lse_pj_per_element();
  c.sram_pj_per_byte = p.sram_pj_per_byte();
  c.static_power_w = p.static_power_w();
  return c;
}

const char* to_string(ModePolicy policy) {
  switch (policy) {
    case ModePolicy::kFewestCycles: return "FEWEST_CYCLES";
    case ModePolicy::kAlwaysBroadside: return "ALWAYS_BROADSIDE";
    case ModePolicy::kAlwaysCascaded: return "ALWAYS_CASCADED";
    default: return "LOWEST_ENERGY_DELAY";
  }
}

}  // namespace ispsim::isp
