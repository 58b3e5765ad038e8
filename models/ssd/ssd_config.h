// Resolved parameters of the SSD controller (schema/ssd.proto): schema
// defaults applied, ranges checked, times as sc_time, rates in bytes per ns.
#pragma once

#include <string>
#include <systemc>

#include "models/isp/attention_engine.h"
#include "schema/ssd.pb.h"
#include "schema/resolve.h"

namespace ispsim::ssd {

struct SsdConfig {
  // The two switches of MemLLM's ablation ladder, as the ISP's attention engine takes them.
  isp::Organization organization = isp::Organization::PER_CHANNEL;
  isp::Reduction reduction = isp::Reduction::GLOBAL_SRAM;
  double dram_bytes_per_ns = 0;  // = GB/s
  sc_core::sc_time dram_latency;
  double dram_joules_per_byte = 0;  // pJ/bit x 8 x 1e-12
  double dram_static_w = 0;
  double bus_bytes_per_ns = 0;
  sc_core::sc_time bus_latency;
  double bus_joules_per_byte = 0;
  sc_core::sc_time firmware_per_command;
  double controller_static_w = 0;
  double controller_active_w = 0;
  bool stage_host_reads_in_dram = false;
  bool aggregated_streams = false;  // stream_model = AGGREGATED
  double in_flash_read_speedup = 1;  // in-flash GEMV sensing: tR / this

  // `params` resolved (schema/resolve.h); unit conversions only. An unresolved
  // message is a programming error (std::logic_error naming `where`).
  static SsdConfig from_params(const schema::SsdParams& params, const std::string& where = "ssd");
};

}  // namespace ispsim::ssd
