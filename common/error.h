// Typed errors shared by every library. The CLI maps BadInput to exit code 2
// (one line on stderr) and anything else to exit code 1.
#pragma once

#include <stdexcept>
#include <string>

namespace ispsim {

// Bad user input: a file that is missing, corrupt or inconsistent, an unknown
// or out-of-range parameter. The message must name the file (or option) and
// the problem, e.g. "traces/x.trace: op 12: mask has 100 bits, expected 96".
class BadInput : public std::runtime_error {
 public:
  BadInput(const std::string& where, const std::string& problem)
      : std::runtime_error(where.empty() ? problem : where + ": " + problem) {}
};

}  // namespace ispsim
