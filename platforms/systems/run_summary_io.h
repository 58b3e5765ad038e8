// RunSummary to and from JSON, so that `ispsim compare` can run each platform in
// a child process (SystemC elaborates once per process) and collect the results.
#pragma once

#include <string>

#include "platforms/systems/report.h"

namespace ispsim::systems {

std::string summary_to_json(const RunSummary& summary);
// Throws BadInput(where, ...) on malformed input.
RunSummary summary_from_json(const std::string& text, const std::string& where);

}  // namespace ispsim::systems
