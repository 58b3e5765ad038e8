// Helpers of the `ispsim workload` CLI tests: files in the per-process scratch
// directory, generated streams, the rows of a per-request CSV and statistics.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/cli.h"
#include "tests/support/files.h"

namespace ispsim::testing {

inline std::string path(const std::string& name) { return (scratch_dir() / name).string(); }

// Generates the stream of `workload` (text) into `name`.stream; returns its path.
inline std::string stream(const std::string& name, const std::string& workload) {
  std::ofstream(path(name + ".txtpb")) << workload;
  const CliResult r = run_cli("workload gen --workload " + shell_quote(path(name + ".txtpb")) + " --out " +
                              shell_quote(path(name + ".stream")));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return path(name + ".stream");
}

// The rows of a per-request CSV, each as its columns by name.
inline std::vector<std::map<std::string, std::string>> csv_rows(const std::string& csv) {
  std::istringstream lines(read_text(csv));
  std::string header, line;
  std::getline(lines, header);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(lines, line)) {
    std::istringstream names(header), cells(line);
    auto& row = rows.emplace_back();
    for (std::string n, cell; std::getline(names, n, ',') && std::getline(cells, cell, ',');) row[n] = cell;
  }
  return rows;
}

// The value column of statistic `name` in a statistics CSV ("" if absent).
inline std::string statistic(const std::string& csv, const std::string& name) {
  std::istringstream lines(read_text(csv));
  const std::string key = name + ",";
  for (std::string line; std::getline(lines, line);)
    if (line.rfind(key, 0) == 0) return line.substr(key.size(), line.find(',', key.size()) - key.size());
  return "";
}

}  // namespace ispsim::testing
