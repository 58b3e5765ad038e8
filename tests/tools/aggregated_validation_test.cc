// Validation of the aggregated streaming mode on whole platforms:
// shape-only traces spanning model presets and dataset profiles, every
// MemLLM-study platform, each simulated with ssd.stream_model = PAGE_ACCURATE
// and = AGGREGATED through `ispsim compare`, each column class within its
// bound (see class_of) and the largest difference printed. Peak power is not
// compared: the aggregated mode
// charges a read's PCIe energy as one record over the read instead of one per
// page, which spreads bursts shorter than the 1 us peak window.
// Contexts are small so that the page-accurate runs stay fast.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/cli.h"

namespace ispsim::testing {
namespace {

using Table = std::map<std::string, std::map<std::string, std::string>>;  // platform -> column -> cell

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  for (char c : line) {
    if (c == ',') {
      cells.push_back(cell);
      cell.clear();
    } else {
      cell += c;
    }
  }
  cells.push_back(cell);
  return cells;
}

Table compare(const std::string& trace, const std::string& model, const std::string& sets) {
  const CliResult r = run_cli("compare -j 2 --format csv --trace " + shell_quote(trace) +
                              " --set ssd.stream_model=" + model + sets);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::istringstream in(r.out);
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> header = split_csv_line(line);
  Table table;
  while (std::getline(in, line)) {
    const std::vector<std::string> cells = split_csv_line(line);
    EXPECT_EQ(cells.size(), header.size()) << line;
    for (size_t i = 0; i < cells.size() && i < header.size(); ++i) table[cells[0]][header[i]] = cells[i];
  }
  return table;
}

// Column classes and the agreement each must reach (relative difference):
// the targets, 0.5 % in latency and 0.1 % in bytes and energy. Largest
// measured: latency 0.0069 %, energy 0.0080 % of the run's, bytes 0. Phases are
// bounded as a share of the run's latency (a phase of a few milliseconds would
// otherwise weigh as much as the run) and energies by phase or component as a
// share of the run's energy; against the phase itself the largest difference
// is printed (0.27 %: Llama-3.1-8B, MemLLM's exposed NAND time). Before the
// channels served same-instant requests in die order, the page-accurate mode
// followed the kernel's order of same-instant events, which gave program
// progress to other dies: energies then differed by up to 0.32 %.
struct ColumnClass {
  const char* name;
  double bound;
};
ColumnClass class_of(const std::string& column) {
  const auto ends_with = [&column](const std::string& suffix) {
    return column.size() > suffix.size() && column.compare(column.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (column == "latency_s") return {"end-to-end latency", 0.005};
  if (ends_with("_s")) return {"phase latency (share of the run's latency)", 0.005};
  if (ends_with("_bytes")) return {"bytes", 0.001};
  if (ends_with("_j")) return {"energy (share of the run's energy)", 0.001};
  if (column == "average_power_w") return {"average power", 0.001};
  return {nullptr, 0};  // not compared (names, status, speedup, peak power)
}

// `sets`: more --set options for both runs (e.g. a host large enough for the
// model, or -p with other platforms than the eight MemLLM-study ones).
void validate(const std::string& model, const std::string& dataset, const std::string& lengths,
              const std::string& sets = "", size_t platforms = 8) {
  const std::string trace = (scratch_dir() / (model + "_" + dataset + ".trace")).string();
  const CliResult gen = run_cli("trace gen --shape " + model + " --dataset " + dataset + " " + lengths +
                                " --out " + shell_quote(trace));
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  const Table accurate = compare(trace, "PAGE_ACCURATE", sets);
  const Table aggregated = compare(trace, "AGGREGATED", sets);
  ASSERT_EQ(accurate.size(), platforms);
  ASSERT_EQ(aggregated.size(), accurate.size());
  // Platforms that cannot hold the model (out_of_memory) have nothing to compare.
  for (const auto& [platform, row] : accurate) EXPECT_EQ(row.at("status"), "ok") << platform;
  std::map<std::string, std::pair<double, std::string>> worst;  // class -> (relative difference, where)
  for (const auto& [platform, row] : accurate) {
    SCOPED_TRACE(platform);
    ASSERT_EQ(aggregated.count(platform), 1u);
    const auto& other = aggregated.at(platform);
    EXPECT_EQ(row.at("status"), other.at("status"));
    for (const auto& [column, cell] : row) {
      const ColumnClass c = class_of(column);
      if (c.name == nullptr) continue;
      ASSERT_EQ(cell.empty(), other.at(column).empty()) << column;
      if (cell.empty()) continue;
      const double a = std::stod(cell), b = std::stod(other.at(column));
      // Energies by phase or component against the run's total (a phase of a
      // few microjoules, "other", would otherwise weigh as much as the run).
      const bool energy = class_of(column).name == class_of("energy_j").name;
      const bool phase = class_of(column).name == class_of("phase_s").name;
      const double scale = energy  ? std::stod(row.at("energy_j"))
                           : phase ? std::stod(row.at("latency_s"))
                                   : std::abs(a);
      EXPECT_NEAR(b, a, scale * c.bound + 1e-12) << column;
      const double relative = scale != 0 ? std::abs(b - a) / scale : 0;
      if (relative >= worst[c.name].first) worst[c.name] = {relative, platform + " " + column};
      const double own = a != 0 ? std::abs(b - a) / std::abs(a) : 0;
      if (phase && own >= worst["phase latency (against the phase)"].first)
        worst["phase latency (against the phase)"] = {own, platform + " " + column};
    }
  }
  for (const auto& [name, w] : worst)
    std::printf("%s %s: largest %s difference %.4f %% (%s)\n", model.c_str(), dataset.c_str(), name.c_str(),
                w.first * 100, w.second.c_str());
}

TEST(AggregatedValidation, SmolLM2_135M_HotpotQA) {
  validate("SmolLM2-135M", "hpt", "--context-tokens 600 --answer-tokens 4 --query-tokens 16");
}
TEST(AggregatedValidation, OPT_1_3B_CUAD) {
  validate("OPT-1.3B", "cad", "--context-tokens 500 --answer-tokens 4 --query-tokens 20");
}
TEST(AggregatedValidation, SmolLM2_360M_CovidQA) {
  validate("SmolLM2-360M", "cov", "--context-tokens 400 --answer-tokens 6 --query-tokens 12");
}
// The server platforms: their PCIe 5.0 x4 link outruns the controller's 8 GB/s
// bus, so back-to-back host reads are bus-bound. (An aggregated read that did
// not hold the bus let the next one overlap it: 32 % faster than page events
// on OPT-1.3B WikiQA.)
TEST(AggregatedValidation, OPT_1_3B_WikiQA_ServerPlatforms) {
  validate("OPT-1.3B", "wik", "--context-tokens 2000 --answer-tokens 4 --query-tokens 16",
           " -p platforms/server_gpu_precompute.textproto,platforms/server_gpu_fullcompute.textproto", 2);
}
// Its 15 GB of weights need more than the default 8 GiB host (32 GiB here).
TEST(AggregatedValidation, Llama_3_1_8B_TriviaQAWeb) {
  validate("Llama-3.1-8B", "web", "--context-tokens 300 --answer-tokens 3 --query-tokens 16 --docs 3",
           " --set host.dram_capacity_bytes=34359738368");
}

}  // namespace
}  // namespace ispsim::testing
