// The command tables of the CLI: what `ispsim`, `ispsim trace` and `ispsim
// engine` dispatch on, list in their usage and name in their errors.
#include <sstream>

#include "common/error.h"
#include "tools/ispsim/cli.h"
#include "tools/ispsim/cmd_engine_dict.h"
#include "tools/ispsim/cmd_engine_rag.h"
#include "tools/ispsim/cmd_trace.h"

namespace ispsim::cli {

const std::vector<Subcommand>& commands() {
  static const std::vector<Subcommand> table = {
      {"run", "simulate a trace on a platform (--platform P --trace T [--stats F] [--vcd F])", run},
      {"compare", "simulate a trace on several platforms and tabulate them (--trace T [--platforms ...])", compare},
      {"trace", "inspect, write or generate a trace", trace},
      {"describe", "print the parameters of a platform or module with unit, default and meaning", describe},
      {"engine", "the functional integer-only LLM engine", engine},
      {"sweep", "many simulations from a sweep file, locally (-j) or as a Slurm job array", sweep},
      {"reproduce", "a paper's figures and tables into one folder: memllm | cim | workloads", reproduce},
      {"workload", "sustained workloads: draw a request stream from a workload file", workload},
      {"rerun", "rerun a result file's runs from its recorded configuration and check the numbers", rerun},
  };
  return table;
}

const std::vector<Subcommand>& trace_actions() {
  static const std::vector<Subcommand> table = {
      {"dump", "print the header, then one line per op", trace_dump},
      {"stats", "op counts, KV bytes and FLOPs", trace_stats},
      {"pack", "validate a hand-written text trace and write it as binary", trace_pack},
      {"gen", "generate a trace: shape-only requests, engine-emitted, decode programs, the memory budget table",
       trace_gen},
      {"chakra-export", "write a trace as a Chakra execution trace", trace_chakra_export},
      {"chakra-import", "read a Chakra execution trace into a trace, reporting the ops not modelled",
       trace_chakra_import},
  };
  return table;
}

const std::vector<Subcommand>& workload_actions() {
  static const std::vector<Subcommand> table = {
      {"gen", "draw the request stream of a workload file", workload_gen},
      {"dump", "print a request stream, one line per record", workload_dump},
      {"serve", "serve a request stream on a platform: TTFT, TBT, latency, throughput", workload_serve},
      {"slo", "the highest Poisson rate whose p99 TTFT (or latency) meets an SLO, with its bracket", workload_slo},
      {"trace", "the single-request trace that serve simulates for one request", workload_trace},
  };
  return table;
}

const std::vector<Subcommand>& engine_actions() {
  static const std::vector<Subcommand> table = {
      {"ppl", "perplexity of a text file", engine_ppl},
      {"generate", "greedy continuation of a prompt", engine_generate},
      {"precompute", "KV store of documents", engine_precompute},
      {"blend", "CacheBlend answer from a KV store", engine_blend},
      {"blend-quality", "blended against full prefill over recomputation ratios", engine_blend_quality},
      {"dict-train", "learn the per-layer K/V dictionaries", engine_dict_train},
      {"kv-quality", "dictionary-compressed KV cache against dense: quality and bytes loaded", engine_kv_quality},
      {"kv-trace", "decode trace with dictionary ops", engine_kv_trace},
  };
  return table;
}

std::string names_of(const std::vector<Subcommand>& table, const char* separator, const char* last_separator) {
  std::string out;
  for (size_t i = 0; i < table.size(); ++i)
    out += std::string(i == 0 ? "" : i + 1 == table.size() ? last_separator : separator) + table[i].name;
  return out;
}

std::string usage() {
  std::ostringstream s;
  s << "usage: ispsim <command> [options]\ncommands:\n";
  for (const Subcommand& c : commands()) {
    s << "  " << c.name << std::string(std::string(c.name).size() >= 9 ? 1 : 10 - std::string(c.name).size(), ' ')
      << c.summary << "\n";
    const std::vector<Subcommand>* actions = c.run == trace      ? &trace_actions()
                                             : c.run == engine   ? &engine_actions()
                                             : c.run == workload ? &workload_actions()
                                                                 : nullptr;
    if (actions) s << "            " << names_of(*actions, " | ", " | ") << "\n";
  }
  s << "run 'ispsim <command> --help' for the options of a command; 'ispsim --version' for the version\n";
  return s.str();
}

int run_subcommand(const std::vector<Subcommand>& table, const Args& args, const std::string& where) {
  for (const Subcommand& c : table)
    if (args[0] == c.name) return c.run(Args(args.begin() + 1, args.end()));
  throw BadInput(where, "unknown action '" + args[0] + "' (expected " + names_of(table) + ")");
}

}  // namespace ispsim::cli
