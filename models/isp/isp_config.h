// Resolved parameters of the per-channel accelerator (IspParams) and of the
// Flash-Coordinator (FlashCoordinatorParams): schema defaults applied, ranges
// checked (BadInput naming the parameter), derived sizes computed once.
#pragma once

#include <cstdint>
#include <string>

#include "schema/flash_coordinator.pb.h"
#include "schema/isp.pb.h"
#include "schema/resolve.h"

namespace ispsim::isp {

enum class ModePolicy { kLowestEnergyDelay, kFewestCycles, kAlwaysBroadside, kAlwaysCascaded };

// The defaults live in the schema only (schema/isp.proto,
// flash_coordinator.proto): a config is made by from_params() or defaults(),
// never default-constructed with numbers repeated here.
struct IspConfig {
  uint32_t pes;
  double clock_ghz;
  uint32_t macs_per_pe_per_cycle;
  uint32_t scratchpad_bytes;
  uint32_t precomputed_page_buffers;
  uint32_t out_of_place_page_buffers;
  double stream_filter_tokens_per_cycle;
  uint32_t exp_lut_latency_cycles;
  ModePolicy mode_policy;
  double mac_pj;
  double vector_op_pj;
  double exp_pj;
  double scratchpad_pj_per_byte;
  double static_power_w;

  // Picoseconds of `cycles` clock cycles, rounded to the nearest picosecond.
  uint64_t cycles_to_ps(uint64_t cycles) const;
  // Q tile region = scratchpad - (precomputed + out-of-place buffers) x page_bytes;
  // throws BadInput(where, ...) when the buffers do not fit.
  uint64_t q_tile_bytes(uint32_t page_bytes, const std::string& where = "isp") const;

  // `params` resolved (schema/resolve.h); unit conversions only. An unresolved
  // message is a programming error (std::logic_error naming `where`).
  static IspConfig from_params(const schema::IspParams& params, const std::string& where = "isp");
  // The schema defaults (from_params of the resolved empty message).
  static IspConfig defaults();

 private:
  IspConfig() = default;
};

struct CoordinatorConfig {
  uint32_t global_sram_bytes;
  uint32_t q_buffer_bytes;
  double clock_ghz;
  uint32_t sram_bytes_per_cycle;
  uint32_t lse_lanes;
  uint32_t lse_pipeline_cycles;
  double lse_pj_per_element;
  double sram_pj_per_byte;
  double static_power_w;

  uint64_t o_buffer_bytes() const { return uint64_t(global_sram_bytes) - q_buffer_bytes; }
  uint64_t cycles_to_ps(uint64_t cycles) const;

  // `params` resolved (schema/resolve.h; q_buffer_bytes < global_sram_bytes is
  // one of the schema's constraints); unit conversions only.
  static CoordinatorConfig from_params(const schema::FlashCoordinatorParams& params,
                                       const std::string& where = "flash_coordinator");
  // The schema defaults (from_params of the resolved empty message).
  static CoordinatorConfig defaults();

 private:
  CoordinatorConfig() = default;
};

const char* to_string(ModePolicy policy);

}  // namespace ispsim::isp
