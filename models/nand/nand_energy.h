// Energy of the NAND flash: array sensing (read), programming, channel I/O and
// the static (idle) power of the dies. Parameters are the energy fields of
// NandParams (schema/nand.proto), whose sources are given there.
//
// Simplified model, from datasheet quantities:
//   read of one page     = vcc_v x read_current_ma x tR
//   program of one page  = vcc_v x program_current_ma x tPROG
//   channel transfer     = io_energy_pj_per_bit x 8 per byte, either direction
//   static power per die = vcc_v x standby_current_ua, for the whole run
// Every page costs the same regardless of its data, and a multi-plane read or
// program is charged per page (as if each page had its own tR/tPROG: an upper
// bound, since planes share the die's pumps and periphery). The busy current
// replaces nothing: the standby power is added on top. Erase is not modelled:
// the simulated workloads never erase.
#pragma once

#include <cstdint>
#include <string>

#include "models/nand/flash_config.h"
#include "schema/nand.pb.h"
#include "schema/resolve.h"

namespace ispsim::nand {

struct NandEnergy {
  double read_j_per_page = 0;      // sensing one page: vcc x read current x tR
  double program_j_per_page = 0;   // programming one page: vcc x program current x tPROG
  double io_j_per_byte = 0;        // channel transfer, either direction
  double idle_w_per_die = 0;       // static power of one die
  uint64_t dies = 0;               // channels * dies_per_channel

  // `params` resolved (schema/resolve.h); unit conversions only. An unresolved
  // message is a programming error (std::logic_error naming `where`).
  static NandEnergy from_params(const schema::NandParams& params, const std::string& where = "nand");
  // The same with tR and tPROG as the timing model already converted them (`timing`
  // from the same `params`): the parameters are converted once per run.
  static NandEnergy from_params(const schema::NandParams& params, const FlashConfig& timing);

  // Joules to sense `pages` pages.
  double read_joules(uint64_t pages) const { return read_j_per_page * static_cast<double>(pages); }
  // Joules to program `pages` pages.
  double program_joules(uint64_t pages) const { return program_j_per_page * static_cast<double>(pages); }
  // Joules to move `bytes` over the channels (either direction).
  double transfer_joules(uint64_t bytes) const { return io_j_per_byte * static_cast<double>(bytes); }
  // Static power of all dies, in watts.
  double static_watts() const { return idle_w_per_die * static_cast<double>(dies); }
};

}  // namespace ispsim::nand
