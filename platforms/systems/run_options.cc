#include "platforms/systems/run_options.h"

#include <cmath>
#include <cstdlib>

#include "common/error.h"

namespace ispsim::systems {

uint64_t parse_time_ps(const std::string& text, const std::string& where) {
  const char* begin = text.c_str();
  char* end = nullptr;
  const double value = std::strtod(begin, &end);
  if (end == begin || !std::isfinite(value) || value < 0)
    throw BadInput(where, "'" + text + "' is not a non-negative time such as 200us");
  std::string unit(end);
  while (!unit.empty() && unit.front() == ' ') unit.erase(0, 1);
  double ps_per_unit = 0;
  if (unit == "ps") ps_per_unit = 1;
  else if (unit == "ns") ps_per_unit = 1e3;
  else if (unit == "us") ps_per_unit = 1e6;
  else if (unit == "ms") ps_per_unit = 1e9;
  else if (unit == "s") ps_per_unit = 1e12;
  else if (unit.empty() && value == 0) ps_per_unit = 1;
  else throw BadInput(where, "'" + text + "' needs a unit: ps, ns, us, ms or s");
  const double ps = value * ps_per_unit;
  if (ps >= 1.8e19) throw BadInput(where, "'" + text + "' is too large");
  return static_cast<uint64_t>(std::llround(ps));
}

void parse_time_window(const std::string& text, RunOptions& opts) {
  const std::string where = "--vcd-window";
  const auto colon = text.find(':');
  if (colon == std::string::npos) throw BadInput(where, "'" + text + "' is not BEGIN:END, e.g. 0us:200us");
  const std::string begin = text.substr(0, colon), end = text.substr(colon + 1);
  opts.vcd_begin_ps = begin.empty() ? 0 : parse_time_ps(begin, where);
  opts.vcd_end_ps = end.empty() ? UINT64_MAX : parse_time_ps(end, where);
  if (opts.vcd_begin_ps > opts.vcd_end_ps) throw BadInput(where, "'" + text + "' begins after it ends");
}

}  // namespace ispsim::systems
