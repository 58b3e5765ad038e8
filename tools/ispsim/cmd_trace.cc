// `ispsim trace dump | stats | pack`: inspect and build workload traces.
#include <google/protobuf/text_format.h>

#include <boost/program_options.hpp>
#include <iostream>
#include <string>

#include "common/error.h"
#include "tools/ispsim/cli.h"
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
    "Traces are validated while they stream; the first problem ends the command with\n"
    "one error line and exit code 2.\n";

// Parses `args` (after the action name) with the given named options and
// positional names; every parse problem is bad input of this action.
po::variables_map parse(const std::string& action, const Args& args, po::options_description named,
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

int dump(const Args& args) {
  po::options_description named("trace dump options");
  named.add_options()("text", "print the text format of TraceText instead of one line per op");
  const auto vm = parse("dump", args, named, {"file"});
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
    while (reader.next(op)) {
      printer.PrintToString(op, &text);
      std::cout << "op {\n" << text << "}\n";
    }
  } else {
    std::cout << trace::format_header(reader.header());
    while (reader.next(op)) std::cout << trace::format_op(op) << "\n";
  }
  std::cout.flush();
  return 0;
}

int stats(const Args& args) {
  const auto vm = parse("stats", args, po::options_description("trace stats options"), {"file"});
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

int pack(const Args& args) {
  const auto vm = parse("pack", args, po::options_description("trace pack options"), {"input", "output"});
  if (vm.count("help")) {
    std::cout << kTraceUsage;
    return 0;
  }
  trace::pack_text_trace(vm["input"].as<std::string>(), vm["output"].as<std::string>());
  return 0;
}

}  // namespace

int trace(const Args& args) {
  if (args.empty()) throw BadInput("ispsim trace", "missing the action (dump, stats or pack; see ispsim trace --help)");
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kTraceUsage;
    return 0;
  }
  const Args rest(args.begin() + 1, args.end());
  if (args[0] == "dump") return dump(rest);
  if (args[0] == "stats") return stats(rest);
  if (args[0] == "pack") return pack(rest);
  throw BadInput("ispsim trace", "unknown action '" + args[0] + "' (expected dump, stats or pack)");
}

}  // namespace ispsim::cli
