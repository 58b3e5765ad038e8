// Energy of the NAND flash: array sensing (read), programming, channel I/O and
// the static (idle) power of the dies. Parameters are the energy fields of
// NandParams (platforms/schema/nand.proto), whose sources are given there.
//
// Simplified model: a page read or program costs a fixed energy per page
// (independent of the data and of how many planes a multi-plane command
// involves), channel transfers cost a fixed energy per bit moved in either
// direction (NAND I/O plus controller PHY), and each die draws its idle power
// for the whole simulated time (busy dies' extra power is in the per-page
// energies). Erase is not modelled: the simulated workloads never erase.
#pragma once

#include <cstdint>
#include <string>

#include "platforms/schema/nand.pb.h"

namespace ispsim::nand {

struct NandEnergy {
  double read_j_per_page = 0;      // sensing one page (tR)
  double program_j_per_page = 0;   // programming one page (tPROG)
  double io_j_per_byte = 0;        // channel transfer, either direction
  double idle_w_per_die = 0;       // static power of one die
  uint64_t dies = 0;               // channels * dies_per_channel

  // Unset fields take their schema defaults; out-of-range values throw
  // BadInput(where, ...).
  static NandEnergy from_params(const schema::NandParams& params, const std::string& where = "nand");

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
