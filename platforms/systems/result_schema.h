// What every machine-readable result carries besides its numbers: the schema
// version and how the result was made (docs/results.md lists every field).
#pragma once

#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace ispsim::systems {

// Raised when a field is renamed, removed or changes its unit.
constexpr int kResultSchemaVersion = 1;

// How a result was made. Each run adds its resolved configuration
// (RunSummary::configuration).
struct Provenance {
  std::string ispsim_version;  // `ispsim --version`
  std::string command_line;    // argv joined, each argument shell-quoted when it needs it
  std::string trace;           // the trace path as given
  std::string trace_sha1;      // SHA-1 of the trace file's bytes (common/sha1.h)
  std::string trace_seed;      // the trace generator's seed (empty when the trace names none)
};

// What a statistics file (`run --stats`) records of how it was made: the
// result's provenance and the run's resolved configuration.
struct StatsProvenance {
  Provenance provenance;
  std::string configuration;
};

// `"schema_version": N, "provenance": {...}` (no braces around, no newline),
// for the top level of a JSON result.
void write_provenance_json(std::ostream& os, const Provenance& p);

// The CSV columns of the provenance (header names and one row's cells),
// appended to every row: schema_version, ispsim_version, trace_sha1, trace_seed,
// configuration_sha1 (of the run's resolved configuration). The command line
// and the configuration itself are in the JSON only, so that the same run
// gives the same CSV whatever its output file is called.
const char* provenance_csv_header();
std::string provenance_csv_cells(const Provenance& p, const std::string& configuration);

// A JSON result read back: `run --format json`, `compare --json`, a sweep's
// results.json or one of its runs/<id>.json files. Per run what `ispsim rerun`
// needs. The metrics are read from the text itself, exactly as written
// (Boost.JSON 1.81's parser can read a number 1 ulp off; run files hold them
// as strings). BadInput naming `path` for a file that is not such a result or
// has another schema version.
struct RecordedRun {
  std::string label;  // "MemLLM" (run, compare), "<id> MemLLM" (sweep)
  std::string status, configuration, settings;
  std::string trace, trace_sha1;                // the trace as the result names it, and its SHA-1
  std::vector<std::pair<std::string, double>> metrics;  // MetricValues (metrics.h): name, value in SI units
};
struct RecordedResult {
  std::string version;  // the ispsim that made it
  std::vector<RecordedRun> runs;
  // The metrics a sweep's table kept (its columns); empty: a run has every metric.
  std::vector<std::string> columns;
  bool sweep = false;  // a sweep's: a generated trace is named relative to the sweep's output folder
};
RecordedResult read_result_file(const std::string& path);

// `argument` quoted for a POSIX shell when it holds anything but [A-Za-z0-9_./=:,+-].
std::string shell_quoted(const std::string& argument);

}  // namespace ispsim::systems
