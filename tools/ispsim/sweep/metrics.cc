#include "tools/ispsim/sweep/metrics.h"

#include <map>
#include <sstream>
#include <stdexcept>

namespace ispsim::sweep {

Metrics summary_metrics(const systems::RunSummary& s) { return systems::metric_values(s); }

Metrics nand_stream_metrics(const std::string& stats_csv, const std::string& where) {
  std::istringstream in(stats_csv);
  std::string line;
  std::map<std::string, double> stats;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    const size_t a = line.find(','), b = line.find(',', a + 1), c = line.find(',', b + 1);
    if (a == std::string::npos || b == std::string::npos || c == std::string::npos) continue;
    stats[line.substr(0, a)] = systems::si_unit(line.substr(b + 1, c - b - 1)).of(std::stod(line.substr(a + 1, b - a - 1)));
  }
  Metrics m = systems::statistic_values(stats);
  if (m.size() != 3) throw std::runtime_error(where + ": NAND stream statistics incomplete");
  return m;
}

}  // namespace ispsim::sweep
