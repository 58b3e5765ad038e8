// Scale-out of a sweep on a Slurm cluster: a job-array script whose task I runs
// `ispsim sweep SPEC --shard I/N`, its submission, and the merge of the
// shards' results files (`--collect`).
#pragma once

#include <string>
#include <vector>

#include "tools/ispsim/sweep/runner.h"

namespace ispsim::sweep {

struct SlurmOptions {
  std::string ispsim;     // absolute path of the ispsim binary the tasks run
  std::string spec;       // absolute path of the sweep file
  std::string out_dir;    // absolute path of the output folder (shared with the nodes)
  std::string workdir;    // absolute folder the tasks start in (relative paths of the sweep resolve there)
  unsigned shards = 1;    // array tasks
  unsigned cpus_per_task = 1;  // each task's -j
  std::vector<std::string> sbatch_options;  // extra "#SBATCH" lines, e.g. "--partition=short"
};

// Writes <out>/slurm/<name>.sbatch (atomically) and returns its path.
std::string write_slurm_script(const SweepPlan& plan, const SlurmOptions& options);

// Runs `sbatch --parsable [--wait] SCRIPT`; returns the job id. A failure to
// submit removes the script and its folders when empty, then throws
// BadInput("sbatch", <its output>), with a hint where no controller answered.
std::string submit_slurm_script(const std::string& script, bool wait);

struct CollectReport {
  unsigned shards = 0;
  std::vector<unsigned> missing;           // shards without a results file
  std::vector<std::string> failed;         // "shard I: K of M runs failed"
  size_t rows = 0, runs = 0;
};

// Merges <out>/shards/shard-I-of-N.{json} into <out>/results.csv/.json (rows in
// the sweep's order; rows of missing shards are left out). `shards` 0: N is
// taken from the files found (they must agree).
CollectReport collect_shards(const SweepPlan& plan, const std::string& out_dir, unsigned shards,
                             const std::string& command_line);

}  // namespace ispsim::sweep
