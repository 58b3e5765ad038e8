#include "tools/ispsim/sweep/metrics.h"

#include <sstream>
#include <stdexcept>

namespace ispsim::sweep {

Metrics summary_metrics(const systems::RunSummary& s) { return systems::metric_values(s); }

Metrics nand_stream_metrics(const std::string& stats_csv, const std::string& where) {
  std::istringstream in(stats_csv);
  std::string line;
  Metrics m;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    const size_t a = line.find(','), b = line.find(',', a + 1);
    if (b == std::string::npos) continue;
    const std::string name = line.substr(0, a);
    if (systems::is_known_metric(name)) m.emplace_back(name, std::stod(line.substr(a + 1, b - a - 1)));
  }
  if (m.size() != 3) throw std::runtime_error(where + ": NAND stream statistics incomplete");
  return m;
}

}  // namespace ispsim::sweep
