// Subcommands of the `ispsim` CLI. Each takes the arguments after its own name
// and returns the process exit code. Library errors propagate as exceptions:
// main() prints BadInput as one line and exits 2, anything else exits 1.
#pragma once

#include <string>
#include <vector>

namespace ispsim::cli {

using Args = std::vector<std::string>;

// `ispsim run`: the platform could not hold the workload (the summary shows OOM).
constexpr int kExitOutOfMemory = 3;

int run(const Args& args);       // cmd_run.cc: simulate a trace on a platform
int compare(const Args& args);   // cmd_compare.cc: one trace on several platforms
int trace(const Args& args);     // cmd_trace.cc: trace dump | stats
int describe(const Args& args);  // cmd_describe.cc: platform/module parameters
int engine(const Args& args);    // cmd_engine.cc: functional engine (ppl, generate)
int trace_gen_decode(const Args& args);  // cmd_trace_decode.cc: trace gen --decode (paper 1 decode programs)
int sweep(const Args& args);     // cmd_sweep.cc: many runs from a sweep file, Slurm shards
int reproduce(const Args& args); // cmd_reproduce.cc: a paper's figures into one folder

}  // namespace ispsim::cli
