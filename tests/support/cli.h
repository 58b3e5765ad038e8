// Running the `ispsim` CLI from a test: exit code, stdout and stderr, plus a
// per-process scratch directory (every TEST runs in its own process).
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/support/files.h"

namespace ispsim::testing {

// Single-quotes an argument for /bin/sh.
inline std::string shell_quote(const std::string& arg) {
  std::string quoted = "'";
  for (char c : arg) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
  // Number of lines on stderr (a bad input must produce exactly one).
  int err_lines() const {
    int n = 0;
    for (char c : err) n += c == '\n';
    return n;
  }
};

// Runs `ispsim <args>` (args already shell-quoted where needed) in the source
// tree, so repository paths such as traces/samples/... may be relative.
// `env` ("NAME=value ...", already shell-safe) is set for this command only.
inline CliResult run_cli(const std::string& args, const std::string& env = "") {
  const auto out = scratch_dir() / "cli.out";
  const auto err = scratch_dir() / "cli.err";
  const std::string command = "cd " + shell_quote(ISPSIM_SOURCE_DIR) + " && " + (env.empty() ? "" : env + " ") +
                              ISPSIM_CLI + " " + args + " </dev/null >" + shell_quote(out.string()) + " 2>" +
                              shell_quote(err.string());
  const int status = std::system(command.c_str());
  CliResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = read_text(out);
  result.err = read_text(err);
  // The captures are not part of what a test looks at in the scratch directory.
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return result;
}

}  // namespace ispsim::testing
