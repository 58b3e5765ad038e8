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

template <class Map>
json::object map_to_json(const Map& m) {
  json::object o;
  for (const auto& [k, v] : m) o[k] = exact(v);
  return o;
}

double double_of(const json::value& v) { return exact_number(std::string(v.as_string())); }

}  // namespace

std::string summary_to_json(const RunSummary& s) {
  json::object o;
  o["platform"] = s.platform;
  o["program"] = s.program;
  o["out_of_memory"] = s.out_of_memory;
  o["failure"] = s.failure;
  o["phase_ns"] = map_to_json(s.phase_ns);
  o["energy_j_by_component"] = map_to_json(s.energy_j_by_component);
  o["energy_j_by_phase"] = map_to_json(s.energy_j_by_phase);
  o["decode_tokens"] = s.decode_tokens;
  o["stage_ns"] = map_to_json(s.stage_ns);
  o["stage_analytic_ns"] = map_to_json(s.stage_analytic_ns);
  o["stage_j"] = map_to_json(s.stage_j);
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
    for (const auto& kv : o.at("phase_ns").as_object()) s.phase_ns[kv.key()] = double_of(kv.value());
    for (const auto& kv : o.at("energy_j_by_component").as_object())
      s.energy_j_by_component[kv.key()] = double_of(kv.value());
    for (const auto& kv : o.at("energy_j_by_phase").as_object())
      s.energy_j_by_phase[kv.key()] = double_of(kv.value());
    s.decode_tokens = o.at("decode_tokens").to_number<uint64_t>();
    for (const auto& kv : o.at("stage_ns").as_object()) s.stage_ns[kv.key()] = double_of(kv.value());
    for (const auto& kv : o.at("stage_analytic_ns").as_object())
      s.stage_analytic_ns[kv.key()] = double_of(kv.value());
    for (const auto& kv : o.at("stage_j").as_object()) s.stage_j[kv.key()] = double_of(kv.value());
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
