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

std::string text_of(const json::object& o, const char* key) { return json::value_to<std::string>(o.at(key)); }

// A run of `run` or `compare`: its trace is the result's.
RecordedRun compared_run(const json::object& r, const json::object& provenance) {
  return {text_of(r, "platform"), text_of(r, "status"), text_of(r, "configuration"), text_of(r, "settings"),
          text_of(provenance, "trace"), text_of(provenance, "trace_sha1"), {}};
}

// A run of a sweep (results.json or runs/<id>.json): its own trace.
RecordedRun swept_run(const json::object& r) {
  if (!r.contains("settings")) throw std::runtime_error("a sweep run without settings (made by an older ispsim)");
  return {text_of(r, "id") + " " + text_of(r, "system"), text_of(r, "status"), text_of(r, "configuration"),
          text_of(r, "settings"), text_of(r, "trace"), text_of(r, "trace_sha1"), {}};
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

namespace {

// A sweep's runs/<id>.json: one run, its metrics as exact strings.
RecordedResult sweep_run_file(const json::object& o) {
  RecordedResult result{text_of(o, "version"), {swept_run(o)}, {}, true};
  for (const auto& kv : o.at("metrics").as_object())
    result.runs[0].metrics.emplace_back(kv.key(), exact_number(std::string(kv.value().as_string())));
  return result;
}

// `run`, `compare` or a sweep's results.json, its metrics read from the text.
RecordedResult versioned_result(const json::object& o, const std::string& text, const std::string& path) {
  const int64_t version = o.at("schema_version").to_number<int64_t>();
  if (version != kResultSchemaVersion)
    throw BadInput(path, "result schema version " + std::to_string(version) + ", this ispsim reads " +
                             std::to_string(kResultSchemaVersion));
  const json::object& p = o.at("provenance").as_object();
  const bool sweep = o.contains("sweep");
  RecordedResult result{text_of(p, "ispsim_version"), {}, {}, sweep};
  for (const json::value& r : o.at("runs").as_array())
    result.runs.push_back(sweep ? swept_run(r.as_object()) : compared_run(r.as_object(), p));
  if (sweep)
    for (const json::value& m : o.at("metrics").as_array()) result.columns.push_back(json::value_to<std::string>(m));
  const std::vector<MetricValues> metrics = recorded_metrics(text, result.runs.size());
  for (size_t i = 0; i < metrics.size(); ++i) result.runs[i].metrics = metrics[i];
  return result;
}

}  // namespace

RecordedResult read_result_file(const std::string& path) {
  try {
    const std::string text = read_input_file(path);
    const json::object o = json::parse(text).as_object();
    return o.contains("id") && !o.contains("schema_version") ? sweep_run_file(o) : versioned_result(o, text, path);
  } catch (const BadInput&) {
    throw;
  } catch (const std::exception& e) {
    throw BadInput(path, std::string("not a result file with provenance (run or compare --format json, a sweep's "
                                     "results.json or runs/<id>.json): ") +
                             e.what());
  }
}

}  // namespace ispsim::systems
