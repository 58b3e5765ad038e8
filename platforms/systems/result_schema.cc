#include "platforms/systems/result_schema.h"

#include <boost/json.hpp>

#include <cstdlib>
#include <stdexcept>

#include "common/error.h"
#include "common/input_file.h"
#include "common/sha1.h"
#include "platforms/systems/metrics.h"
#include "platforms/systems/report_cells.h"

namespace ispsim::systems {

void write_provenance_json(std::ostream& os, const Provenance& p) {
  os << "\"schema_version\": " << kResultSchemaVersion << ",\n  \"provenance\": {\"ispsim_version\": "
     << json_quoted(p.ispsim_version) << ", \"command_line\": " << json_quoted(p.command_line)
     << ",\n    \"trace\": " << json_quoted(p.trace) << ", \"trace_sha1\": " << json_quoted(p.trace_sha1)
     << ", \"trace_seed\": " << (p.trace_seed.empty() ? "null" : p.trace_seed) << "}";
}

const char* provenance_csv_header() {
  return "schema_version,ispsim_version,trace_sha1,trace_seed,configuration_sha1";
}

std::string provenance_csv_cells(const Provenance& p, const std::string& configuration) {
  return std::to_string(kResultSchemaVersion) + "," + csv_cell(p.ispsim_version) + "," + p.trace_sha1 + "," +
         p.trace_seed + "," + text_sha1(configuration);
}

std::string shell_quoted(const std::string& argument) {
  if (!argument.empty() && argument.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                      "0123456789_./=:,+-") == std::string::npos)
    return argument;
  std::string out = "'";
  for (char c : argument) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

namespace {

namespace json = boost::json;

RecordedRun recorded_run(const json::object& r) {
  RecordedRun run;
  run.platform = json::value_to<std::string>(r.at("platform"));
  run.status = json::value_to<std::string>(r.at("status"));
  run.configuration = json::value_to<std::string>(r.at("configuration"));
  run.settings = json::value_to<std::string>(r.at("settings"));
  return run;
}

// One run's metrics from `at`, just inside its "metrics" object: the writer's
// layout (report.cc), one flat object of "name": number pairs whose names need
// no escapes. Moves `at` past them.
MetricValues metrics_at(const std::string& text, size_t& at) {
  MetricValues values;
  while (at < text.size() && text[at] == '"') {
    const size_t name_end = text.find('"', at + 1);
    if (name_end == std::string::npos || text.compare(name_end + 1, 2, ": ") != 0)
      throw std::runtime_error("a metric not written as \"name\": number");
    const char* begin = text.c_str() + name_end + 3;
    char* end = nullptr;
    const double v = std::strtod(begin, &end);
    if (end == begin) throw std::runtime_error("metric " + text.substr(at, name_end + 1 - at) + " is not a number");
    values.emplace_back(text.substr(at + 1, name_end - at - 1), v);
    at = static_cast<size_t>(end - text.c_str());
    if (text.compare(at, 2, ", ") == 0) at += 2;
  }
  return values;
}

std::vector<MetricValues> recorded_metrics(const std::string& text, size_t runs) {
  std::vector<MetricValues> out;
  const std::string key = "\"metrics\": {";
  for (size_t at = text.find(key); at != std::string::npos && out.size() < runs; at = text.find(key, at)) {
    at += key.size();
    out.push_back(metrics_at(text, at));
  }
  if (out.size() != runs) throw std::runtime_error("a run without metrics");
  return out;
}

}  // namespace

RecordedResult read_result_file(const std::string& path) {
  try {
    const std::string text = read_input_file(path);
    const json::object o = json::parse(text).as_object();
    const int64_t version = o.at("schema_version").to_number<int64_t>();
    if (version != kResultSchemaVersion)
      throw BadInput(path, "result schema version " + std::to_string(version) + ", this ispsim reads " +
                               std::to_string(kResultSchemaVersion));
    const json::object& p = o.at("provenance").as_object();
    RecordedResult result{json::value_to<std::string>(p.at("ispsim_version")),
                          json::value_to<std::string>(p.at("trace")), json::value_to<std::string>(p.at("trace_sha1")),
                          {}};
    for (const json::value& r : o.at("runs").as_array()) result.runs.push_back(recorded_run(r.as_object()));
    const std::vector<MetricValues> metrics = recorded_metrics(text, result.runs.size());
    for (size_t i = 0; i < metrics.size(); ++i) result.runs[i].metrics = metrics[i];
    return result;
  } catch (const BadInput&) {
    throw;
  } catch (const std::exception& e) {
    throw BadInput(path, std::string("not a result file with provenance (run or compare --format json): ") + e.what());
  }
}

}  // namespace ispsim::systems
