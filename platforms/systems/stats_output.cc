#include "platforms/systems/stats_output.h"

#include "common/error.h"
#include "models/core/stats.h"
#include "platforms/systems/metrics.h"
#include "platforms/systems/report_cells.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace ispsim::systems {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}


void write_json(std::ostream& os, const std::optional<StatsProvenance>& provenance, const MetricValues& metrics) {
  std::vector<std::string> members;
  if (provenance) {
    std::ostringstream p;
    write_provenance_json(p, provenance->provenance);
    p << ",\n  \"configuration\": " << json_quoted(provenance->configuration);
    members.push_back(p.str());
  }
  if (!metrics.empty()) {
    std::string m = "\"metrics\": {";
    for (size_t i = 0; i < metrics.size(); ++i)
      m += (i ? ", " : "") + json_quoted(metrics[i].first) + ": " + shortest_number(metrics[i].second);
    members.push_back(m + "}");
  }
  std::ostringstream body;
  stats::Registry::global().write_json(body, {true, {}});
  const std::string statistics = body.str();  // "{\n  ...\n}\n", or "{}\n"
  if (statistics != "{}\n") members.push_back(statistics.substr(4, statistics.size() - 7));
  if (members.empty()) {
    os << "{}\n";
    return;
  }
  os << "{";
  for (size_t i = 0; i < members.size(); ++i) os << (i ? ",\n  " : "\n  ") << members[i];
  os << "\n}\n";
}

void write_csv(std::ostream& os, const std::optional<StatsProvenance>& provenance, const MetricValues& metrics) {
  const std::string tail = provenance ? "," + provenance_csv_cells(provenance->provenance, provenance->configuration) : "";
  os << "name,value,unit,description" << (provenance ? std::string(",") + provenance_csv_header() : "") << '\n';
  for (const auto& [name, v] : metrics) {
    const Metric* m = find_metric(name);
    os << csv_cell(name) << ',' << shortest_number(v) << ',' << csv_cell(m->unit) << ',' << csv_cell(m->description)
       << tail << '\n';
  }
  for (const stats::Entry* e : stats::Registry::global().sorted()) {
    os << csv_cell(e->name) << ',' << csv_cell(stats::format_value(*e, false, true)) << ','
       << csv_cell(si_unit(e->unit).unit) << ',' << csv_cell(e->desc) << tail << '\n';
  }
}

}  // namespace

AtomicFile* open_stats_file(OutputFiles& outputs, const std::string& path) {
  if (!path.empty() && !ends_with(path, ".json") && !ends_with(path, ".csv"))
    throw BadInput(path, "statistics file must end in .json or .csv");
  return outputs.open(path);
}

void write_stats(AtomicFile& file, const std::optional<StatsProvenance>& provenance, const RunSummary* summary) {
  const MetricValues metrics = summary ? metric_values(*summary) : statistic_values(metric_statistics());
  if (ends_with(file.path(), ".json"))
    write_json(file.stream(), provenance, metrics);
  else
    write_csv(file.stream(), provenance, metrics);
}

namespace {

Statistic captured(const stats::Entry& e) {
  const double v = e.integral && e.read_integer ? static_cast<double>(e.read_integer()) : e.read();
  return Statistic(v, e.unit, si_unit(e.unit));
}

// The registry statistics the metric list and the tables read, in their declared units.
std::map<std::string, Statistic> captured_statistics() {
  std::map<std::string, Statistic> out;
  for (const stats::Entry* e : stats::Registry::global().sorted()) {
    for (const Metric& m : metric_list()) {
      if (!reads_statistic(m, e->name)) continue;
      if (si_unit(e->unit).unit != m.unit)
        throw std::logic_error("metric " + m.name + " is in " + m.unit + " but statistic " + e->name + " is in " +
                               e->unit);
      out[e->name] = captured(*e);
    }
    const std::vector<std::string>& tables = table_statistics();
    if (std::find(tables.begin(), tables.end(), e->name) != tables.end()) out[e->name] = captured(*e);
  }
  return out;
}

}  // namespace

std::map<std::string, double> metric_statistics() {
  std::map<std::string, double> out;
  for (const auto& [name, captured] : captured_statistics()) out[name] = captured.si();
  return out;
}

void capture_stats(RunSummary& summary) { summary.stats = captured_statistics(); }

}  // namespace ispsim::systems
