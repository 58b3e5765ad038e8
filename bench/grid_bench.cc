// The MemLLM evaluation grid: 8 dataset profiles x 6 models x
// the 8 systems of the MemLLM study. Generates one shape-only trace per (model,
// dataset) (seed 1), simulates it on every platform (each in a child process,
// `jobs` at a time) and prints:
//  - per system and dataset, the mean speedup over GPU-FullCompute across the
//    models, arithmetic and geometric; cells a system cannot hold (OOM) are
//    counted apart and left out of the means;
//  - MemLLM's PCIe bytes per purpose, one row per request, by context length;
//  - the grid's wall time and simulated NAND page reads per wall-clock second.
//
// usage: ispsim_bench_grid [jobs (default 2)] [models (comma list)] [datasets (comma list)]
//                          [max context tokens|-] [max answer tokens|-] [settings (comma list)]
// Settings are `--set` overrides for every system, e.g. ssd.stream_model=AGGREGATED.
// The caps (ShapeOptions::max_context_tokens / max_answer_tokens: drawn documents
// scaled down together, drawn answers cut) keep the ctest acceptance run short;
// without them every request has the profiles' published lengths.
// Exit status 1 if any run failed (an out-of-memory report is not a failure).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <systemc>
#include <vector>

#include "bench/bench_util.h"
#include "schema/platform_loader.h"
#include "platforms/systems/blend_system.h"
#include "platforms/systems/child_process.h"
#include "platforms/systems/metrics.h"
#include "platforms/systems/run_summary_io.h"
#include "traces/gen/shape_generator.h"

namespace {

using namespace ispsim;

// The MemLLM study's systems, in its tables' order (their platform files' group).
const std::vector<std::string> kPlatforms = schema::platforms_in_group("memllm_study");
size_t platform_index(const std::string& name) {
  const auto it = std::find(kPlatforms.begin(), kPlatforms.end(), name);
  if (it == kPlatforms.end()) throw std::runtime_error("no platform " + name + " in the group memllm_study");
  return size_t(it - kPlatforms.begin());
}
const size_t kBaseline = platform_index("gpu_fullcompute");
const size_t kMemLlm = platform_index("memllm");

struct Cell {
  std::string model, dataset, trace;
  uint64_t context_tokens = 0;
  std::vector<std::optional<systems::RunSummary>> runs;  // per platform; empty: the run failed
  std::vector<double> cpu_s;                              // per platform: the run's CPU time, s
};

std::vector<Cell> generate_cells(const std::vector<std::string>& models, const std::vector<std::string>& datasets,
                                 std::optional<uint64_t> max_context, std::optional<uint64_t> max_answer,
                                 const std::filesystem::path& dir) {
  std::vector<Cell> cells;
  for (const auto& model : models)
    for (const auto& dataset : datasets) {
      tracegen::ShapeOptions options;
      options.model = model;
      options.dataset = dataset;
      options.max_context_tokens = max_context;
      options.max_answer_tokens = max_answer;
      Cell cell{model, dataset, (dir / (model + "-" + dataset + ".trace")).string(), 0, {}, {}};
      const tracegen::BlendRequest request = tracegen::make_shape_request(options);
      cell.context_tokens = std::accumulate(request.doc_tokens.begin(), request.doc_tokens.end(), uint64_t{0});
      tracegen::generate_shape_trace(options, cell.trace);
      cells.push_back(std::move(cell));
    }
  return cells;
}

// Runs every (cell, platform) pair; returns the number of failed runs.
uint64_t simulate(std::vector<Cell>& cells, const std::vector<schema::LoadedPlatform>& platforms, unsigned jobs) {
  std::vector<std::function<std::string()>> tasks;
  for (const Cell& cell : cells)
    for (const auto& platform : platforms)
      tasks.push_back([&platform, trace = cell.trace] {
        return systems::summary_to_json(systems::run_blend_system(platform, trace, systems::RunOptions{}));
      });
  const std::vector<systems::ChildResult> results = systems::run_in_children(tasks, jobs);
  uint64_t failures = 0;
  for (size_t c = 0; c < cells.size(); ++c)
    for (size_t p = 0; p < platforms.size(); ++p) {
      const systems::ChildResult& r = results[c * platforms.size() + p];
      cells[c].cpu_s.push_back(r.cpu_s);
      const std::string where = cells[c].model + " " + cells[c].dataset + " on " + kPlatforms[p];
      if (r.exit_code != 0) {
        ++failures;
        std::fprintf(stderr, "%s failed: %s\n", where.c_str(), r.output.c_str());
        cells[c].runs.emplace_back();
        continue;
      }
      cells[c].runs.push_back(systems::summary_from_json(r.output, where));
    }
  return failures;
}

void print_speedups(const std::vector<Cell>& cells, const std::vector<std::string>& datasets) {
  std::printf("mean speedup over GPU-FullCompute across the models (x): arithmetic / geometric; "
              "OOM = cells the system cannot hold (left out of the means)\n");
  std::printf("%-16s", "system");
  for (const auto& d : datasets) std::printf(" %24s", d.c_str());
  std::printf("\n");
  for (size_t p = 0; p < kPlatforms.size(); ++p) {
    std::printf("%-16s", kPlatforms[p].c_str());
    for (const auto& dataset : datasets) {
      std::vector<double> speedups;
      unsigned oom = 0, missing = 0;
      for (const Cell& cell : cells) {
        if (cell.dataset != dataset) continue;
        const auto& run = cell.runs[p];
        const auto& base = cell.runs[kBaseline];
        if (run && run->out_of_memory) ++oom;
        else if (!run || !base || base->out_of_memory) ++missing;
        else speedups.push_back(base->statistic(systems::kRunLatency, "ns") /
                                run->statistic(systems::kRunLatency, "ns"));
      }
      std::string text = "-";
      if (!speedups.empty()) {
        const double n = static_cast<double>(speedups.size());
        double sum = 0, log_sum = 0;
        for (double s : speedups) sum += s, log_sum += std::log(s);
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.2f/%.2f", sum / n, std::exp(log_sum / n));
        text = buf;
      }
      if (oom > 0) text += " " + std::to_string(oom) + "OOM";
      if (missing > 0) text += " " + std::to_string(missing) + "fail";
      std::printf(" %24s", text.c_str());
    }
    std::printf("\n");
  }
}

// The PCIe purposes a run moved bytes for: system.pcie.<direction>.<purpose>_bytes (metrics.h).
constexpr const char* kPcie = "system.pcie.";

void print_memllm_pcie(std::vector<const Cell*> cells) {
  std::sort(cells.begin(), cells.end(),
            [](const Cell* a, const Cell* b) { return a->context_tokens < b->context_tokens; });
  std::set<std::string> purposes;
  for (const Cell* cell : cells)
    if (cell->runs[kMemLlm])
      for (const auto& [name, bytes] : cell->runs[kMemLlm]->stats)
        if (name.rfind(kPcie, 0) == 0 && name != systems::kPcieHostToDeviceBytes &&
            name != systems::kPcieDeviceToHostBytes)
          purposes.insert(name.substr(std::string(kPcie).size()));
  std::printf("\n%s PCIe bytes per purpose (MB, MB = 1e6 bytes), by the request's context length\n",
              kPlatforms[kMemLlm].c_str());
  std::printf("%-22s %14s", "model dataset", "context (tok)");
  for (const auto& p : purposes) std::printf(" %28s", p.c_str());
  std::printf("\n");
  for (const Cell* cell : cells) {
    if (!cell->runs[kMemLlm]) continue;
    std::printf("%-22s %14llu", (cell->model + " " + cell->dataset).c_str(),
                static_cast<unsigned long long>(cell->context_tokens));
    for (const auto& p : purposes) {
      std::printf(" %28.3f", cell->runs[kMemLlm]->statistic(kPcie + p) / 1e6);
    }
    std::printf("\n");
  }
}

// Where the grid's CPU time goes: per platform, and the slowest runs.
void print_cpu_time(const std::vector<Cell>& cells) {
  std::printf("\nCPU time per platform (s, summed over the cells)\n");
  for (size_t p = 0; p < kPlatforms.size(); ++p) {
    double sum = 0;
    for (const Cell& cell : cells) sum += cell.cpu_s[p];
    std::printf("%-16s %10.1f\n", kPlatforms[p].c_str(), sum);
  }
  std::vector<std::pair<double, std::string>> runs;
  for (const Cell& cell : cells)
    for (size_t p = 0; p < kPlatforms.size(); ++p)
      runs.emplace_back(cell.cpu_s[p], cell.model + " " + cell.dataset + " on " + kPlatforms[p]);
  std::sort(runs.rbegin(), runs.rend());
  std::printf("slowest runs (CPU s)\n");
  for (size_t i = 0; i < std::min<size_t>(10, runs.size()); ++i)
    std::printf("%10.1f  %s\n", runs[i].first, runs[i].second.c_str());
}

}  // namespace

int sc_main(int argc, char** argv) {
  const unsigned jobs = argc > 1 ? static_cast<unsigned>(std::stoul(argv[1])) : 2;
  const std::vector<std::string> models =
      bench::split_list(argc > 2 ? argv[2] : "SmolLM2-135M,SmolLM2-360M,SmolLM2-1.7B,OPT-350M,OPT-1.3B,OPT-2.7B");
  const std::vector<std::string> datasets = bench::split_list(argc > 3 ? argv[3] : "fin,tat,cov,cad,prv,wik,web,hpt");
  std::optional<uint64_t> max_context, max_answer;
  // "-" leaves a cap out.
  if (argc > 4 && std::string(argv[4]) != "-") max_context = std::stoull(argv[4]);
  if (argc > 5 && std::string(argv[5]) != "-") max_answer = std::stoull(argv[5]);
  // Settings for every system, e.g. ssd.stream_model=AGGREGATED for uncapped contexts.
  const std::vector<std::string> overrides = argc > 6 ? bench::split_list(argv[6]) : std::vector<std::string>{};
  std::vector<schema::LoadedPlatform> platforms;
  for (const auto& name : kPlatforms) platforms.push_back(schema::load_platform(name, overrides));
  const auto dir = std::filesystem::temp_directory_path() / ("ispsim_grid_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  struct RemoveOnExit {
    std::filesystem::path dir;
    ~RemoveOnExit() { std::filesystem::remove_all(dir); }
  } remove_on_exit{dir};

  std::vector<Cell> cells = generate_cells(models, datasets, max_context, max_answer, dir);
  const auto t0 = std::chrono::steady_clock::now();
  const uint64_t failures = simulate(cells, platforms, jobs);
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  uint64_t pages = 0, out_of_memory = 0;
  for (const Cell& cell : cells)
    for (size_t p = 0; p < platforms.size(); ++p) {
      const auto& run = cell.runs[p];
      if (!run) continue;
      if (run->out_of_memory) ++out_of_memory;
      else pages += static_cast<uint64_t>(run->statistic(systems::kNandBytesRead)) / platforms[p].platform.nand().page_bytes();
    }
  print_speedups(cells, datasets);
  std::vector<const Cell*> cell_ptrs;
  for (const Cell& cell : cells) cell_ptrs.push_back(&cell);
  print_memllm_pcie(cell_ptrs);
  print_cpu_time(cells);
  std::printf("\ngrid: %zu traces x %zu platforms = %zu runs, %llu failed, %llu out of memory, %u at a time\n",
              cells.size(), platforms.size(), cells.size() * platforms.size(),
              static_cast<unsigned long long>(failures), static_cast<unsigned long long>(out_of_memory), jobs);
  std::printf("wall time: %.1f s (trace generation excluded)\n", wall_s);
  std::printf("simulated NAND page reads: %llu, %.3f M per wall-clock second\n", static_cast<unsigned long long>(pages),
              static_cast<double>(pages) / wall_s / 1e6);
  return failures ? 1 : 0;
}

int main(int argc, char** argv) {
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 1);
  return sc_core::sc_elab_and_sim(argc, argv);
}
