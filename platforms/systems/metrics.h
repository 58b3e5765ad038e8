// The metrics of a run: one declared list, read by every machine output
// (`compare` CSV/JSON, sweep results, `ispsim describe metrics`, the plots).
//
// A metric's name carries its SI unit as a suffix (latency_s, energy_j,
// nand_read_bytes, peak_power_w); machine outputs print it in that unit, and
// only the text tables convert to ms or MB. A family is one metric per key
// ("phase.<phase>_s" gives phase.decode_s, phase.fused_prefill_s, ...); keys
// are lower case with blanks and '/' as '_'.
//
// A metric either reads a statistic of the registry by name (`stat`, captured
// at the end of the run into RunSummary::stats, converted to SI), or is worked
// out from the statistics of the run's summary, the one it names among them.
// Adding a statistic to every table is therefore its declaration in the module
// (stats::Group) plus one line in metrics.cc.
#pragma once

#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "models/core/stats.h"
#include "platforms/systems/report.h"

namespace ispsim::systems {

using MetricValues = std::vector<std::pair<std::string, double>>;

// Statistics that metrics and the text table read by name (RunSummary::statistic).
// Every system's run (platforms/systems/*_system.cc):
constexpr const char* kRunLatency = "system.run.latency";
constexpr const char* kRunEnergy = "system.run.energy";
constexpr const char* kRunAveragePower = "system.run.average_power";
constexpr const char* kRunPeakPower = "system.run.peak_power";
// The decode systems' latency by paper 1's eq. (4) model (platforms/systems/cim_system.cc).
constexpr const char* kRunAnalyticLatency = "system.run.analytic_latency";
// The SSD's (models/ssd, models/isp):
constexpr const char* kIspComputeTime = "system.ssd.attention.isp_compute_time";
constexpr const char* kNandStreamTime = "system.ssd.attention.nand_stream_time";
constexpr const char* kNandBytesRead = "system.ssd.nand_bytes_read";
constexpr const char* kNandBytesProgrammed = "system.ssd.nand_bytes_programmed";
constexpr const char* kControllerDramBytes = "system.ssd.attention.dram_bytes";
// The PCIe link's, by direction (all purposes):
constexpr const char* kPcieHostToDeviceBytes = "system.pcie.host_to_device.bytes";
constexpr const char* kPcieDeviceToHostBytes = "system.pcie.device_to_host.bytes";
// The blend system's prefill: GPU compute and the storage wait beyond it.
constexpr const char* kPrefillComputeTime = "system.run.prefill_compute_time";
constexpr const char* kPrefillExposedNandTime = "system.run.prefill_exposed_nand_time";
// Families, one member per key (family_member): every system's time (ns) and
// energy (J) by phase, keyed by phase_key, and energy (J) by the energy
// ledger's component ("system.gpu.total_energy"); run_stats.h declares them.
constexpr const char* kRunPhaseTime = "system.run.phase.<phase>.time";
constexpr const char* kRunPhaseEnergy = "system.run.phase.<phase>.energy";
constexpr const char* kComponentEnergy = "<component>.total_energy";
// The decode systems' steps (count) and, keyed by metric_key of the stage's
// name, each stage's simulated and eq. (4) time (ns) and energy (J).
constexpr const char* kRunDecodeTokens = "system.run.decode_tokens";
constexpr const char* kRunStageTime = "system.run.stage.<stage>.time";
constexpr const char* kRunStageAnalyticTime = "system.run.stage.<stage>.analytic_time";
constexpr const char* kRunStageEnergy = "system.run.stage.<stage>.energy";

struct Metric {
  std::string name;  // e.g. "latency_s"; a family "phase.<phase>_s"
  std::string unit;  // SI: s, bytes, J, W, bytes/s, count, ratio
  std::string description;
  // Registry statistic read by name, or empty; for a family a pattern
  // ("system.pcie.<direction>.<purpose>_bytes": one member per statistic that
  // fits it, keyed by metric_key of the part in <>). With `read` too, the
  // statistic `read` works the metric out from (so that the run captures it).
  std::string stat;
  // The values of a summary-derived metric (none when the run has none).
  std::function<void(const RunSummary&, MetricValues&)> read;
  // A family read from `stat` leaves out the members that are 0.
  bool nonzero_only = false;
  bool family() const { return name.find('<') != std::string::npos; }
};

// Every metric, in the order of the tables' columns.
const std::vector<Metric>& metric_list();

// Statistics the tables read that no metric shows; the run captures them too.
const std::vector<std::string>& table_statistics();

// The statistic `key` of a family: ("system.run.phase.<phase>.time", "decode")
// gives "system.run.phase.decode.time".
std::string family_member(const std::string& pattern, const std::string& key);
// The captured statistics of `summary` that fit the family `pattern`, by key
// (the part in <> as declared), in order of their names.
std::vector<std::pair<std::string, Statistic>> statistic_family(const RunSummary& summary, const std::string& pattern);

// The SI unit of a registry unit (models/core/stats.h).
using stats::si_unit;
using stats::SiUnit;

// The metrics of a completed run, in list order (family members by natural
// order of their keys); empty for a run out of memory or failed.
MetricValues metric_values(const RunSummary& summary);

// The values of the registry-read metrics whose statistics `stats` holds
// (name -> value in SI units), e.g. from a NAND stream run's statistics file.
MetricValues statistic_values(const std::map<std::string, double>& stats);

// The table columns of a set of runs: every non-family metric of the list,
// whatever ran, then within each family's place the keys present, in natural
// order ("ch8" before "ch10").
std::vector<std::string> metric_columns(const std::vector<MetricValues>& runs);

// "HKVD identification" -> "hkvd_identification", "KV read/attention" -> "kv_read_attention".
std::string metric_key(const std::string& name);

// A phase's name as a statistic's key and back: "fused prefill" <->
// "fused_prefill" (the runtime's phase names have no '_').
std::string phase_key(const std::string& name);
std::string phase_display_name(const std::string& key);

// Natural order: digit runs compare as numbers ("ch8" < "ch10").
bool natural_less(const std::string& a, const std::string& b);

// The metric a name is (a family's member gives its family), or nullptr.
const Metric* find_metric(const std::string& name);
bool is_known_metric(const std::string& name);
// Whether the metric reads the registry statistic `stat` (by name or pattern).
bool reads_statistic(const Metric& m, const std::string& stat);
std::string known_metrics_help();

// The list as an aligned text table (name, unit, description) or as JSON
// {"schema_version", "metrics": [{"name", "unit", "description", "statistic"}]}.
void write_metric_list(std::ostream& os, Format format);

}  // namespace ispsim::systems
