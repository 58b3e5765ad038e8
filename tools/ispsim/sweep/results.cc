#include "tools/ispsim/sweep/results.h"

#include <boost/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/sha1.h"
#include "platforms/systems/result_schema.h"

namespace ispsim::sweep {
namespace json = boost::json;
namespace {

// The length of the valid UTF-8 sequence starting at s[i], or 0 if there is none.
size_t utf8_sequence(const std::string& s, size_t i) {
  const auto at = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b = at(i);
  if (b < 0x80) return 1;
  size_t n = b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((at(i + k) & 0xc0) != 0x80) return 0;
  const unsigned char second = at(i + 1);  // no overlong forms, surrogates or code points past U+10FFFF
  if ((b == 0xe0 && second < 0xa0) || (b == 0xed && second >= 0xa0) || (b == 0xf0 && second < 0x90) ||
      (b == 0xf4 && second >= 0x90))
    return 0;
  return n;
}

// JSON is UTF-8: a byte of `s` that is not part of a valid sequence (a raw
// byte of a path, say) is written as the four characters \xHH.
std::string utf8_text(const std::string& s) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < s.size();) {
    if (const size_t n = utf8_sequence(s, i); n > 0) {
      out.append(s, i, n);
      i += n;
      continue;
    }
    const auto byte = static_cast<unsigned char>(s[i++]);
    out += "\\x";
    out += kHex[byte >> 4];
    out += kHex[byte & 0xf];
  }
  return out;
}

std::string quoted(const std::string& s) { return json::serialize(json::value(utf8_text(s))); }

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::vector<std::string> metric_columns(const SweepPlan& plan, const std::vector<Row>& rows) {
  if (!plan.metrics.empty()) return plan.metrics;
  std::vector<Metrics> values;
  for (const Row& row : rows) values.push_back(row.result.metrics);
  return systems::metric_columns(values);
}

const double* find_metric(const Metrics& m, const std::string& name) {
  for (const auto& [n, v] : m)
    if (n == name) return &v;
  return nullptr;
}

// A run file's metric: its shortest exact text (Boost.JSON's parser may read a
// number 1 ulp off), or a number (files of earlier versions, shard tables).
double metric_value(const json::value& v) {
  return v.is_string() ? systems::exact_number(std::string(v.as_string())) : v.to_number<double>();
}

}  // namespace

std::string result_to_json(const RunResult& r) {
  std::ostringstream o;
  o << "{\"id\":" << quoted(r.id) << ",\"system\":" << quoted(r.system) << ",\"status\":" << quoted(r.status)
    << ",\"message\":" << quoted(r.message) << ",\"metrics\":{";
  for (size_t i = 0; i < r.metrics.size(); ++i)
    o << (i ? "," : "") << quoted(r.metrics[i].first) << ":" << quoted(shortest_number(r.metrics[i].second));
  o << "},\"version\":" << quoted(r.version) << ",\"trace\":" << quoted(r.trace) << ",\"trace_sha1\":"
    << quoted(r.trace_sha1) << ",\"configuration\":" << quoted(r.configuration) << ",\"settings\":" << quoted(r.settings)
    << "}";
  return o.str();
}

RunResult result_from_json(const std::string& text, const std::string& where) {
  try {
    const json::object o = json::parse(text).as_object();
    RunResult r;
    r.id = json::value_to<std::string>(o.at("id"));
    r.system = json::value_to<std::string>(o.at("system"));
    r.status = json::value_to<std::string>(o.at("status"));
    r.message = json::value_to<std::string>(o.at("message"));
    for (const auto& kv : o.at("metrics").as_object()) r.metrics.emplace_back(kv.key(), metric_value(kv.value()));
    r.version = json::value_to<std::string>(o.at("version"));
    // Results of versions before provenance have none of these.
    if (const json::value* v = o.if_contains("trace_sha1")) r.trace_sha1 = json::value_to<std::string>(*v);
    if (const json::value* v = o.if_contains("configuration")) r.configuration = json::value_to<std::string>(*v);
    if (const json::value* v = o.if_contains("settings")) r.settings = json::value_to<std::string>(*v);
    if (const json::value* v = o.if_contains("trace")) r.trace = json::value_to<std::string>(*v);
    if (r.status != "ok" && r.status != "oom" && r.status != "error") throw std::runtime_error("unknown status " + r.status);
    return r;
  } catch (const std::exception& e) {
    throw BadInput(where, std::string("not a sweep run result: ") + e.what());
  }
}

std::string run_file(const std::string& out_dir, const std::string& id) {
  return (std::filesystem::path(out_dir) / "runs" / (id + ".json")).string();
}

void save_result(const std::string& out_dir, const RunResult& r) {
  AtomicFile f(run_file(out_dir, r.id));
  f.stream() << result_to_json(r) << "\n";
  f.commit();
}

std::optional<RunResult> load_result(const std::string& out_dir, const std::string& id) {
  const std::string path = run_file(out_dir, id);
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  RunResult r = result_from_json(text.str(), path);
  if (r.id != id) throw BadInput(path, "holds run " + r.id + ", not " + id);
  return r;
}

void write_results(const SweepPlan& plan, const std::vector<Row>& rows, const std::string& csv_path,
                   const std::string& json_path, const std::string& command_line) {
  const std::vector<std::string> metrics = metric_columns(plan, rows);
  AtomicFile csv(csv_path), js(json_path);

  std::ostream& c = csv.stream();
  c << "id";
  for (const std::string& axis : plan.axes) c << "," << csv_field(axis);
  c << ",system,status,message";
  for (const std::string& m : metrics) c << "," << csv_field(m);
  c << ",version,trace_sha1,configuration_sha1\n";
  for (const Row& row : rows) {
    c << row.result.id;
    for (const auto& [axis, value] : row.run->inputs) c << "," << csv_field(value);
    c << "," << csv_field(row.result.system) << "," << row.result.status << "," << csv_field(row.result.message);
    for (const std::string& m : metrics) {
      const double* v = find_metric(row.result.metrics, m);
      c << "," << (v ? shortest_number(*v) : "");
    }
    c << "," << csv_field(row.result.version) << "," << row.result.trace_sha1 << ","
      << (row.result.configuration.empty() ? "" : text_sha1(row.result.configuration)) << "\n";
  }

  std::ostream& j = js.stream();
  j << "{\n  \"schema_version\": " << systems::kResultSchemaVersion << ",\n  \"provenance\": {\"ispsim_version\": "
    << quoted(ispsim_version()) << ", \"command_line\": " << quoted(command_line) << "},\n  \"sweep\": "
    << quoted(plan.spec.name()) << ",\n  \"axes\": [";
  for (size_t i = 0; i < plan.axes.size(); ++i) j << (i ? ", " : "") << quoted(plan.axes[i]);
  j << "],\n  \"metrics\": [";
  for (size_t i = 0; i < metrics.size(); ++i) j << (i ? ", " : "") << quoted(metrics[i]);
  j << "],\n  \"runs\": [";
  for (size_t r = 0; r < rows.size(); ++r) {
    const Row& row = rows[r];
    j << (r ? "," : "") << "\n    {\"id\": " << quoted(row.result.id) << ", \"inputs\": {";
    for (size_t i = 0; i < row.run->inputs.size(); ++i)
      j << (i ? ", " : "") << quoted(row.run->inputs[i].first) << ": " << quoted(row.run->inputs[i].second);
    j << "}, \"system\": " << quoted(row.result.system) << ", \"status\": " << quoted(row.result.status)
      << ", \"message\": " << quoted(row.result.message) << ", \"metrics\": {";
    bool first = true;
    for (const std::string& m : metrics)
      if (const double* v = find_metric(row.result.metrics, m)) {
        j << (first ? "" : ", ") << quoted(m) << ": " << shortest_number(*v);
        first = false;
      }
    j << "}, \"version\": " << quoted(row.result.version) << ",\n     \"trace\": " << quoted(row.result.trace)
      << ", \"trace_sha1\": " << quoted(row.result.trace_sha1) << ",\n     \"configuration\": "
      << quoted(row.result.configuration) << ",\n     \"settings\": " << quoted(row.result.settings) << "}";
  }
  j << "\n  ]\n}\n";
  csv.commit();
  js.commit();
}

}  // namespace ispsim::sweep
