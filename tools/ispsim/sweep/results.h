// The results of a sweep: one row per run with its inputs, the system's display
// name, status, message, metrics and the ispsim version that produced it.
//
// Finished runs are kept one file each, <out>/runs/<id>.json, written
// atomically: an interrupted sweep loses nothing finished, and a rerun skips
// every run with a file of status ok or oom (errors are retried). The tidy
// tables (CSV and JSON) are written from those files, in the sweep's order, so
// the same runs always give the same bytes, wherever they ran.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tools/ispsim/sweep/metrics.h"
#include "tools/ispsim/sweep/sweep_plan.h"

namespace ispsim::sweep {

// "<project version>+g<commit>" of this build: the CMake project version and
// the git commit it was built from (written at every build, cmake/version.cmake).
std::string ispsim_version();

struct RunResult {
  std::string id;
  std::string system;   // the platform's display name ("MemLLM-Base"); empty if it never loaded
  std::string status;   // "ok", "oom" (out of memory: no metrics) or "error"
  std::string message;  // why, for oom and error
  Metrics metrics;
  std::string version;
  std::string configuration;  // the resolved platform textproto (empty if it never loaded)
  std::string settings;       // the parameters that make it (schema::settings_text; empty if it never loaded)
  std::string trace;          // the trace the run read: as the sweep file names it, or a generated one as
                              // traces/<key>.trace in the output folder (empty if none was made)
  std::string trace_sha1;     // of that trace
};

std::string result_to_json(const RunResult& r);
// BadInput(where, ...) when `text` is not a run result.
RunResult result_from_json(const std::string& text, const std::string& where);

// <out>/runs/<id>.json
std::string run_file(const std::string& out_dir, const std::string& id);
// Writes a run's file atomically.
void save_result(const std::string& out_dir, const RunResult& r);
// The run's file, if there is one (a corrupt file is BadInput naming it).
std::optional<RunResult> load_result(const std::string& out_dir, const std::string& id);

struct Row {
  const PlannedRun* run;
  RunResult result;
};

// The tidy table. Columns: id, one per axis, system, status, message, the
// metrics (the sweep's `metric` list, or systems::metric_columns of the rows:
// the same columns whatever platforms ran), version, trace_sha1,
// configuration_sha1. CSV: RFC 4180, empty cells for absent metrics.
// JSON: {"schema_version", "provenance": {"ispsim_version", "command_line"},
// "sweep", "axes", "metrics", "runs": [{"id", "inputs": {...}, "system",
// "status", "message", "metrics": {...}, "version", "trace", "trace_sha1",
// "configuration", "settings"}]}.
void write_results(const SweepPlan& plan, const std::vector<Row>& rows, const std::string& csv_path,
                   const std::string& json_path, const std::string& command_line);

}  // namespace ispsim::sweep
