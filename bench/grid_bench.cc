// The MemLLM evaluation grid: 8 dataset profiles x 6 models x 6 platforms.
// Generates one shape-only trace per (model, dataset) (seed 1), simulates it on
// every platform (each in a child process, `jobs` at a time) and prints the wall
// time of the grid and the simulated NAND page reads per wall-clock second,
// plus each cell's MemLLM speedup over GPU-FullCompute.
//
// usage: ispsim_bench_grid [jobs (default 2)] [models (comma list)] [datasets (comma list)]
//                          [max context tokens] [max answer tokens]
// The caps (ShapeOptions::max_context_tokens / max_answer_tokens: drawn documents
// scaled down together, drawn answers cut) keep the ctest acceptance run short;
// without them every request has the profiles' published lengths.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <systemc>
#include <vector>

#include "bench/bench_util.h"
#include "platforms/schema/platform_loader.h"
#include "platforms/systems/blend_system.h"
#include "platforms/systems/child_process.h"
#include "platforms/systems/run_summary_io.h"
#include "traces/gen/shape_generator.h"

int sc_main(int argc, char** argv) {
  using namespace ispsim;
  const unsigned jobs = argc > 1 ? static_cast<unsigned>(std::stoul(argv[1])) : 2;
  const std::vector<std::string> models =
      bench::split_list(argc > 2 ? argv[2] : "SmolLM2-135M,SmolLM2-360M,SmolLM2-1.7B,OPT-350M,OPT-1.3B,OPT-2.7B");
  const std::vector<std::string> datasets = bench::split_list(argc > 3 ? argv[3] : "fin,tat,cov,cad,prv,wik,web,hpt");
  std::optional<uint64_t> max_context, max_answer;
  if (argc > 4) max_context = std::stoull(argv[4]);
  if (argc > 5) max_answer = std::stoull(argv[5]);
  const std::vector<std::string> platform_names = {"gpu_fullcompute", "gpu_precompute", "memllm_base",
                                                   "memllm_fused",    "memllm_perch",   "memllm"};
  std::vector<schema::LoadedPlatform> platforms;
  for (const auto& name : platform_names) platforms.push_back(schema::load_platform(name, {}));
  const auto dir = std::filesystem::temp_directory_path() / ("ispsim_grid_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  struct RemoveOnExit {
    std::filesystem::path dir;
    ~RemoveOnExit() { std::filesystem::remove_all(dir); }
  } remove_on_exit{dir};

  std::vector<std::string> traces, cells;
  for (const auto& model : models)
    for (const auto& dataset : datasets) {
      tracegen::ShapeOptions options;
      options.model = model;
      options.dataset = dataset;
      options.max_context_tokens = max_context;
      options.max_answer_tokens = max_answer;
      const std::string path = (dir / (model + "-" + dataset + ".trace")).string();
      tracegen::generate_shape_trace(options, path);
      traces.push_back(path);
      cells.push_back(model + " " + dataset);
    }

  std::vector<std::function<std::string()>> tasks;
  for (const auto& trace : traces)
    for (const auto& platform : platforms)
      tasks.push_back([&platform, trace] {
        return systems::summary_to_json(systems::run_blend_system(platform, trace, systems::RunOptions{}));
      });
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<systems::ChildResult> results = systems::run_in_children(tasks, jobs);
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  uint64_t pages = 0, failures = 0, out_of_memory = 0;
  std::printf("%-22s %12s %12s %12s\n", "model dataset", "GPU-FC (ms)", "MemLLM (ms)", "speedup (x)");
  for (size_t c = 0; c < traces.size(); ++c) {
    double gpu_fc = 0, memllm = 0;
    for (size_t p = 0; p < platforms.size(); ++p) {
      const systems::ChildResult& r = results[c * platforms.size() + p];
      if (r.exit_code != 0) {
        ++failures;
        std::fprintf(stderr, "%s on %s failed: %s\n", cells[c].c_str(), platform_names[p].c_str(), r.output.c_str());
        continue;
      }
      const systems::RunSummary s = systems::summary_from_json(r.output, cells[c]);
      if (s.out_of_memory) {
        ++out_of_memory;
        std::fprintf(stderr, "%s on %s: out of memory: %s\n", cells[c].c_str(), platform_names[p].c_str(),
                     s.failure.c_str());
        continue;
      }
      pages += s.nand_read_bytes / platforms[p].platform.nand().page_bytes();
      if (platform_names[p] == "gpu_fullcompute") gpu_fc = s.latency_ns / 1e6;
      if (platform_names[p] == "memllm") memllm = s.latency_ns / 1e6;
    }
    std::printf("%-22s %12.3f %12.3f %12.2f\n", cells[c].c_str(), gpu_fc, memllm, memllm > 0 ? gpu_fc / memllm : 0.0);
  }
  std::printf("\ngrid: %zu traces x %zu platforms = %zu runs, %llu failed, %llu out of memory, %u at a time\n",
              traces.size(), platforms.size(), tasks.size(), static_cast<unsigned long long>(failures),
              static_cast<unsigned long long>(out_of_memory), jobs);
  std::printf("wall time: %.1f s (trace generation excluded)\n", wall_s);
  std::printf("simulated NAND page reads: %llu, %.3f M per wall-clock second\n", static_cast<unsigned long long>(pages),
              static_cast<double>(pages) / wall_s / 1e6);
  return failures || out_of_memory ? 1 : 0;
}

int main(int argc, char** argv) {
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 1);
  return sc_core::sc_elab_and_sim(argc, argv);
}
