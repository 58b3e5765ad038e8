#include "platforms/systems/run_summary_io.h"

#include <boost/json.hpp>

#include <stdexcept>

#include "common/error.h"
#include "models/core/stats.h"
#include "platforms/systems/report_cells.h"

namespace ispsim::systems {
namespace json = boost::json;

namespace {

// Doubles travel as their shortest exact text: Boost.JSON's parser (1.81) may
// read a number 1 ulp off, and the parent must see the child's exact values.
json::value exact(double v) { return json::value(shortest_number(v)); }

double double_of(const json::value& v) { return exact_number(std::string(v.as_string())); }

}  // namespace

std::string summary_to_json(const RunSummary& s) {
  json::object o;
  o["platform"] = s.platform;
  o["program"] = s.program;
  o["out_of_memory"] = s.out_of_memory;
  o["failure"] = s.failure;
  o["note"] = s.note;
  json::object stats;
  for (const auto& [name, captured] : s.stats)  // [value, declared unit]
    stats[name] = json::array{exact(captured.value), json::value(captured.unit)};
  o["stats"] = std::move(stats);
  return json::serialize(o);
}

RunSummary summary_from_json(const std::string& text, const std::string& where) {
  try {
    const json::object o = json::parse(text).as_object();
    RunSummary s;
    s.platform = json::value_to<std::string>(o.at("platform"));
    s.program = json::value_to<std::string>(o.at("program"));
    s.out_of_memory = o.at("out_of_memory").as_bool();
    s.failure = json::value_to<std::string>(o.at("failure"));
    s.note = json::value_to<std::string>(o.at("note"));
    for (const auto& kv : o.at("stats").as_object()) {
      const json::array& captured = kv.value().as_array();  // [value, declared unit]
      const std::string unit = json::value_to<std::string>(captured.at(1));
      s.stats[kv.key()] = Statistic(double_of(captured.at(0)), unit, stats::si_unit(unit));
    }
    return s;
  } catch (const std::exception& e) {
    throw BadInput(where, std::string("not a run summary: ") + e.what());
  }
}

}  // namespace ispsim::systems
