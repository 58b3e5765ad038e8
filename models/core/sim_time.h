// The simulated clock's limit: SystemC counts picoseconds in 64 bits, so a run
// ends at 2^64 ps (about 213 days of simulated time). Device models add their
// times here; a sum past the limit stops the simulation instead of wrapping
// around, and the system that ran it refuses the workload as too long (bad
// input, exit 2) rather than failing on a time that went backwards.
#pragma once

#include <cstdint>
#include <string>

namespace ispsim::core {

// a + b in picoseconds; past 2^64 - 1 it records the overflow, asks SystemC to
// stop, and returns the largest time.
uint64_t add_ps(uint64_t a, uint64_t b);
// After sc_start(): BadInput naming `input` (the workload) if the run passed the limit.
void refuse_if_time_overflowed(const std::string& input);

}  // namespace ispsim::core
