// Shared by the `ispsim trace` actions (cmd_trace*.cc).
#pragma once

#include <boost/program_options.hpp>
#include <string>
#include <vector>

#include "tools/ispsim/cli.h"

namespace ispsim::cli {

// Parses `args` (after the action name) with the given named options and
// positional names; every parse problem is bad input of this action.
boost::program_options::variables_map parse_trace_action(const std::string& action, const Args& args,
                                                         boost::program_options::options_description named,
                                                         const std::vector<std::string>& positional_names);
// `ispsim trace --help`.
const char* trace_usage();

int trace_chakra_export(const Args& args);  // cmd_trace_chakra.cc
int trace_chakra_import(const Args& args);

}  // namespace ispsim::cli
