// ispsim rerun RESULT.json [--trace T] [-j N]
// Reruns every run of a result file (`run --format json`, `compare --json` or
// `compare --format json`) from what the file alone records: each run's
// resolved platform configuration and the trace, checked against its SHA-1.
// Prints one line per run; exit 0 when every metric came out identical, 1 when
// one differs (the simulator is deterministic: a difference is a bug or another
// version), 2 for bad input (not a result file, a trace that is not the one
// recorded).
#include <boost/program_options.hpp>

#include <cstdlib>
#include <iostream>

#include "common/error.h"
#include "common/sha1.h"
#include "platforms/systems/child_process.h"
#include "platforms/systems/metrics.h"
#include "platforms/systems/report_cells.h"
#include "platforms/systems/run_summary_io.h"
#include "platforms/systems/system_registry.h"
#include "schema/platform_loader.h"
#include "tools/ispsim/cli.h"
#include "tools/ispsim/cli_common.h"
#include "tools/ispsim/sweep/results.h"

namespace ispsim::cli {
namespace {

namespace po = boost::program_options;

using systems::RecordedResult;
using systems::RecordedRun;

// "" when the rerun has the recorded metrics exactly, else what differs.
std::string differences(const systems::MetricValues& recorded, const systems::MetricValues& now) {
  std::string out;
  for (size_t i = 0; i < std::max(recorded.size(), now.size()); ++i) {
    const bool same = i < recorded.size() && i < now.size() && recorded[i] == now[i];
    if (same) continue;
    out += out.empty() ? "" : "; ";
    out += i < recorded.size() ? recorded[i].first + " was " + systems::shortest_number(recorded[i].second) : "";
    out += i < now.size() ? (i < recorded.size() ? ", now " : "") + now[i].first + " = " +
                                systems::shortest_number(now[i].second)
                          : " is gone";
  }
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

}  // namespace

int rerun(const Args& args) {
  std::string result_path, trace_path;
  long long jobs = 1;
  po::options_description desc("rerun options");
  desc.add_options()
      ("help,h", "print this help")
      ("result", po::value(&result_path)->required(), "a result file: run or compare output in JSON")
      ("trace,t", po::value(&trace_path), "the trace, if it moved (default: the path the result records)")
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
  const RecordedResult recorded = systems::read_result_file(result_path);
  if (trace_path.empty()) trace_path = recorded.trace;
  if (file_sha1(trace_path) != recorded.trace_sha1)
    throw BadInput(trace_path, "SHA-1 " + file_sha1(trace_path) + " differs from the result's trace (" +
                                   recorded.trace_sha1 + "): not the trace the result was made from");
  if (recorded.version != sweep::ispsim_version())
    std::cerr << "ispsim: note: the result was made by ispsim " << recorded.version << ", this is "
              << sweep::ispsim_version() << "\n";
  std::vector<schema::LoadedPlatform> platforms;
  for (size_t i = 0; i < recorded.runs.size(); ++i)
    platforms.push_back(rebuilt_platform(recorded.runs[i], result_path + ": runs[" + std::to_string(i) + "]"));
  std::vector<std::function<std::string()>> tasks;
  for (const schema::LoadedPlatform& p : platforms)
    tasks.push_back([&p, &trace_path] { return systems::summary_to_json(systems::run_system(p, trace_path, {})); });
  const std::vector<systems::ChildResult> results = systems::run_in_children(tasks, job_count);
  int differing = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    const RecordedRun& run = recorded.runs[i];
    if (results[i].exit_code != 0) throw BadInput(run.platform, results[i].output);
    const std::string diff =
        differences(run.metrics, systems::metric_values(systems::summary_from_json(results[i].output, run.platform)));
    std::cout << run.platform << ": " << (diff.empty() ? "reproduced (" + std::to_string(run.metrics.size()) +
                                                             " metrics identical)"
                                                       : "DIFFERS: " + diff)
              << "\n";
    differing += !diff.empty();
  }
  return differing ? 1 : 0;
}

}  // namespace ispsim::cli
