// ispsim rerun RESULT.json [--trace T] [-j N]
// Reruns every run of a result file (`run --format json`, `compare --json` or
// `compare --format json`, a sweep's results.json or runs/<id>.json) from what
// the file alone records: each run's settings, checked to resolve to its
// recorded configuration, and its trace, checked against its SHA-1.
// Prints one line per run; exit 0 when every metric came out identical, 1 when
// one differs (the simulator is deterministic: a difference is a bug or another
// version), 2 for bad input (not a result file, a trace that is not the one
// recorded).
#include <boost/program_options.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "common/error.h"
#include "common/sha1.h"
#include "platforms/systems/child_process.h"
#include "platforms/systems/metrics.h"
#include "platforms/systems/report_cells.h"
#include "schema/platform_loader.h"
#include "tools/ispsim/cli.h"
#include "tools/ispsim/cli_common.h"
#include "tools/ispsim/sweep/results.h"
#include "tools/ispsim/sweep/runner.h"

namespace ispsim::cli {
namespace {

namespace po = boost::program_options;

using systems::RecordedResult;
using systems::RecordedRun;

// `now` restricted to the metrics a result kept (`columns`; empty: all of them).
systems::MetricValues kept(const systems::MetricValues& now, const std::vector<std::string>& columns) {
  if (columns.empty()) return now;
  systems::MetricValues out;
  for (const auto& value : now)
    if (std::find(columns.begin(), columns.end(), value.first) != columns.end()) out.push_back(value);
  return out;
}

const double* value_of(const systems::MetricValues& values, const std::string& name) {
  for (const auto& [n, v] : values)
    if (n == name) return &v;
  return nullptr;
}

// "" when the rerun has the recorded metrics exactly, else what differs, by name.
std::string differences(const systems::MetricValues& recorded, const systems::MetricValues& now) {
  std::string out;
  const auto add = [&out](const std::string& what) { out += (out.empty() ? "" : "; ") + what; };
  for (const auto& [name, was] : recorded) {
    const double* v = value_of(now, name);
    if (!v) add(name + " was " + systems::shortest_number(was) + ", is gone");
    else if (*v != was) add(name + " was " + systems::shortest_number(was) + ", now " + systems::shortest_number(*v));
  }
  for (const auto& [name, v] : now)
    if (!value_of(recorded, name)) add(name + " = " + systems::shortest_number(v) + " is new");
  return out;
}

// The run's platform from its recorded settings; its resolution must be the
// recorded configuration (other defaults would give other numbers).
schema::LoadedPlatform rebuilt_platform(const RecordedRun& run, const std::string& where) {
  schema::LoadedPlatform p = schema::load_platform_text(run.settings, where + ".settings");
  const std::string now = schema::configuration_text(p);
  if (now != run.configuration) {
    size_t line = 0, at = 0;
    while (at < now.size() && at < run.configuration.size() && now[at] == run.configuration[at]) line += now[at++] == '\n';
    throw BadInput(where + ".configuration", "this ispsim resolves the settings differently (line " +
                                                 std::to_string(line + 1) + " differs): its defaults changed");
  }
  return p;
}

// --trace: every run reads the given trace instead, when they all read one trace.
void use_trace(RecordedResult& recorded, const std::string& trace_path) {
  if (trace_path.empty()) return;
  for (RecordedRun& run : recorded.runs) {
    if (run.trace_sha1 != recorded.runs.front().trace_sha1)
      throw BadInput("--trace", "the result's runs read different traces; rerun it where they are");
    run.trace = trace_path;
  }
}

// A sweep names its generated traces relative to its output folder: the
// folder of results.json, or the one above runs/<id>.json and shards/.
void find_sweep_traces(RecordedResult& recorded, const std::string& result_path) {
  if (!recorded.sweep) return;
  std::filesystem::path folder = std::filesystem::path(result_path).parent_path();
  if (folder.filename() == "runs" || folder.filename() == "shards") folder = folder.parent_path();
  for (RecordedRun& run : recorded.runs) {
    const std::filesystem::path in_folder = folder / run.trace;
    if (!run.trace.empty() && std::filesystem::path(run.trace).is_relative() && std::filesystem::exists(in_folder))
      run.trace = in_folder.string();
  }
}

// A trace whose bytes are not the recorded ones would give other numbers.
void check_trace(const RecordedRun& run) {
  const std::string sha1 = file_sha1(run.trace);
  if (sha1 != run.trace_sha1)
    throw BadInput(run.trace, "SHA-1 " + sha1 + " differs from the result's trace (" + run.trace_sha1 +
                                  "): not the trace the result was made from");
}

}  // namespace

int rerun(const Args& args) {
  std::string result_path, trace_path;
  long long jobs = 1;
  po::options_description desc("rerun options");
  desc.add_options()
      ("help,h", "print this help")
      ("result", po::value(&result_path)->required(),
       "a result file: run or compare output in JSON, a sweep's results.json or one of its runs/<id>.json")
      ("trace,t", po::value(&trace_path),
       "the trace, if it moved (default: the path the result records; for a result whose runs read one trace)")
      ("jobs,j", po::value(&jobs), "simulations at once (default 1)");
  po::positional_options_description positional;
  positional.add("result", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(desc).positional(positional).run(), vm);
    if (vm.count("help")) {
      std::cout << "usage: ispsim rerun RESULT.json [options]\n" << desc;
      return 0;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw BadInput("ispsim rerun", e.what());
  }
  const unsigned job_count = checked_count(jobs, "--jobs", 1, kMaxJobs);
  RecordedResult recorded = systems::read_result_file(result_path);
  if (recorded.version != sweep::ispsim_version())
    std::cerr << "ispsim: note: the result was made by ispsim " << recorded.version << ", this is "
              << sweep::ispsim_version() << "\n";
  find_sweep_traces(recorded, result_path);
  use_trace(recorded, trace_path);
  std::vector<schema::LoadedPlatform> platforms;
  std::vector<const RecordedRun*> rerun;
  for (size_t i = 0; i < recorded.runs.size(); ++i) {
    const RecordedRun& run = recorded.runs[i];
    if (run.status != "ok" && run.status != "oom" && run.status != "out_of_memory") {
      std::cout << run.label << ": not rerun (status " << run.status << ": no metrics)\n";
      continue;
    }
    check_trace(run);
    platforms.push_back(rebuilt_platform(run, result_path + ": runs[" + std::to_string(i) + "]"));
    rerun.push_back(&run);
  }
  std::vector<std::function<std::string()>> tasks;
  for (size_t i = 0; i < platforms.size(); ++i)
    tasks.push_back([&p = platforms[i], &trace = rerun[i]->trace] {
      return sweep::result_to_json(sweep::simulate_platform(p, trace));
    });
  const std::vector<systems::ChildResult> results = systems::run_in_children(tasks, job_count);
  int differing = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    const RecordedRun& run = *rerun[i];
    if (results[i].exit_code != 0) throw BadInput(run.label, results[i].output);
    const sweep::RunResult now = sweep::result_from_json(results[i].output, run.label);
    const std::string diff = differences(run.metrics, kept(now.metrics, recorded.columns));
    std::cout << run.label << ": "
              << (diff.empty() ? "reproduced (" + std::to_string(run.metrics.size()) + " metrics identical)"
                               : "DIFFERS: " + diff)
              << "\n";
    differing += !diff.empty();
  }
  return differing ? 1 : 0;
}

}  // namespace ispsim::cli
