#include "models/core/sim_time.h"

#include <limits>
#include <systemc>

#include "common/error.h"

namespace ispsim::core {
namespace {

bool overflowed = false;

}  // namespace

uint64_t add_ps(uint64_t a, uint64_t b) {
  if (a <= std::numeric_limits<uint64_t>::max() - b) return a + b;
  if (!overflowed) {
    overflowed = true;
    // Quietly: the refusal after sc_start() is the one line the user sees.
    sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
    sc_core::sc_stop();
  }
  return std::numeric_limits<uint64_t>::max();
}

void refuse_if_time_overflowed(const std::string& input) {
  if (overflowed)
    throw BadInput(input, "its simulated time passes 2^64 ps (about 213 days), the limit of the simulator's clock; "
                          "simulate a shorter workload");
}

}  // namespace ispsim::core
