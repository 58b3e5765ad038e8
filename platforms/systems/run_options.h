// What `ispsim run` asks of a simulation, independent of the system simulated.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ispsim::systems {

struct RunOptions {
  std::string stats_path;                 // .json or .csv; empty = none
  std::string vcd_path;                   // empty = no waveform
  std::vector<std::string> vcd_filters;   // glob patterns on signal names; empty = all
  uint64_t vcd_begin_ps = 0;
  uint64_t vcd_end_ps = UINT64_MAX;
};

// Parses a simulated time such as "200us", "1.5 ms", "0" into picoseconds.
// Accepted units: ps, ns, us, ms, s. Throws BadInput(where, ...).
uint64_t parse_time_ps(const std::string& text, const std::string& where);

// Parses "BEGIN:END" (either side may be empty: ":5us", "1us:") into `opts`.
void parse_time_window(const std::string& text, RunOptions& opts);

}  // namespace ispsim::systems
