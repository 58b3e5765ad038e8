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

// One entry of a command table: the name the user types, one line for the usage
// text, and the function that runs it. The top-level commands, and the actions
// of `trace` and `engine`, each live in one table (commands.cc) that the
// dispatch, the usage text and the error messages read.
struct Subcommand {
  const char* name;
  const char* summary;
  int (*run)(const Args&);
};
const std::vector<Subcommand>& commands();       // ispsim <command>
const std::vector<Subcommand>& trace_actions();  // ispsim trace <action>
const std::vector<Subcommand>& engine_actions(); // ispsim engine <action>
const std::vector<Subcommand>& workload_actions();  // ispsim workload <action>
// `ispsim --help`: every command with its summary, and the actions of those that have them.
std::string usage();
// Runs the entry of `table` that `args[0]` names with the rest of `args`;
// BadInput(`where`, ...) listing the table when it names none.
int run_subcommand(const std::vector<Subcommand>& table, const Args& args, const std::string& where);
// "a, b or c": the names of `table`, for messages.
std::string names_of(const std::vector<Subcommand>& table, const char* separator = ", ", const char* last_separator = " or ");

int run(const Args& args);       // cmd_run.cc: simulate a trace on a platform
int compare(const Args& args);   // cmd_compare.cc: one trace on several platforms
int trace(const Args& args);     // cmd_trace.cc: trace dump | stats | pack | gen | chakra-*
int trace_dump(const Args& args);
int trace_stats(const Args& args);
int trace_pack(const Args& args);
int trace_gen(const Args& args);
int describe(const Args& args);  // cmd_describe.cc: platform/module parameters
int engine(const Args& args);    // cmd_engine.cc: the functional engine's actions
int engine_ppl(const Args& args);
int engine_generate(const Args& args);
int engine_precompute(const Args& args);
int engine_blend(const Args& args);
// engine_blend_quality: cmd_engine_rag.h; engine_dict_train, engine_kv_quality,
// engine_kv_trace: cmd_engine_dict.h.
int trace_gen_decode(const Args& args);  // cmd_trace_decode.cc: trace gen --decode (paper 1 decode programs)
int sweep(const Args& args);     // cmd_sweep.cc: many runs from a sweep file, Slurm shards
int reproduce(const Args& args); // cmd_reproduce.cc: a paper's figures into one folder
int reproduce_workloads(const Args& args);  // cmd_reproduce_workloads.cc: request streams' figures
int workload(const Args& args);  // cmd_workload.cc: workload gen | dump (request streams)
int workload_gen(const Args& args);
int workload_dump(const Args& args);
int workload_serve(const Args& args);
int workload_slo(const Args& args);
int workload_trace(const Args& args);
int rerun(const Args& args);     // cmd_rerun.cc: a result file's runs again, checked against it

}  // namespace ispsim::cli
