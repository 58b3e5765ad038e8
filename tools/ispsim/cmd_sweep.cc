// ispsim sweep SPEC [--out DIR] [-j N] [--shard I/N] [--list]
// ispsim sweep SPEC --slurm [--shards N] [--sbatch OPTION]... [--submit [--wait]]
// ispsim sweep SPEC --collect [--shards N]
// Many simulations from one sweep file (tools/ispsim/sweep/README.md).
#include <boost/program_options.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <thread>

#include "common/error.h"
#include "tools/ispsim/cli.h"
#include "tools/ispsim/cli_common.h"
#include "tools/ispsim/provenance.h"
#include "tools/ispsim/sweep/runner.h"
#include "tools/ispsim/sweep/slurm.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace ispsim::cli {
namespace {

std::string absolute(const std::string& path) { return fs::absolute(path).lexically_normal().string(); }

std::string self_path() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find the ispsim binary (/proc/self/exe): " + ec.message());
  return p.string();
}

// Prints the collect report; 0 when every shard is there and no run failed.
int report_collect(const sweep::CollectReport& r, const std::string& out_dir) {
  int code = 0;
  if (!r.missing.empty()) {
    std::string list;
    for (unsigned i : r.missing) list += (list.empty() ? "" : ",") + std::to_string(i);
    std::cerr << "ispsim sweep: collect: " << r.missing.size() << " of " << r.shards << " shards missing (" << list
              << "): rerun each with --shard I/" << r.shards << "\n";
    code = 1;
  }
  for (const std::string& f : r.failed) {
    std::cerr << "ispsim sweep: collect: " << f << " (see " << out_dir << "/results.csv)\n";
    code = 1;
  }
  return code;
}

}  // namespace

int sweep(const Args& args) {
  std::string spec_path, out_dir, shard_text;
  long long jobs_value = std::max(1u, std::thread::hardware_concurrency()), shards_value = 0;
  std::vector<std::string> sbatch_options;
  po::options_description desc("sweep options");
  desc.add_options()
      ("help,h", "print this help")
      ("spec", po::value(&spec_path), "the sweep file (textproto, tools/ispsim/sweep/sweep.proto)")
      ("out,o", po::value(&out_dir), "output folder (default: sweep-<name>)")
      ("jobs,j", po::value(&jobs_value), "simulations at once (default: the number of CPUs)")
      ("shard", po::value(&shard_text), "run only shard I of N (I/N, 0-based): every N-th run from I")
      ("list", "print the runs (id and inputs) of the sweep or shard, run nothing")
      ("slurm", "write a Slurm job-array script: task I runs --shard I/N")
      ("shards", po::value(&shards_value), "number of shards (--slurm: array tasks, default min(runs, 16); --collect: default from the files)")
      ("sbatch", po::value(&sbatch_options)->composing(), "extra #SBATCH option for the script, e.g. --partition=short (repeatable)")
      ("submit", "with --slurm: submit the script with sbatch")
      ("wait", "with --submit: wait for the job array, then collect")
      ("collect", "merge the shards' results into results.csv/.json and report missing or failed shards");
  po::positional_options_description positional;
  positional.add("spec", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(desc).positional(positional).run(), vm);
    if (vm.count("help")) {
      std::cout << "usage: ispsim sweep SPEC [options]\n" << desc;
      return 0;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw BadInput("ispsim sweep", e.what());
  }
  if (spec_path.empty()) throw BadInput("ispsim sweep", "missing the sweep file (ispsim sweep SPEC)");
  const unsigned jobs = checked_count(jobs_value, "--jobs", 1, kMaxJobs);
  const unsigned shards = vm.count("shards") ? checked_count(shards_value, "--shards", 1, kMaxShards) : 0;
  const bool slurm = vm.count("slurm"), collect = vm.count("collect");
  if (slurm + collect + vm.count("shard") + vm.count("list") > 1 && !(vm.count("list") && vm.count("shard")))
    throw BadInput("ispsim sweep", "--slurm, --collect and --shard exclude each other");
  if (vm.count("submit") && !slurm) throw BadInput("--submit", "needs --slurm");
  if (vm.count("wait") && !vm.count("submit")) throw BadInput("--wait", "needs --submit");
  if (!sbatch_options.empty() && !slurm) throw BadInput("--sbatch", "needs --slurm");
  for (const std::string& option : sbatch_options)  // each becomes one "#SBATCH" line of the job script
    for (const char c : option)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
        throw BadInput("--sbatch", "'" + option.substr(0, option.find_first_of("\r\n")) + "...' holds a control character");
  if (vm.count("shards") && !slurm && !collect) throw BadInput("--shards", "needs --slurm or --collect");

  const sweep::SweepPlan plan = sweep::load_sweep(spec_path);
  if (out_dir.empty()) out_dir = "sweep-" + plan.spec.name();
  sweep::Shard shard;
  if (vm.count("shard")) shard = sweep::parse_shard(shard_text);

  if (vm.count("list")) {
    for (const sweep::PlannedRun* run : sweep::shard_runs(plan, shard)) {
      std::cout << run->id;
      for (const auto& [axis, value] : run->inputs) std::cout << "  " << axis << "=" << value;
      std::cout << "\n";
    }
    return 0;
  }
  if (collect) return report_collect(sweep::collect_shards(plan, out_dir, shards, command_line()), out_dir);
  if (slurm) {
    sweep::SlurmOptions o;
    o.ispsim = self_path();
    o.spec = absolute(spec_path);
    o.out_dir = absolute(out_dir);
    o.workdir = fs::current_path().string();
    o.shards = shards ? shards : static_cast<unsigned>(std::min<size_t>(plan.runs.size(), 16));
    if (o.shards == 0) throw BadInput("--shards", "must be at least 1");
    o.cpus_per_task = vm.count("jobs") ? jobs : 1;
    o.sbatch_options = sbatch_options;
    const std::string script = sweep::write_slurm_script(plan, o);
    if (!vm.count("submit")) {
      std::cout << script << "\n";
      return 0;
    }
    const std::string job = sweep::submit_slurm_script(script, vm.count("wait"));
    if (!vm.count("wait")) {
      std::cout << "submitted job " << job << " (" << o.shards << " array tasks); collect with: ispsim sweep "
                << spec_path << " --out " << out_dir << " --collect\n";
      return 0;
    }
    return report_collect(sweep::collect_shards(plan, out_dir, o.shards, command_line()), out_dir);
  }

  sweep::RunnerOptions options;
  options.out_dir = out_dir;
  options.command_line = command_line();
  options.jobs = jobs;
  options.shard = shard;
  options.progress = isatty(STDERR_FILENO);
  const sweep::SweepOutcome outcome = sweep::run_sweep(plan, options);
  if (outcome.errors) {
    std::cerr << "ispsim sweep: " << outcome.errors << " of " << outcome.runs << " runs failed (status error in "
              << sweep::results_stem(out_dir, shard) << ".csv); a rerun retries them\n";
    return 1;
  }
  return 0;
}

}  // namespace ispsim::cli
