// `ispsim trace dump | stats | pack | gen`: inspect, build and generate workload traces.
#include <google/protobuf/text_format.h>

#include <boost/program_options.hpp>
#include <iostream>
#include <string>

#include "common/error.h"
#include "models/host/host_config.h"
#include "tools/ispsim/cli.h"
#include "tools/ispsim/cli_common.h"
#include "tools/ispsim/cmd_trace.h"
#include "tools/ispsim/cmd_engine_rag.h"
#include "traces/gen/budget_table.h"
#include "traces/gen/dataset_profiles.h"
#include "traces/gen/generator_settings.h"
#include "traces/gen/model_presets.h"
#include "traces/gen/shape_generator.h"
#include "traces/trace_format.h"
#include "traces/trace_io.h"
#include "traces/trace_stats.h"
#include "traces/trace_text.h"

namespace po = boost::program_options;

namespace ispsim::cli {

namespace {

const char* kTraceUsage =
    "usage: ispsim trace <action> [options]\n"
    "actions:\n"
    "  dump FILE [--text]       print the header, then one line per op (streaming);\n"
    "                           --text prints the text format instead (packable again)\n"
    "  stats FILE               op counts per program, phase and kind; KV load/append bytes;\n"
    "                           GEMM and LM-head FLOPs; measured durations\n"
    "  pack IN.txtpb OUT.trace  validate a hand-written text trace and write it as binary\n"
    "  gen --shape MODEL --dataset D --out FILE [--seed N] [--ratio R] [--docs K]\n"
    "      [--context-tokens N] [--query-tokens N] [--answer-tokens N]\n"
    "                           shape-only generator: one request of dataset profile D on\n"
    "                           model preset MODEL with seeded synthetic HKVD masks; writes\n"
    "                           FULL_PREFILL, PRECOMPUTED_BLEND and PRECOMPUTED_BLEND_FUSED.\n"
    "                           Defaults: seed 1, ratio 0.15, docs 5 (top-k); lengths drawn\n"
    "                           from the profile unless given (--context-tokens: per document)\n"
    "  gen --budget-table [--budget-bytes N] [--accounting physical|memllm-table2]\n"
    "      [--kv-copies N] [--workspace-bytes N] [--docs K]\n"
    "                           host memory budget: per model preset the most context tokens\n"
    "                           whose KV fits next to the weights and workspace, and per\n"
    "                           (model, dataset) pair whether the mean top-k request fits.\n"
    "                           Defaults: the host platform's DRAM budget and workspace\n"
    "                           (host.dram_capacity_bytes, host.workspace_bytes), docs 5;\n"
    "                           physical = 1 KV copy + workspace; memllm-table2 = 2 KV\n"
    "                           copies, no workspace (reproduces MemLLM's 40k tokens for\n"
    "                           OPT-350M in 8 GB); --kv-copies/--workspace-bytes override\n"
    "  gen --engine --model DIR --store STORE --docs ID,ID.. --query TEXT --out FILE\n"
    "      [--ratio R] [--tokens N] [--quant fp32|int16]\n"
    "                           engine-emitted trace: the same three programs from a real full\n"
    "                           prefill and CacheBlend run, with the engine's HKVD masks\n"
    "  gen --decode --shape MODEL --context-tokens C --out FILE [--steps A] ...\n"
    "                           shape-only decode programs of paper 1 (DECODE_ONLY, dense KV;\n"
    "                           DECODE_ONLY_DICTIONARY, compressed KV); see gen --decode --help\n"
    "  chakra-export TRACE OUT.et [--program P]\n"
    "                           write the trace (or its program P) as a Chakra execution trace\n"
    "  chakra-import IN.et OUT.trace [--shape MODEL]\n"
    "                           read a Chakra execution trace: an ispsim export is restored\n"
    "                           exactly; another (one decoder LLM inference) needs --shape and\n"
    "                           maps the ops ispsim models; prints one line per operator it\n"
    "                           does not model, with its node count\n"
    "Traces are validated while they stream; the first problem ends the command with\n"
    "one error line and exit code 2.\n";

}  // namespace

po::variables_map parse_trace_action(const std::string& action, const Args& args, po::options_description named,
                                     const std::vector<std::string>& positional_names) {
  named.add_options()("help,h", "show this help");
  po::options_description all;
  all.add(named);
  po::positional_options_description positional;
  for (const std::string& name : positional_names) {
    all.add_options()(name.c_str(), po::value<std::string>(), "");
    positional.add(name.c_str(), 1);
  }
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw BadInput("ispsim trace " + action, std::string(e.what()) + " (see 'ispsim trace --help')");
  }
  if (vm.count("help")) return vm;
  for (const std::string& name : positional_names)
    if (!vm.count(name))
      throw BadInput("ispsim trace " + action, "missing the " + name + " argument (see 'ispsim trace --help')");
  return vm;
}

const char* trace_usage() { return kTraceUsage; }

int trace_dump(const Args& args) {
  po::options_description named("trace dump options");
  named.add_options()("text", "print the text format of TraceText instead of one line per op");
  const auto vm = parse_trace_action("dump", args, named, {"file"});
  if (vm.count("help")) {
    std::cout << kTraceUsage;
    return 0;
  }
  trace::TraceReader reader(vm["file"].as<std::string>());
  trace::Op op;
  if (vm.count("text")) {
    google::protobuf::TextFormat::Printer printer;
    printer.SetInitialIndentLevel(1);
    std::string text;
    printer.PrintToString(reader.header(), &text);
    std::cout << "header {\n" << text << "}\n";
    while (std::cout && reader.next(op)) {
      printer.PrintToString(op, &text);
      std::cout << "op {\n" << text << "}\n";
    }
  } else {
    std::cout << trace::format_header(reader.header());
    while (std::cout && reader.next(op)) std::cout << trace::format_op(op) << "\n";
  }
  std::cout.flush();
  return 0;
}

int trace_stats(const Args& args) {
  const auto vm = parse_trace_action("stats", args, po::options_description("trace stats options"), {"file"});
  if (vm.count("help")) {
    std::cout << kTraceUsage;
    return 0;
  }
  trace::TraceReader reader(vm["file"].as<std::string>());
  trace::TraceStats totals(reader.header());
  trace::Op op;
  while (reader.next(op)) totals.add(op);
  // The header printed by stats carries the op counts of the file.
  totals.print(std::cout);
  std::cout.flush();
  return 0;
}

int trace_pack(const Args& args) {
  const auto vm = parse_trace_action("pack", args, po::options_description("trace pack options"), {"input", "output"});
  if (vm.count("help")) {
    std::cout << kTraceUsage;
    return 0;
  }
  check_outputs_distinct({{"ispsim trace pack OUTPUT", vm["output"].as<std::string>()}},
                         {{"ispsim trace pack INPUT", vm["input"].as<std::string>()}});
  trace::pack_text_trace(vm["input"].as<std::string>(), vm["output"].as<std::string>());
  return 0;
}

// Whole decimal number for `option`, within [min, max]; anything else is bad input
// (boost's lexical_cast would wrap "-5" around to a huge unsigned value).
uint64_t parse_count(const std::string& option, const std::string& text, uint64_t min, uint64_t max) {
  return tracegen::parse_whole_number(text, min, max, "ispsim trace gen: " + option);
}

// `trace gen --budget-table`: the memory accounting of traces/memory_accounting.h
// over every preset and profile (no trace is written).
namespace {

int budget_table(const Args& args) {
  po::options_description named("trace gen --budget-table options");
  named.add_options()
      ("budget-table", "print the host memory budget table")
      ("budget-bytes", po::value<std::string>(), "host DRAM budget in bytes (default host.dram_capacity_bytes)")
      ("accounting", po::value<std::string>(), "physical (default) or memllm-table2")
      ("kv-copies", po::value<std::string>(), "KV copies held at once, 1..8 (overrides the accounting)")
      ("workspace-bytes", po::value<std::string>(), "non-KV, non-weight bytes (overrides the accounting)")
      ("docs", po::value<std::string>(), "retrieved documents, top-k (default 5)");
  const auto vm = parse_trace_action("gen", args, named, {});
  if (vm.count("help")) {
    std::cout << kTraceUsage;
    return 0;
  }
  auto text = [&vm](const char* name) { return vm[name].as<std::string>(); };
  // The platforms' host defaults: the table describes what they will hold.
  const host::HostConfig host_defaults = host::HostConfig::from_params(schema::resolved(schema::HostParams{}, "host"));
  tracegen::BudgetOptions options;
  options.budget_bytes = host_defaults.dram_capacity_bytes;
  options.accounting_name = vm.count("accounting") ? text("accounting") : "physical";
  if (options.accounting_name == "physical") {
    options.kv_copies = 1;
    options.workspace_bytes = host_defaults.workspace_bytes;
  } else if (options.accounting_name == "memllm-table2") {
    options.kv_copies = 2;
    options.workspace_bytes = 0;
  } else {
    throw BadInput("ispsim trace gen: --accounting",
                   "unknown accounting '" + options.accounting_name + "' (known: physical, memllm-table2)");
  }
  // Ranges as host.dram_capacity_bytes and host.workspace_bytes (schema/host.proto).
  if (vm.count("budget-bytes"))
    options.budget_bytes = parse_count("--budget-bytes", text("budget-bytes"), 1048576, 1099511627776ull);
  if (vm.count("kv-copies")) options.kv_copies = uint32_t(parse_count("--kv-copies", text("kv-copies"), 1, 8));
  if (vm.count("workspace-bytes"))
    options.workspace_bytes = parse_count("--workspace-bytes", text("workspace-bytes"), 0, 1099511627776ull);
  if (vm.count("docs")) options.top_k = parse_count("--docs", text("docs"), 1, tracegen::kMaxGeneratedDocs);
  std::cout << tracegen::format_budget_table(options, tracegen::budget_table(options));
  std::cout.flush();
  return 0;
}

}  // namespace

int trace_gen(const Args& args) {
  for (const std::string& a : args) {
    if (a == "--engine") return trace_gen_engine(args);
    if (a == "--budget-table") return budget_table(args);
    if (a == "--decode") return trace_gen_decode(args);
  }
  po::options_description named("trace gen options");
  named.add_options()
      ("shape", po::value<std::string>(), "model preset (shape-only generator)")
      ("dataset", po::value<std::string>(), "dataset profile")
      ("out", po::value<std::string>(), "output trace file")
      ("seed", po::value<std::string>(), "seed of the draws (default 1)")
      ("ratio", po::value<std::string>(), "recomputation ratio 0..1 (default 0.15)")
      ("docs", po::value<std::string>(), "retrieved documents, top-k (default 5)")
      ("context-tokens", po::value<std::string>(), "context tokens of every document")
      ("query-tokens", po::value<std::string>(), "query tokens")
      ("answer-tokens", po::value<std::string>(), "answer tokens (decode steps)");
  const auto vm = parse_trace_action("gen", args, named, {});
  if (vm.count("help")) {
    std::cout << kTraceUsage << "model presets: " << tracegen::model_preset_names()
              << "\ndataset profiles: " << tracegen::dataset_profile_keys() << "\n";
    return 0;
  }
  const std::string where = "ispsim trace gen";
  if (!vm.count("shape"))
    throw BadInput(where, "missing --shape MODEL (the shape-only generator; known models: " +
                              tracegen::model_preset_names() + ")");
  if (!vm.count("dataset"))
    throw BadInput(where, "missing --dataset D (known: " + tracegen::dataset_profile_keys() + ")");
  if (!vm.count("out")) throw BadInput(where, "missing --out FILE");
  auto text = [&vm](const char* name) { return vm[name].as<std::string>(); };

  tracegen::ShapeOptions options;
  // Names first, so a typo is reported before any range problem.
  tracegen::apply_setting(options, "model", text("shape"), where + ": --shape");
  tracegen::apply_setting(options, "dataset", text("dataset"), where + ": --dataset");
  for (const char* flag : {"seed", "ratio", "docs", "context-tokens", "query-tokens", "answer-tokens"})
    if (vm.count(flag)) tracegen::apply_setting(options, tracegen::setting_of_flag(flag), text(flag), where + ": --" + flag);
  tracegen::generate_shape_trace(options, text("out"));
  return 0;
}


int trace(const Args& args) {
  if (args.empty())
    throw BadInput("ispsim trace", "missing the action (" + names_of(trace_actions()) + "; see ispsim trace --help)");
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kTraceUsage;
    return 0;
  }
  return run_subcommand(trace_actions(), args, "ispsim trace");
}

}  // namespace ispsim::cli
