// Resolved parameters of the per-channel accelerator (IspParams) and of the
// Flash-Coordinator (FlashCoordinatorParams): schema defaults applied, ranges
// checked (BadInput naming the parameter), derived sizes computed once.
#pragma once

#include <cstdint>
#include <string>

#include "platforms/schema/flash_coordinator.pb.h"
#include "platforms/schema/isp.pb.h"

namespace ispsim::isp {

enum class ModePolicy { kLowestEnergyDelay, kFewestCycles, kAlwaysBroadside, kAlwaysCascaded };

struct IspConfig {
  uint32_t pes = 128;
  double clock_ghz = 1.0;
  uint32_t macs_per_pe_per_cycle = 1;
  uint32_t scratchpad_bytes = 73728;
  uint32_t precomputed_page_buffers = 2;
  uint32_t out_of_place_page_buffers = 2;
  double stream_filter_tokens_per_cycle = 1.0;
  uint32_t exp_lut_latency_cycles = 4;
  ModePolicy mode_policy = ModePolicy::kLowestEnergyDelay;
  double mac_pj = 1.5;
  double vector_op_pj = 0.4;
  double exp_pj = 2.0;
  double scratchpad_pj_per_byte = 2.5;
  double static_power_w = 0.1;

  // Picoseconds of `cycles` clock cycles, rounded to the nearest picosecond.
  uint64_t cycles_to_ps(uint64_t cycles) const;
  // Q tile region = scratchpad - (precomputed + out-of-place buffers) x page_bytes;
  // throws BadInput(where, ...) when the buffers do not fit.
  uint64_t q_tile_bytes(uint32_t page_bytes, const std::string& where = "isp") const;

  static IspConfig from_params(const schema::IspParams& params, const std::string& where = "isp");
};

struct CoordinatorConfig {
  uint32_t global_sram_bytes = 1048576;
  uint32_t q_buffer_bytes = 524288;
  double clock_ghz = 1.0;
  uint32_t sram_bytes_per_cycle = 256;
  uint32_t lse_lanes = 128;
  uint32_t lse_pipeline_cycles = 8;
  double lse_pj_per_element = 8.3;
  double sram_pj_per_byte = 12.5;
  double static_power_w = 0.3;

  uint64_t o_buffer_bytes() const { return uint64_t(global_sram_bytes) - q_buffer_bytes; }
  uint64_t cycles_to_ps(uint64_t cycles) const;

  // Throws BadInput when q_buffer_bytes leaves no O buffer.
  static CoordinatorConfig from_params(const schema::FlashCoordinatorParams& params,
                                       const std::string& where = "flash_coordinator");
};

const char* to_string(ModePolicy policy);

}  // namespace ispsim::isp
