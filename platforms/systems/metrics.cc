#include "platforms/systems/metrics.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "platforms/systems/report_cells.h"
#include "platforms/systems/result_schema.h"

namespace ispsim::systems {
namespace {

using Read = std::function<void(const RunSummary&, MetricValues&)>;

// Paper 1's decode systems: figures per decode token (none for other runs).
Read per_token(std::function<void(const RunSummary&, double tokens, MetricValues&)> f) {
  return [f = std::move(f)](const RunSummary& r, MetricValues& out) {
    const double tokens = r.statistic(kRunDecodeTokens);
    if (tokens > 0) f(r, tokens, out);
  };
}

// Per decode token: each member of the family `pattern` in SI units / tokens.
Read stage_per_token(const char* pattern) {
  return per_token([pattern](const RunSummary& r, double n, MetricValues& o) {
    for (const auto& [stage, captured] : statistic_family(r, pattern)) o.emplace_back(metric_key(stage), captured.si() / n);
  });
}

std::vector<Metric> declare() {
  const auto decode = [](auto f) { return per_token(f); };
  Metric pcie_by_purpose = {"pcie.<direction>.<purpose>_bytes", "bytes",
                            "PCIe bytes by direction and purpose (those that moved any)",
                            "system.pcie.<direction>.<purpose>_bytes", {}};
  pcie_by_purpose.nonzero_only = true;
  return {
      {"latency_s", "s", "end-to-end latency of the request", kRunLatency, {}},
      {"phase.<phase>_s", "s", "time of each phase (HKVD identification, recomputation, fused prefill, decode, ...)",
       kRunPhaseTime, {}},
      {"exposed_nand_s", "s", "prefill time the host waited for storage beyond its GPU compute",
       kPrefillExposedNandTime, {}},
      {"compute_s", "s", "GPU compute time during prefill", kPrefillComputeTime, {}},
      {"isp_compute_s", "s", "compute time of the busiest in-storage accelerator, summed over SSD attention ops",
       kIspComputeTime, {}},
      {"nand_stream_s", "s", "time the flash alone needs to stream the SSD attention ops' pages", kNandStreamTime, {}},
      {"pcie_host_to_device_bytes", "bytes", "bytes moved over PCIe from host to device", kPcieHostToDeviceBytes, {}},
      {"pcie_device_to_host_bytes", "bytes", "bytes moved over PCIe from device to host", kPcieDeviceToHostBytes, {}},
      pcie_by_purpose,
      {"nand_read_bytes", "bytes", "bytes read from flash (whole pages)", kNandBytesRead, {}},
      {"nand_written_bytes", "bytes", "bytes programmed into flash (whole pages)", kNandBytesProgrammed, {}},
      {"controller_dram_bytes", "bytes", "SSD controller DRAM traffic of the attention datapath", kControllerDramBytes,
       {}},
      {"ssd_attention_macs", "count", "multiply-accumulates of the SSD attention ops", "system.ssd.attention.macs", {}},
      {"energy_j", "J", "energy of the run, dynamic and static", kRunEnergy, {}},
      {"energy.<component>_j", "J", "energy by component (dynamic and static)", kComponentEnergy, {}},
      {"energy_phase.<phase>_j", "J", "energy by phase", kRunPhaseEnergy, {}},
      {"average_power_w", "W", "energy / time of the run", kRunAveragePower, {}},
      {"peak_power_w", "W", "largest mean power over an aligned 1 us window", kRunPeakPower, {}},
      {"tbt_s", "s", "time between tokens: simulated decode time / decode steps", "",
       decode([](const RunSummary& r, double n, MetricValues& o) {
         o.emplace_back("", r.statistic(kRunLatency) / n);
       })},
      {"tbt_eq4_s", "s", "time between tokens of paper 1's eq. (4) model", kRunAnalyticLatency,
       decode([](const RunSummary& r, double n, MetricValues& o) {
         o.emplace_back("", r.statistic(kRunAnalyticLatency) / n);
       })},
      {"energy_per_token_j", "J", "energy / decode steps", "",
       decode([](const RunSummary& r, double n, MetricValues& o) { o.emplace_back("", r.statistic(kRunEnergy) / n); })},
      {"stage.<stage>_s", "s", "time per decode token of each stage (weights, kv_write, kv_read_attention, ...)",
       kRunStageTime, stage_per_token(kRunStageTime)},
      {"stage_eq4.<stage>_s", "s", "time per decode token of each stage by paper 1's eq. (4) model",
       kRunStageAnalyticTime, stage_per_token(kRunStageAnalyticTime)},
      {"stage_energy.<stage>_j", "J", "energy per decode token of each stage", kRunStageEnergy,
       stage_per_token(kRunStageEnergy)},
      {"stage_share.<stage>", "ratio", "the stage's share of the time between tokens", "",
       decode([](const RunSummary& r, double, MetricValues& o) {
         for (const auto& [stage, captured] : statistic_family(r, kRunStageTime)) {
           const double latency = r.statistic(kRunLatency, captured.unit);  // both as declared
           o.emplace_back(metric_key(stage), latency > 0 ? captured.value / latency : 0.0);
         }
       })},
      {"end_to_end_s", "s", "NAND stream microbenchmark: time from the first op to the last", "run.end_to_end_time",
       {}},
      {"nand_stream_read_bandwidth_bytes_per_s", "bytes/s",
       "NAND stream microbenchmark: bytes read from flash / time spent reading", "run.read_bandwidth", {}},
      {"nand_stream_read_bytes", "bytes", "NAND stream microbenchmark: bytes read from flash (whole pages)",
       "run.bytes_read", {}},
      {"ftl_waf", "ratio", "FTL write amplification since the drive was fresh", "system.ssd.ftl_waf", {}},
      {"gc_pages_read", "count", "NAND pages garbage collection read", "system.ssd.gc_pages_read", {}},
      {"gc_pages_programmed", "count", "NAND pages garbage collection programmed", "system.ssd.gc_pages_programmed",
       {}},
      {"gc_block_erases", "count", "blocks garbage collection erased", "system.ssd.gc_block_erases", {}},
      {"gc_time_s", "s", "time garbage-collection jobs held the flash's program lane", "system.ssd.gc_time", {}},
      {"gc_energy_j", "J", "garbage-collection energy", "system.ssd.gc_energy", {}},
      {"gc_read_wait_s", "s", "time reads waited for the dies' erases", "system.ssd.gc_read_wait", {}},
  };
}

// "phase.<phase>_s" -> ("phase.", "_s"); a plain name -> (name, "").
std::pair<std::string, std::string> family_parts(const std::string& name) {
  const size_t open = name.find('<'), close = name.rfind('>');
  if (open == std::string::npos) return {name, ""};
  return {name.substr(0, open), name.substr(close + 1)};
}

// Whether `name` fits the pattern (a name, or a family "a.<k>_b" with a
// non-empty key), and its key ("" for a plain name).
bool fits(const std::string& pattern, const std::string& name, std::string& key) {
  const auto [prefix, suffix] = family_parts(pattern);
  if (pattern.find('<') == std::string::npos) {
    key.clear();
    return name == pattern;
  }
  if (name.size() <= prefix.size() + suffix.size() || name.rfind(prefix, 0) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return false;
  key = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  return true;
}

// The values of one metric of a run, with their full names.
void read_metric(const Metric& m, const RunSummary& r, MetricValues& out) {
  MetricValues own;
  if (m.read) {
    m.read(r, own);
  } else {
    for (const auto& [key, captured] : statistic_family(r, m.stat))
      if (!m.nonzero_only || captured.value != 0) own.emplace_back(metric_key(key), captured.si());
  }
  const auto [prefix, suffix] = family_parts(m.name);
  std::sort(own.begin(), own.end(), [](const auto& a, const auto& b) { return natural_less(a.first, b.first); });
  for (auto& [key, v] : own) out.emplace_back(m.family() ? prefix + key + suffix : m.name, v);
}

// Whether `name` is one value of the family `m` ("phase.decode_s" of "phase.<phase>_s").
bool member_of(const Metric& m, const std::string& name) {
  const auto [prefix, suffix] = family_parts(m.name);
  return name.size() > prefix.size() + suffix.size() && name.rfind(prefix, 0) == 0 &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool completed(const RunSummary& r) { return !r.out_of_memory && r.failure.empty(); }

}  // namespace

const std::vector<Metric>& metric_list() {
  static const std::vector<Metric> list = declare();
  return list;
}

std::string metric_key(const std::string& name) {
  std::string out;
  for (char c : name)
    out += std::isspace(static_cast<unsigned char>(c)) || c == '/' ? '_' : static_cast<char>(std::tolower(c));
  return out;
}

std::string phase_key(const std::string& name) {
  std::string key = name;
  std::replace(key.begin(), key.end(), ' ', '_');
  return key;
}

std::string phase_display_name(const std::string& key) {
  std::string name = key;
  std::replace(name.begin(), name.end(), '_', ' ');
  return name;
}

bool natural_less(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      size_t ie = i, je = j;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
      const std::string x = a.substr(i, ie - i), y = b.substr(j, je - j);
      const std::string xs = x.substr(std::min(x.find_first_not_of('0'), x.size()));
      const std::string ys = y.substr(std::min(y.find_first_not_of('0'), y.size()));
      if (xs.size() != ys.size()) return xs.size() < ys.size();
      if (xs != ys) return xs < ys;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j || (a.size() - i == b.size() - j && a < b);
}

const std::vector<std::string>& table_statistics() {
  static const std::vector<std::string> list = {kRunDecodeTokens};
  return list;
}

std::string family_member(const std::string& pattern, const std::string& key) {
  const auto [prefix, suffix] = family_parts(pattern);
  return prefix + key + suffix;
}

std::vector<std::pair<std::string, Statistic>> statistic_family(const RunSummary& summary, const std::string& pattern) {
  std::vector<std::pair<std::string, Statistic>> out;
  std::string key;
  for (const auto& [name, captured] : summary.stats)
    if (fits(pattern, name, key)) out.emplace_back(key, captured);
  return out;
}

MetricValues metric_values(const RunSummary& summary) {
  MetricValues out;
  if (!completed(summary)) return out;
  for (const Metric& m : metric_list()) read_metric(m, summary, out);
  return out;
}

MetricValues statistic_values(const std::map<std::string, double>& stats) {
  RunSummary only_stats;
  for (const auto& [name, v] : stats) only_stats.stats[name] = Statistic(v);
  MetricValues out;
  for (const Metric& m : metric_list())
    if (!m.stat.empty()) read_metric(m, only_stats, out);
  return out;
}

std::vector<std::string> metric_columns(const std::vector<MetricValues>& runs) {
  std::vector<std::string> columns;
  for (const Metric& m : metric_list()) {
    if (!m.family()) {
      columns.push_back(m.name);
      continue;
    }
    std::vector<std::string> members;
    for (const MetricValues& run : runs)
      for (const auto& [name, v] : run)
        if (member_of(m, name) && std::find(members.begin(), members.end(), name) == members.end())
          members.push_back(name);
    std::sort(members.begin(), members.end(), natural_less);
    columns.insert(columns.end(), members.begin(), members.end());
  }
  return columns;
}

const Metric* find_metric(const std::string& name) {
  for (const Metric& m : metric_list())
    if (m.family() ? member_of(m, name) : name == m.name) return &m;
  return nullptr;
}

bool is_known_metric(const std::string& name) { return find_metric(name) != nullptr; }

bool reads_statistic(const Metric& m, const std::string& stat) {
  std::string key;
  return !m.stat.empty() && fits(m.stat, stat, key);
}

std::string known_metrics_help() {
  std::string out = "known:";
  for (const Metric& m : metric_list()) out += " " + m.name;
  return out + " (see ispsim describe metrics)";
}

void write_metric_list(std::ostream& os, Format format) {
  if (format == Format::JSON) {
    os << "{\n  \"schema_version\": " << kResultSchemaVersion << ",\n  \"metrics\": [";
    const char* sep = "\n";
    for (const Metric& m : metric_list()) {
      os << sep << "    {\"name\": " << json_quoted(m.name) << ", \"unit\": " << json_quoted(m.unit)
         << ", \"description\": " << json_quoted(m.description)
         << ", \"statistic\": " << (m.stat.empty() ? "null" : json_quoted(m.stat)) << "}";
      sep = ",\n";
    }
    os << "\n  ]\n}\n";
    return;
  }
  if (format == Format::CSV) {
    os << "name,unit,description,statistic\n";
    for (const Metric& m : metric_list())
      os << csv_cell(m.name) << "," << csv_cell(m.unit) << "," << csv_cell(m.description) << "," << csv_cell(m.stat)
         << "\n";
    return;
  }
  size_t name_w = 0, unit_w = 0;
  for (const Metric& m : metric_list()) {
    name_w = std::max(name_w, m.name.size());
    unit_w = std::max(unit_w, m.unit.size());
  }
  for (const Metric& m : metric_list())
    os << m.name << std::string(name_w - m.name.size() + 2, ' ') << m.unit << std::string(unit_w - m.unit.size() + 2, ' ')
       << m.description << (m.stat.empty() ? "" : " (statistic " + m.stat + ")") << "\n";
}

}  // namespace ispsim::systems
