// `ispsim trace chakra-export | chakra-import`: Chakra execution traces (traces/chakra).
#include <iostream>

#include "common/error.h"
#include "tools/ispsim/cli_common.h"
#include "tools/ispsim/cmd_trace.h"
#include "traces/chakra/chakra_export.h"
#include "traces/chakra/chakra_import.h"

namespace po = boost::program_options;

namespace ispsim::cli {

int trace_chakra_export(const Args& args) {
  po::options_description named("trace chakra-export options");
  named.add_options()("program", po::value<std::string>(), "export only this program, e.g. FULL_PREFILL");
  const auto vm = parse_trace_action("chakra-export", args, named, {"trace", "output"});
  if (vm.count("help")) {
    std::cout << trace_usage();
    return 0;
  }
  const std::string input = vm["trace"].as<std::string>(), output = vm["output"].as<std::string>();
  check_outputs_distinct({{"ispsim trace chakra-export OUTPUT", output}},
                         {{"ispsim trace chakra-export TRACE", input}});
  trace::Program program = trace::PROGRAM_UNSPECIFIED;
  if (vm.count("program") &&
      (!trace::Program_Parse(vm["program"].as<std::string>(), &program) || program == trace::PROGRAM_UNSPECIFIED))
    throw BadInput("ispsim trace chakra-export: --program",
                   "unknown program '" + vm["program"].as<std::string>() + "'");
  const chakra::ExportCounts n = chakra::export_chakra(input, output, program);
  std::cout << "wrote " << output << ": " << n.comp_nodes << " COMP_NODE, " << n.mem_load_nodes
            << " MEM_LOAD_NODE, " << n.mem_store_nodes << " MEM_STORE_NODE nodes\n";
  return 0;
}

int trace_chakra_import(const Args& args) {
  po::options_description named("trace chakra-import options");
  named.add_options()("shape", po::value<std::string>(), "model preset of a trace not written by ispsim");
  const auto vm = parse_trace_action("chakra-import", args, named, {"input", "output"});
  if (vm.count("help")) {
    std::cout << trace_usage();
    return 0;
  }
  const std::string input = vm["input"].as<std::string>(), output = vm["output"].as<std::string>();
  check_outputs_distinct({{"ispsim trace chakra-import OUTPUT", output}},
                         {{"ispsim trace chakra-import INPUT", input}});
  chakra::ImportOptions options;
  if (vm.count("shape")) options.shape = vm["shape"].as<std::string>();
  std::cout << chakra::import_chakra(input, output, options).format();
  return 0;
}

}  // namespace ispsim::cli
