#include "platforms/systems/stats_output.h"

#include "common/error.h"
#include "models/core/stats.h"
#include "platforms/systems/metrics.h"

#include <sstream>
#include <stdexcept>

namespace ispsim::systems {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

AtomicFile* open_stats_file(OutputFiles& outputs, const std::string& path) {
  if (!path.empty() && !ends_with(path, ".json") && !ends_with(path, ".csv"))
    throw BadInput(path, "statistics file must end in .json or .csv");
  return outputs.open(path);
}

void write_stats(AtomicFile& file, const std::string& provenance) {
  if (!ends_with(file.path(), ".json")) return stats::Registry::global().write_csv(file.stream());
  if (provenance.empty()) return stats::Registry::global().write_json(file.stream());
  std::ostringstream body;
  stats::Registry::global().write_json(body);
  const std::string statistics = body.str();  // "{...}\n"
  file.stream() << "{\n  " << provenance << (statistics == "{}\n" ? "\n}\n" : "," + statistics.substr(1));
}

void capture_stats(RunSummary& summary) {
  for (const Metric& m : metric_list()) {
    if (m.stat.empty()) continue;
    const stats::Entry* e = stats::Registry::global().find(m.stat);
    if (!e) continue;
    const SiUnit si = si_unit(e->unit);
    if (si.unit != m.unit)
      throw std::logic_error("metric " + m.name + " is in " + m.unit + " but statistic " + m.stat + " is in " + e->unit);
    summary.stats[m.stat] = si.of(e->integral && e->read_integer ? static_cast<double>(e->read_integer()) : e->read());
  }
}

}  // namespace ispsim::systems
