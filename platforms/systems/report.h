// The summary of one simulated run and the comparison of several runs (one per
// platform) as an aligned text table, CSV or JSON.
//
// Units: the summary keeps statistics in the units they were declared in; the
// text table prints milliseconds and megabytes (1 MB = 1e6 bytes) with a fixed number of
// decimals, CSV and JSON the SI units of the metric list (metrics.h). The same
// runs give the same bytes.
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "models/core/stats.h"
#include "platforms/systems/result_schema.h"

namespace ispsim::systems {

// A registry statistic captured at the end of a run: its value in the unit its
// module declared, so that figures in that unit stay exact (a speedup is a ratio
// of ns, not of s rounded from ns), and the conversion to SI
// (stats::si_unit(unit), kept so that reading needs no registry).
struct Statistic {
  double value = 0;
  std::string unit;  // as declared
  stats::SiUnit to_si;
  Statistic(double in_si = 0) : value(in_si) {}  // NOLINT(runtime/explicit): already in SI
  Statistic(double v, std::string declared_unit, stats::SiUnit si)
      : value(v), unit(std::move(declared_unit)), to_si(std::move(si)) {}
  double si() const { return to_si.of(value); }
};

// What a run leaves: its identity, whether it failed, and the registry
// statistics the tables read (latency, phases, energy, bytes, ...). Every number
// a table shows is one of those statistics, read by name.
struct RunSummary {
  std::string platform, program;
  bool out_of_memory = false;  // the platform could not hold the workload: no numbers are shown
  std::string failure;         // why (e.g. "KV cache 12.3 GB exceeds GPU memory 8 GB"); shown in JSON/CSV
  std::string note;            // physical checks worth a line under the table (e.g. SRAM code capacity)
  // The statistics the metric list and the tables read (metrics.h), by name,
  // captured at the end of the run (capture_stats).
  std::map<std::string, Statistic> stats;
  // stats[name] in SI units, or 0 when the run has no such statistic.
  double statistic(const std::string& name) const {
    const auto it = stats.find(name);
    return it == stats.end() ? 0 : it->second.si();
  }
  // stats[name] exactly as declared, in `unit`, or 0 when the run has no such
  // statistic; std::logic_error when it was declared in another unit.
  double statistic(const std::string& name, const std::string& unit) const;
  // For the provenance of machine outputs, set by the caller that loaded the
  // platform (schema/platform_loader.h): the resolved configuration (every
  // parameter, textproto) and the settings that make it (file, presets, --set).
  std::string configuration, settings;
};

enum class Format { TEXT, CSV, JSON };

// Parses "text", "csv" or "json"; anything else throws BadInput(where, ...).
Format parse_format(const std::string& name, const std::string& where = "--format");

// The text table's columns a reader compares first; they fit 120 characters
// for the reference platforms.
std::vector<std::string> default_text_columns();

// Parses --columns: comma-separated names of text columns (program, latency,
// speedup, prefill, phases, decode, exposed_nand, compute, isp_compute,
// nand_stream, pcie_h2d, pcie_d2h, nand_read, nand_written, ctrl_dram, energy,
// avg_power, peak_power) or "all". "prefill" is the sum of the phases before
// decode, "phases" each of them. An unknown name throws BadInput("--columns", ...) listing the known ones.
std::vector<std::string> parse_text_columns(const std::string& list);

// Writes one row (or JSON object) per summary, in the given order.
//  - `baseline` names the platform the speedup is measured against
//    (baseline latency / latency; the first run of that platform counts). An
//    empty name, or a baseline that ran out of memory or failed, leaves the
//    speedup empty ("-" in TEXT, empty in CSV, null in JSON); a name that no run
//    has throws BadInput("--baseline", ...).
//  - Phase columns are the union of the phase names of all summaries: the list
//    above in that order, then others alphabetically; a run without a phase
//    shows "-" (TEXT) or nothing (CSV) there.
//  - A run that ran out of memory shows "OOM" (TEXT), status "out_of_memory"
//    (CSV, JSON) and no numbers; a run with a failure but not OOM shows
//    "FAILED" / "failed". TEXT lists each failure below the table.
//  - TEXT: aligned columns (two blanks apart), header with units, a rule of
//    dashes, 3 decimals (speedup 2); PCIe bytes totalled by direction; times in
//    ms and bytes in MB.
//  - CSV and JSON carry the metrics of metrics.h in SI units under their names
//    (latency_s, energy_j, ...), numbers in their shortest exact form. CSV:
//    RFC 4180, columns platform, program, status, failure, speedup, the metric
//    columns (metric_columns), then the provenance columns. JSON:
//    {"schema_version", "provenance", "baseline", "runs": [{"platform",
//    "program", "status", ["failure",] "speedup", "metrics": {...},
//    "configuration", "settings"}]}. Without `provenance` (nullptr) both leave it out.
// Non-finite or negative numbers in a summary throw std::logic_error (a bug in
// the producer), as does a PCIe key without a direction prefix.
//  - TEXT shows the platform and then `columns` (names from
//    parse_text_columns), in the table's own order; CSV and JSON always carry
//    every column.
void write_comparison(std::ostream& os, const std::vector<RunSummary>& runs, const std::string& baseline,
                      Format format, const std::vector<std::string>& columns = default_text_columns(),
                      const Provenance* provenance = nullptr);

}  // namespace ispsim::systems
