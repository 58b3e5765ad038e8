#include "platforms/systems/run_summary_io.h"

#include <boost/json.hpp>

#include "common/error.h"

namespace ispsim::systems {
namespace json = boost::json;

namespace {

template <class Map>
json::object map_to_json(const Map& m) {
  json::object o;
  for (const auto& [k, v] : m) o[k] = v;
  return o;
}

}  // namespace

std::string summary_to_json(const RunSummary& s) {
  json::object o;
  o["platform"] = s.platform;
  o["program"] = s.program;
  o["out_of_memory"] = s.out_of_memory;
  o["failure"] = s.failure;
  o["latency_ns"] = s.latency_ns;
  o["phase_ns"] = map_to_json(s.phase_ns);
  o["exposed_nand_ns"] = s.exposed_nand_ns;
  o["compute_ns"] = s.compute_ns;
  o["isp_compute_ns"] = s.isp_compute_ns;
  o["nand_stream_ns"] = s.nand_stream_ns;
  o["pcie_bytes"] = map_to_json(s.pcie_bytes);
  o["nand_read_bytes"] = s.nand_read_bytes;
  o["nand_written_bytes"] = s.nand_written_bytes;
  o["controller_dram_bytes"] = s.controller_dram_bytes;
  o["energy_j"] = s.energy_j;
  o["energy_j_by_component"] = map_to_json(s.energy_j_by_component);
  o["energy_j_by_phase"] = map_to_json(s.energy_j_by_phase);
  o["average_w"] = s.average_w;
  o["peak_w"] = s.peak_w;
  o["decode_tokens"] = s.decode_tokens;
  o["analytic_latency_ns"] = s.analytic_latency_ns;
  o["stage_ns"] = map_to_json(s.stage_ns);
  o["stage_analytic_ns"] = map_to_json(s.stage_analytic_ns);
  o["stage_j"] = map_to_json(s.stage_j);
  o["note"] = s.note;
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
    s.latency_ns = o.at("latency_ns").to_number<double>();
    for (const auto& kv : o.at("phase_ns").as_object()) s.phase_ns[kv.key()] = kv.value().to_number<double>();
    s.exposed_nand_ns = o.at("exposed_nand_ns").to_number<double>();
    s.compute_ns = o.at("compute_ns").to_number<double>();
    s.isp_compute_ns = o.at("isp_compute_ns").to_number<double>();
    s.nand_stream_ns = o.at("nand_stream_ns").to_number<double>();
    for (const auto& kv : o.at("pcie_bytes").as_object()) s.pcie_bytes[kv.key()] = kv.value().to_number<uint64_t>();
    s.nand_read_bytes = o.at("nand_read_bytes").to_number<uint64_t>();
    s.nand_written_bytes = o.at("nand_written_bytes").to_number<uint64_t>();
    s.controller_dram_bytes = o.at("controller_dram_bytes").to_number<uint64_t>();
    s.energy_j = o.at("energy_j").to_number<double>();
    for (const auto& kv : o.at("energy_j_by_component").as_object())
      s.energy_j_by_component[kv.key()] = kv.value().to_number<double>();
    for (const auto& kv : o.at("energy_j_by_phase").as_object())
      s.energy_j_by_phase[kv.key()] = kv.value().to_number<double>();
    s.average_w = o.at("average_w").to_number<double>();
    s.peak_w = o.at("peak_w").to_number<double>();
    s.decode_tokens = o.at("decode_tokens").to_number<uint64_t>();
    s.analytic_latency_ns = o.at("analytic_latency_ns").to_number<double>();
    for (const auto& kv : o.at("stage_ns").as_object()) s.stage_ns[kv.key()] = kv.value().to_number<double>();
    for (const auto& kv : o.at("stage_analytic_ns").as_object())
      s.stage_analytic_ns[kv.key()] = kv.value().to_number<double>();
    for (const auto& kv : o.at("stage_j").as_object()) s.stage_j[kv.key()] = kv.value().to_number<double>();
    s.note = json::value_to<std::string>(o.at("note"));
    return s;
  } catch (const std::exception& e) {
    throw BadInput(where, std::string("not a run summary: ") + e.what());
  }
}

}  // namespace ispsim::systems
