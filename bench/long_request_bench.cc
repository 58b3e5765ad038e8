// One realistic long RAG request on every MemLLM-study platform: wall time and
// peak resident memory of each simulation, each in its own child process (the
// issue's example: OPT-1.3B shape, CUAD profile, 10,000 context tokens per
// retrieved document (top-5: 50,000 tokens, 9.8 GB of FP16 KV), 100 answer
// tokens, 20 query tokens, seed 1). Figures are printed, never asserted.
//
// usage: ispsim_bench_long_request [context tokens per document (10000)] [answer tokens (100)]
//                                  [platforms (comma list)] [stream models (comma list of
//                                  PAGE_ACCURATE, AGGREGATED; default both)]
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <systemc>
#include <vector>

#include "bench/bench_util.h"
#include "schema/platform_loader.h"
#include "platforms/systems/blend_system.h"
#include "traces/gen/shape_generator.h"

namespace {

struct Measured {
  double wall_s = 0;
  double cpu_s = 0;  // the child's user + system time: what contention does not inflate
  double peak_rss_mb = 0;
  int status = 0;
};

// Simulates in a fork()ed child (SystemC elaborates once per process) and
// reads the child's own peak RSS from wait4().
Measured measure(const std::string& platform, const std::string& trace, const std::string& stream_model) {
  const auto started = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    try {
      ispsim::systems::run_blend_system(
          ispsim::schema::load_platform(platform, {"ssd.stream_model=" + stream_model}), trace, {});
      _exit(0);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: %s\n", platform.c_str(), e.what());
      _exit(1);
    }
  }
  Measured m;
  struct rusage usage {};
  if (pid < 0 || wait4(pid, &m.status, 0, &usage) != pid) m.status = -1;
  m.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  m.peak_rss_mb = static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
  m.cpu_s = double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
            double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
  return m;
}

}  // namespace

int sc_main(int argc, char** argv) {
  using namespace ispsim;
  tracegen::ShapeOptions options;
  options.model = "OPT-1.3B";
  options.dataset = "cad";
  options.context_tokens = argc > 1 ? std::stoull(argv[1]) : 10000;
  options.answer_tokens = argc > 2 ? std::stoull(argv[2]) : 100;
  options.query_tokens = 20;
  const std::vector<std::string> platforms = bench::split_list(
      argc > 3 ? argv[3] : "gpu_fullcompute,gpu_precompute,memllm_base,memllm_fused,memllm_perch,memllm");
  const auto trace = std::filesystem::temp_directory_path() / ("ispsim_long_" + std::to_string(::getpid()) + ".trace");
  struct RemoveOnExit {
    std::filesystem::path path;
    ~RemoveOnExit() { std::filesystem::remove(path); }
  } remove_on_exit{trace};
  tracegen::generate_shape_trace(options, trace.string());

  std::printf("OPT-1.3B shape, cad, %llu context tokens per document, %llu answer + 20 query tokens (trace %.1f MB)\n",
              static_cast<unsigned long long>(*options.context_tokens),
              static_cast<unsigned long long>(*options.answer_tokens),
              static_cast<double>(std::filesystem::file_size(trace)) / 1e6);
  const std::vector<std::string> models = bench::split_list(argc > 4 ? argv[4] : "PAGE_ACCURATE,AGGREGATED");
  std::printf("%-18s %-14s %12s %12s %16s\n", "platform", "stream model", "wall (s)", "CPU (s)", "peak RSS (MB)");
  int failures = 0;
  for (const std::string& platform : platforms) {
    for (const std::string& model : models) {
      const Measured m = measure(platform, trace.string(), model);
      const bool ok = WIFEXITED(m.status) && WEXITSTATUS(m.status) == 0;
      failures += ok ? 0 : 1;
      std::printf("%-18s %-14s %12.1f %12.1f %16.1f%s\n", platform.c_str(), model.c_str(), m.wall_s, m.cpu_s,
                  m.peak_rss_mb, ok ? "" : "  FAILED");
      std::fflush(stdout);
    }
  }
  return failures == 0 ? 0 : 1;
}
