#include "tools/ispsim/sweep/slurm.h"

#include <sys/wait.h>

#include <boost/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "common/atomic_file.h"
#include "common/error.h"
#include "tools/ispsim/sweep/results.h"

namespace ispsim::sweep {
namespace fs = std::filesystem;
namespace json = boost::json;
namespace {

// Single quotes for bash.
std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A submission that reached no controller: where to get one.
const char* const kNoControllerHint =
    " (without a reachable Slurm controller: start the repository's single-node cluster with "
    "'bash tools/slurm/local_cluster.sh start DIR' and export the SLURM_CONF it prints)";

}  // namespace

std::string write_slurm_script(const SweepPlan& plan, const SlurmOptions& o) {
  const fs::path dir = fs::path(o.out_dir) / "slurm";
  fs::create_directories(dir / "logs");
  const std::string n = std::to_string(o.shards);
  const std::string path = (dir / (plan.spec.name() + ".sbatch")).string();
  AtomicFile f(path);
  std::ostream& s = f.stream();
  s << "#!/bin/bash\n"
    << "# Slurm job array of the sweep " << plan.spec.name() << " (" << plan.runs.size() << " runs in " << n
    << " shards), written by `ispsim sweep --slurm`.\n"
    << "# Task I runs shard I/" << n << " and writes " << o.out_dir << "/shards/shard-I-of-" << n << ".csv/.json;\n"
    << "# merge them with: " << o.ispsim << " sweep " << o.spec << " --out " << o.out_dir << " --collect\n"
    << "#SBATCH --job-name=ispsim-" << plan.spec.name() << "\n"
    << "#SBATCH --array=0-" << o.shards - 1 << "\n"
    << "#SBATCH --ntasks=1\n"
    << "#SBATCH --cpus-per-task=" << o.cpus_per_task << "\n"
    << "#SBATCH --chdir=" << o.workdir << "\n"
    << "#SBATCH --output=" << (dir / "logs").string() << "/shard-%a-of-" << n << ".log\n";
  for (const std::string& extra : o.sbatch_options) s << "#SBATCH " << extra << "\n";
  s << "set -euo pipefail\n"
    << "exec " << quote(o.ispsim) << " sweep " << quote(o.spec) << " --out " << quote(o.out_dir)
    << " --shard \"${SLURM_ARRAY_TASK_ID}/" << n << "\" -j \"${SLURM_CPUS_PER_TASK:-1}\"\n";
  f.commit();
  return path;
}

std::string submit_slurm_script(const std::string& script, bool wait) {
  const std::string command = std::string("sbatch --parsable") + (wait ? " --wait" : "") + " " + quote(script) + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) throw BadInput("sbatch", "cannot start sbatch");
  std::string output;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) output.append(buf, n);
  const int status = pclose(pipe);
  const size_t end = output.find_last_not_of("\n");
  output = end == std::string::npos ? "" : output.substr(0, end + 1);
  // With --wait, sbatch exits non-zero when a task failed; the collect after it
  // reports which. Without a job id, the submission itself failed.
  const std::string first_line = output.substr(0, output.find('\n'));
  const bool has_id = !first_line.empty() && std::regex_match(first_line, std::regex("[0-9]+(;.*)?"));
  if (!has_id || (!wait && (!WIFEXITED(status) || WEXITSTATUS(status) != 0))) {
    std::string one_line = output;
    for (char& c : one_line)
      if (c == '\n') c = ' ';
    // Nothing of a failed submission stays behind: the script, and the
    // folders written for it (OUT/slurm/logs, OUT) when they are empty.
    std::error_code ignored;
    const fs::path dir = fs::path(script).parent_path();
    fs::remove(script, ignored);
    for (const fs::path& d : {dir / "logs", dir, dir.parent_path()}) fs::remove(d, ignored);
    const bool no_controller =
        one_line.empty() || std::regex_search(one_line, std::regex("controller|configuration source|slurm\\.conf|SLURM_CONF"));
    throw BadInput("sbatch", "submission failed: " +
                                 (one_line.empty() ? std::string("no output (is sbatch installed?)") : one_line) +
                                 (no_controller ? kNoControllerHint : ""));
  }
  return first_line.substr(0, first_line.find(';'));
}

CollectReport collect_shards(const SweepPlan& plan, const std::string& out_dir, unsigned shards,
                             const std::string& command_line) {
  CollectReport report;
  const fs::path dir = fs::path(out_dir) / "shards";
  if (shards == 0) {
    std::set<unsigned> counts;
    const std::regex name("shard-([0-9]+)-of-([0-9]+)\\.json");
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      std::smatch m;
      const std::string file = entry.path().filename().string();
      if (std::regex_match(file, m, name)) counts.insert(static_cast<unsigned>(std::stoul(m[2])));
    }
    if (counts.empty()) throw BadInput(dir.string(), "holds no shard results (shard-I-of-N.json) to collect");
    if (counts.size() > 1) throw BadInput(dir.string(), "holds shards of different counts N; name one with --shards N");
    shards = *counts.begin();
  }
  report.shards = shards;
  std::map<std::string, size_t> index_of;
  for (size_t i = 0; i < plan.runs.size(); ++i) index_of.emplace(plan.runs[i].id, i);
  std::map<std::string, RunResult> found;
  for (unsigned i = 0; i < shards; ++i) {
    const std::string path = results_stem(out_dir, Shard{i, shards}) + ".json";
    if (!fs::exists(path)) {
      report.missing.push_back(i);
      continue;
    }
    size_t failed = 0, rows = 0;
    try {
      const json::object o = json::parse(read_file(path)).as_object();
      if (json::value_to<std::string>(o.at("sweep")) != plan.spec.name())
        throw BadInput(path, "is a shard of sweep '" + json::value_to<std::string>(o.at("sweep")) + "', not '" +
                                 plan.spec.name() + "'");
      for (const json::value& row : o.at("runs").as_array()) {
        RunResult r = result_from_json(json::serialize(row), path);
        if (!index_of.count(r.id))
          throw BadInput(path, "holds run " + r.id + ", which this sweep does not have (was the sweep file changed?)");
        // The shard table's numbers went through Boost.JSON's parser, which can
        // read one 1 ulp off; the run's own file (runs/, beside the shards on
        // the shared folder) keeps them as exact text.
        if (std::optional<RunResult> exact = load_result(out_dir, r.id)) r = *exact;
        failed += r.status == "error";
        ++rows;
        found[r.id] = r;
      }
    } catch (const BadInput&) {
      throw;
    } catch (const std::exception& e) {
      throw BadInput(path, std::string("not a shard results file: ") + e.what());
    }
    if (failed) report.failed.push_back("shard " + std::to_string(i) + ": " + std::to_string(failed) + " of " +
                                        std::to_string(rows) + " runs failed");
  }
  std::vector<Row> rows;
  for (const PlannedRun& run : plan.runs) {
    auto it = found.find(run.id);
    if (it != found.end()) rows.push_back(Row{&run, it->second});
  }
  report.rows = rows.size();
  report.runs = plan.runs.size();
  const std::string stem = results_stem(out_dir, Shard{});
  write_results(plan, rows, stem + ".csv", stem + ".json", command_line);
  return report;
}

}  // namespace ispsim::sweep
