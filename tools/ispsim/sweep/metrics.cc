#include "tools/ispsim/sweep/metrics.h"

#include <cctype>
#include <sstream>

#include "common/error.h"

namespace ispsim::sweep {
namespace {

const char* kFixed[] = {"latency_ms",     "exposed_nand_ms",    "compute_ms",           "pcie_h2d_bytes",
                        "pcie_d2h_bytes", "nand_read_bytes",    "nand_written_bytes",   "controller_dram_bytes",
                        "energy_j",       "average_w",          "peak_w",               "end_to_end_ms",
                        "nand_read_gbps", "tbt_ms",             "tbt_eq4_ms",           "energy_per_token_mj"};
// Families: prefix and unit suffix. stage.* (ms per token), stage_energy.* (mJ
// per token) and stage_share.* (% of the time between tokens): paper 1's stages.
const std::pair<const char*, const char*> kFamilies[] = {
    {"phase.", "_ms"},  {"pcie.", "_bytes"}, {"energy.", "_j"}, {"energy_phase.", "_j"},
    {"stage.", "_ms"}, {"stage_energy.", "_mj"}, {"stage_share.", "_pct"}};

// "HKVD identification" -> "hkvd_identification", "KV read/attention" -> "kv_read_attention".
std::string slug(const std::string& name) {
  std::string out;
  for (char c : name)
    out += std::isspace(static_cast<unsigned char>(c)) || c == '/' ? '_' : static_cast<char>(std::tolower(c));
  return out;
}

// Paper 1's decode systems: per-token figures and the stage breakdown.
void add_decode_metrics(const systems::RunSummary& s, Metrics& m) {
  const double tokens = static_cast<double>(s.decode_tokens);
  const double tbt_ms = s.latency_ns / 1e6 / tokens;
  m.emplace_back("tbt_ms", tbt_ms);
  m.emplace_back("tbt_eq4_ms", s.analytic_latency_ns / 1e6 / tokens);
  m.emplace_back("energy_per_token_mj", s.energy_j * 1e3 / tokens);
  for (const auto& [stage, ns] : s.stage_ns) {
    m.emplace_back("stage." + slug(stage) + "_ms", ns / 1e6 / tokens);
    m.emplace_back("stage_share." + slug(stage) + "_pct", tbt_ms > 0 ? 100 * ns / 1e6 / tokens / tbt_ms : 0.0);
  }
  for (const auto& [stage, j] : s.stage_j) m.emplace_back("stage_energy." + slug(stage) + "_mj", j * 1e3 / tokens);
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

Metrics summary_metrics(const systems::RunSummary& s) {
  Metrics m;
  if (s.out_of_memory) return m;
  m.emplace_back("latency_ms", s.latency_ns / 1e6);
  m.emplace_back("exposed_nand_ms", s.exposed_nand_ns / 1e6);
  m.emplace_back("compute_ms", s.compute_ns / 1e6);
  for (const auto& [phase, ns] : s.phase_ns) m.emplace_back("phase." + slug(phase) + "_ms", ns / 1e6);
  double h2d = 0, d2h = 0;
  for (const auto& [key, bytes] : s.pcie_bytes) (key.rfind("host_to_device.", 0) == 0 ? h2d : d2h) += bytes;
  m.emplace_back("pcie_h2d_bytes", h2d);
  m.emplace_back("pcie_d2h_bytes", d2h);
  for (const auto& [key, bytes] : s.pcie_bytes) m.emplace_back("pcie." + slug(key) + "_bytes", bytes);
  m.emplace_back("nand_read_bytes", s.nand_read_bytes);
  m.emplace_back("nand_written_bytes", s.nand_written_bytes);
  m.emplace_back("controller_dram_bytes", s.controller_dram_bytes);
  m.emplace_back("energy_j", s.energy_j);
  for (const auto& [c, j] : s.energy_j_by_component) m.emplace_back("energy." + slug(c) + "_j", j);
  for (const auto& [p, j] : s.energy_j_by_phase) m.emplace_back("energy_phase." + slug(p) + "_j", j);
  m.emplace_back("average_w", s.average_w);
  m.emplace_back("peak_w", s.peak_w);
  if (s.decode_tokens > 0 && !s.stage_ns.empty()) add_decode_metrics(s, m);
  return m;
}

Metrics nand_stream_metrics(const std::string& stats_csv, const std::string& where) {
  std::istringstream in(stats_csv);
  std::string line;
  double end_to_end_ns = -1, gbps = -1, bytes = -1;
  while (std::getline(in, line)) {
    const size_t a = line.find(','), b = line.find(',', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string name = line.substr(0, a);
    double* target = name == "run.end_to_end_time" ? &end_to_end_ns
                     : name == "run.read_bandwidth" ? &gbps
                     : name == "run.bytes_read"     ? &bytes
                                                    : nullptr;
    if (target) *target = std::stod(line.substr(a + 1, b - a - 1));
  }
  if (end_to_end_ns < 0 || gbps < 0 || bytes < 0) throw std::runtime_error(where + ": NAND stream statistics incomplete");
  return {{"end_to_end_ms", end_to_end_ns / 1e6}, {"nand_read_gbps", gbps}, {"nand_read_bytes", bytes}};
}

bool is_known_metric(const std::string& name) {
  for (const char* f : kFixed)
    if (name == f) return true;
  for (const auto& [prefix, suffix] : kFamilies)
    if (name.rfind(prefix, 0) == 0 && ends_with(name, suffix) && name.size() > std::string(prefix).size() + std::string(suffix).size())
      return true;
  return false;
}

std::string known_metrics_help() {
  std::string out = "known:";
  for (const char* f : kFixed) out += std::string(" ") + f;
  for (const auto& [prefix, suffix] : kFamilies) out += std::string(" ") + prefix + "<name>" + suffix;
  return out;
}

}  // namespace ispsim::sweep
