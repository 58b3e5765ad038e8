// `ispsim reproduce workloads` end to end on a tiny stream (two systems, one
// dataset, two requests): its tables are consistent with each other (the knee's
// rates are the loads times the fastest capacity, the SLO is three times the
// fastest mean service time, the energy is the unloaded run's), the figures and the
// index exist; bad input leaves no folder.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "tests/support/cli.h"
#include "tests/support/files.h"

namespace fs = std::filesystem;
using ispsim::testing::CliResult;
using ispsim::testing::read_text;
using ispsim::testing::run_cli;
using ispsim::testing::scratch_dir;
using ispsim::testing::shell_quote;

namespace {

using Row = std::map<std::string, std::string>;

std::vector<Row> csv_rows(const fs::path& path) {
  std::istringstream lines(read_text(path));
  std::string header, line;
  std::getline(lines, header);
  std::vector<std::string> names;
  std::istringstream h(header);
  for (std::string n; std::getline(h, n, ',');) names.push_back(n);
  std::vector<Row> rows;
  while (std::getline(lines, line)) {
    Row row;
    std::istringstream cells(line);
    for (size_t i = 0; i < names.size() && std::getline(cells, row[names[i]], ','); ++i) {
    }
    rows.push_back(row);
  }
  return rows;
}

double num(const Row& r, const std::string& column) { return std::stod(r.at(column)); }

TEST(ReproduceWorkloads, TablesFiguresAndIndexOfATinyStream) {
  const fs::path out = scratch_dir() / "rw";
  const CliResult r = run_cli("reproduce workloads --out " + shell_quote(out.string()) +
                              " --requests 2 --datasets tat --platforms memllm,gpu_precompute --model SmolLM2-135M -j 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<Row> unloaded = csv_rows(out / "unloaded.csv"), knee = csv_rows(out / "knee.csv"),
                         slo = csv_rows(out / "slo.csv");
  ASSERT_EQ(unloaded.size(), 2u);
  ASSERT_EQ(knee.size(), 14u);  // seven loads x two systems
  ASSERT_EQ(slo.size(), 2u);
  double capacity = 0;
  for (const Row& u : unloaded) {
    EXPECT_EQ(u.at("requests"), "2");
    capacity = std::max(capacity, 1 / num(u, "latency_mean_s"));
  }
  for (const Row& k : knee) EXPECT_NEAR(num(k, "rate_per_s"), num(k, "load") * capacity, 1e-5 * capacity);
  for (size_t i = 0; i < slo.size(); ++i) {
    EXPECT_NEAR(num(slo[i], "slo_ttft_p99_s"), 3 / capacity, 1e-8 / capacity);
    EXPECT_EQ(slo[i].at("energy_mean_j"), unloaded[i].at("energy_mean_j"));
    const std::string bracket = slo[i].at("bracket");
    EXPECT_TRUE(bracket == "between" || bracket == "at least high" || bracket == "below low") << bracket;
    if (bracket == "between") {
      EXPECT_LT(num(slo[i], "met_rate_per_s"), num(slo[i], "missed_rate_per_s"));
    }
  }
  EXPECT_EQ(csv_rows(out / "requests" / "tat_memllm.csv").size(), 2u);
  for (const char* figure : {"knee", "cdf", "slo_energy"})
    for (const char* ext : {".png", ".svg"}) EXPECT_TRUE(fs::exists(out / "figures" / (std::string(figure) + ext)));
  const std::string index = read_text(out / "index.md");
  EXPECT_NE(index.find("| tat | MemLLM |"), std::string::npos) << index;
  EXPECT_NE(index.find("![knee](figures/knee.png)"), std::string::npos);
}

// AiF with a host DRAM budget its weights do not fit (workload serve exits 3
// on it) beside MemLLM: the run goes on, AiF's rows say "out of memory" in
// every table and the figures and index are written.
TEST(ReproduceWorkloads, ASystemOutOfMemoryIsMarkedAndTheOthersRun) {
  const fs::path out = scratch_dir() / "rw_oom", platform = scratch_dir() / "aif_small.textproto";
  std::ofstream(platform) << read_text(ISPSIM_SOURCE_DIR "/platforms/aif.textproto")
                          << "host { dram_capacity_bytes: 1048576 }\n";
  const CliResult r = run_cli("reproduce workloads --out " + shell_quote(out.string()) +
                              " --requests 2 --datasets tat --platforms memllm," + shell_quote(platform.string()) +
                              " --model SmolLM2-135M -j 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<Row> unloaded = csv_rows(out / "unloaded.csv"), knee = csv_rows(out / "knee.csv"),
                         slo = csv_rows(out / "slo.csv");
  ASSERT_EQ(unloaded.size(), 2u);
  ASSERT_EQ(knee.size(), 14u);
  ASSERT_EQ(slo.size(), 2u);
  for (const std::vector<Row>* table : {&unloaded, &knee})
    for (const Row& row : *table) EXPECT_EQ(row.at("status"), row.at("system") == "AiF" ? "out of memory" : "served");
  EXPECT_EQ(slo[0].at("system"), "MemLLM");
  EXPECT_NE(slo[0].at("bracket"), "out of memory");
  EXPECT_EQ(slo[1].at("bracket"), "out of memory");
  EXPECT_EQ(slo[1].at("energy_mean_j"), "");
  for (const char* figure : {"knee", "cdf", "slo_energy"})
    EXPECT_TRUE(fs::exists(out / "figures" / (std::string(figure) + ".png")));
  EXPECT_NE(read_text(out / "index.md").find("| tat | AiF | "), std::string::npos);
  EXPECT_NE(read_text(out / "index.md").find("| out of memory |"), std::string::npos);
}

TEST(ReproduceWorkloads, BadInputLeavesNoFolder) {
  for (const std::string& bad : {std::string("--platforms b1"), std::string("--requests 0"),
                                 std::string("--datasets nope --platforms memllm")}) {
    const fs::path out = scratch_dir() / "bad";
    const CliResult r = run_cli("reproduce workloads --out " + shell_quote(out.string()) + " " + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
    EXPECT_EQ(r.err_lines(), 1) << r.err;
    EXPECT_FALSE(fs::exists(out)) << bad;
  }
}

}  // namespace
