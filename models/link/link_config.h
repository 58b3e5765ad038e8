// Resolved parameters of the PCIe link and the NVMe front end (models/link):
// schema defaults applied, ranges checked, rates and times ready for the
// SystemC modules. See models/link/README.md for the derivation of each default.
#pragma once

#include <cstdint>
#include <string>
#include <systemc>

#include "schema/link.pb.h"
#include "schema/resolve.h"

namespace ispsim::link {

// Raw data rate of a PCIe link after line encoding, in bytes per nanosecond
// (= GB/s): Gen1/2 use 8b/10b at 2.5/5 GT/s per lane, Gen3/4/5 128b/130b at
// 8/16/32 GT/s. Gen4 x4: 16 * 4 * 128/130 / 8 = 7.877 GB/s. Throws BadInput
// for a generation outside 1..5.
double pcie_raw_bytes_per_ns(unsigned generation, unsigned lanes, const std::string& where = "link");
// Line rate of one lane in GT/s (= line bits per ns per lane).
double lane_gigatransfers(unsigned generation, const std::string& where = "link");

struct LinkConfig {
  unsigned generation = 0;
  unsigned lanes = 0;
  double raw_bytes_per_ns = 0;         // after line encoding, before TLP/DLLP overhead
  double protocol_efficiency = 0;      // payload share of the encoded bandwidth
  sc_core::sc_time latency;            // one-way, per transfer
  double energy_pj_per_bit = 0;        // per line bit (see energy_pj())
  double static_power_w = 0;           // whole link, both directions
  sc_core::sc_time interrupt_and_completion;  // host-side completion handling per NVMe command
  uint64_t max_data_transfer_bytes = 0;       // MDTS of conventional I/O commands

  // `params` resolved (schema/resolve.h); unit conversions only. An unresolved
  // message is a programming error (std::logic_error naming `where`).
  static LinkConfig from_params(const schema::LinkParams& params, const std::string& where = "link");

  // Payload rate of one direction: raw_bytes_per_ns * protocol_efficiency (GB/s).
  double effective_bytes_per_ns() const { return raw_bytes_per_ns * protocol_efficiency; }
  // Time one direction is occupied by `bytes` of payload: bytes / effective
  // rate, rounded to the nearest picosecond (what core::Server computes).
  sc_core::sc_time occupancy(uint64_t bytes) const;
  // Closed form of one transfer on an idle direction: occupancy(bytes) + latency.
  sc_core::sc_time transfer_time(uint64_t bytes) const;
  // Dynamic energy of moving `bytes` of payload, in picojoules: the line bits
  // sent while the direction is occupied (occupancy x lanes x GT/s, so TLP/DLLP
  // overhead and line encoding are paid for) x energy_pj_per_bit.
  double energy_pj(uint64_t bytes) const;
};

}  // namespace ispsim::link
