// Helpers shared by the platform tests: scratch files and running the CLI.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace ispsim::test {

// A per-process scratch directory (each TEST runs in its own process).
inline std::filesystem::path scratch_dir() {
  auto dir = std::filesystem::temp_directory_path() /
             ("ispsim_platforms_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::string write_file(const std::string& name, const std::string& text) {
  const auto path = scratch_dir() / name;
  std::ofstream(path) << text;
  return path.string();
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

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
};

// Runs `ispsim <args>` and captures its exit code, stdout and stderr;
// `env` ("NAME=value", already shell-safe) is set for the command only.
inline CliResult run_cli(const std::string& args, const std::string& env = "") {
  const auto out = scratch_dir() / "cli.out";
  const auto err = scratch_dir() / "cli.err";
  const std::string command = (env.empty() ? "" : env + " ") + std::string(ISPSIM_CLI) + " " + args + " >" +
                              shell_quote(out.string()) + " 2>" + shell_quote(err.string());
  const int status = std::system(command.c_str());
  CliResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = read_file(out);
  result.err = read_file(err);
  return result;
}

inline int count_lines(const std::string& text) {
  int lines = 0;
  for (char c : text) lines += c == '\n';
  return lines;
}

}  // namespace ispsim::test
