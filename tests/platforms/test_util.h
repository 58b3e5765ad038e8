// Helpers of the platform tests: running the CLI comes from tests/support/cli.h;
// writing a scratch file is this suite's own.
#pragma once

#include <fstream>
#include <string>

#include "tests/support/cli.h"

namespace ispsim::testing {

// Writes `text` to `name` in the per-process scratch directory; returns its path.
inline std::string write_file(const std::string& name, const std::string& text) {
  const auto path = scratch_dir() / name;
  std::ofstream(path) << text;
  return path.string();
}

}  // namespace ispsim::testing
