// Runs a sweep (or one shard of it) on this machine: generates the traces it
// needs, simulates every unfinished run in a child process (`jobs` at a time,
// platforms/systems/child_process.h), saves each result as it finishes and
// writes the tidy tables at the end.
//
// Output folder:
//   traces/<key>.trace           generated traces (kept: a rerun reuses them)
//   runs/<id>.json               one finished run each (results.h)
//   results.csv, results.json    the whole sweep (no --shard), or
//   shards/shard-<I>-of-<N>.csv/.json  the runs of shard I (--shard I/N)
#pragma once

#include <string>
#include <vector>

#include "schema/platform_loader.h"
#include "tools/ispsim/sweep/results.h"
#include "tools/ispsim/sweep/sweep_plan.h"

namespace ispsim::sweep {

struct Shard {
  unsigned index = 0, count = 1;  // count 1: the whole sweep
};

// Parses "I/N" (0 <= I < N); BadInput("--shard", ...) otherwise.
Shard parse_shard(const std::string& text);

// The runs of a shard: every N-th run of the plan, starting at I (round robin,
// so runs of one trace spread over the shards). Deterministic.
std::vector<const PlannedRun*> shard_runs(const SweepPlan& plan, const Shard& shard);

// The results files of a shard ("results" for the whole sweep), without extension.
std::string results_stem(const std::string& out_dir, const Shard& shard);

struct RunnerOptions {
  std::string out_dir;
  unsigned jobs = 1;
  Shard shard;
  bool progress = false;  // done/total, failures and ETA on stderr (a terminal)
  std::string command_line;  // recorded in the results' provenance
};

struct SweepOutcome {
  size_t runs = 0, skipped = 0, ok = 0, oom = 0, errors = 0;
};

SweepOutcome run_sweep(const SweepPlan& plan, const RunnerOptions& options);

// One simulation of a platform on a trace, as a sweep records it (no id): its
// metrics, status, configuration, settings and trace. `ispsim rerun` runs the
// runs of a result again through it.
RunResult simulate_platform(const schema::LoadedPlatform& platform, const std::string& trace);

}  // namespace ispsim::sweep
