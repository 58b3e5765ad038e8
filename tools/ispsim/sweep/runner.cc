#include "tools/ispsim/sweep/runner.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "common/error.h"
#include "common/sha1.h"
#include "schema/platform_loader.h"
#include "platforms/systems/system_registry.h"
#include "platforms/systems/child_process.h"
#include "platforms/systems/nand_stream_run.h"
#include "tools/ispsim/sweep/results.h"
#include "traces/trace_io.h"

namespace ispsim::sweep {
namespace fs = std::filesystem;
namespace {

std::string trace_path(const std::string& out_dir, const PlannedRun& run) {
  if (!run.trace.file.empty()) return run.trace.file;
  return (fs::path(out_dir) / "traces" / (run.trace.key + ".trace")).string();
}

// The simulation of one run, in its child process. A generated trace is
// recorded relative to the output folder, so that results do not depend on
// where the folder is.
RunResult simulate(const PlannedRun& run, const std::string& out_dir) {
  RunResult r = simulate_platform(schema::load_platform(run.platform, run.overrides), trace_path(out_dir, run));
  r.id = run.id;
  if (run.trace.file.empty()) r.trace = trace_path("", run);
  return r;
}

// A run that failed before it made a result of its own.
RunResult failed_run(const PlannedRun& run, const std::string& message) {
  RunResult r;
  r.id = run.id;
  r.system = run.system;
  r.status = "error";
  r.message = message;
  r.version = ispsim_version();
  return r;
}

std::string duration_text(double seconds) {
  char buf[32];
  const long s = static_cast<long>(seconds + 0.5);
  if (s >= 3600) std::snprintf(buf, sizeof buf, "%ldh%02ldm", s / 3600, s / 60 % 60);
  else if (s >= 60) std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
  else std::snprintf(buf, sizeof buf, "%lds", s);
  return buf;
}

// One status line on a terminal, rewritten in place.
class Progress {
 public:
  Progress(bool on, std::string name) : on_(on), name_(std::move(name)) {}
  void traces(size_t done, size_t total) {
    if (on_) std::cerr << "\r\033[K" << name_ << ": generating traces " << done << "/" << total << std::flush;
  }
  void start(size_t total, size_t skipped) {
    total_ = total;
    skipped_ = skipped;
    t0_ = std::chrono::steady_clock::now();
    show();
  }
  void finished(bool failed) {
    ++done_;
    failed_ += failed;
    show();
  }
  void end() {
    if (on_) std::cerr << "\n";
  }

 private:
  void show() {
    if (!on_) return;
    const size_t done = skipped_ + done_;
    std::cerr << "\r\033[K" << name_ << ": " << done << "/" << total_ << " runs done";
    if (skipped_) std::cerr << " (" << skipped_ << " earlier)";
    std::cerr << ", " << failed_ << " failed";
    if (done_ > 0 && done < total_) {
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
      std::cerr << ", ETA " << duration_text(elapsed / done_ * (total_ - done));
    }
    std::cerr << std::flush;
  }
  bool on_;
  std::string name_;
  size_t total_ = 0, skipped_ = 0, done_ = 0, failed_ = 0;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace

RunResult simulate_platform(const schema::LoadedPlatform& platform, const std::string& trace) {
  RunResult r;
  r.version = ispsim_version();
  r.system = platform.platform.name();
  r.configuration = schema::configuration_text(platform);
  r.settings = schema::settings_text(platform);
  r.trace = trace;
  r.trace_sha1 = file_sha1(trace);
  if (platform.platform.program() == schema::Platform::MICROBENCHMARK) {
    systems::RunOptions options;
    options.stats_path = (fs::temp_directory_path() / ("ispsim-sweep-" + std::to_string(getpid()) + ".csv")).string();
    trace::TraceReader reader(trace);
    std::ostringstream report;  // the text summary; the metrics come from the statistics
    systems::run_nand_stream(platform, reader, options, report);
    std::ifstream in(options.stats_path, std::ios::binary);
    std::stringstream csv;
    csv << in.rdbuf();
    fs::remove(options.stats_path);
    r.metrics = nand_stream_metrics(csv.str(), platform.file);
    r.status = "ok";
    return r;
  }
  const systems::RunSummary summary = systems::run_system(platform, trace, systems::RunOptions{});
  r.status = summary.out_of_memory ? "oom" : summary.failure.empty() ? "ok" : "error";
  r.message = summary.failure;
  r.metrics = summary_metrics(summary);
  return r;
}

Shard parse_shard(const std::string& text) {
  const size_t slash = text.find('/');
  auto whole = [&text](const std::string& s) {
    if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos)
      throw BadInput("--shard", "'" + text + "' is not I/N with whole numbers 0 <= I < N");
    return static_cast<unsigned>(std::stoul(s));
  };
  if (slash == std::string::npos) throw BadInput("--shard", "'" + text + "' is not I/N (e.g. 0/4)");
  Shard shard{whole(text.substr(0, slash)), whole(text.substr(slash + 1))};
  if (shard.count == 0 || shard.index >= shard.count)
    throw BadInput("--shard", "'" + text + "' needs 0 <= I < N");
  return shard;
}

std::vector<const PlannedRun*> shard_runs(const SweepPlan& plan, const Shard& shard) {
  std::vector<const PlannedRun*> runs;
  for (size_t i = shard.index; i < plan.runs.size(); i += shard.count) runs.push_back(&plan.runs[i]);
  return runs;
}

std::string results_stem(const std::string& out_dir, const Shard& shard) {
  if (shard.count == 1) return (fs::path(out_dir) / "results").string();
  return (fs::path(out_dir) / "shards" /
          ("shard-" + std::to_string(shard.index) + "-of-" + std::to_string(shard.count)))
      .string();
}

SweepOutcome run_sweep(const SweepPlan& plan, const RunnerOptions& options) {
  const std::string& out = options.out_dir;
  for (const char* sub : {"runs", "traces", options.shard.count > 1 ? "shards" : nullptr}) {
    if (!sub) continue;
    std::error_code ec;
    fs::create_directories(fs::path(out) / sub, ec);
    if (ec) throw BadInput(out, "cannot create the output folder: " + ec.message());
  }
  const std::vector<const PlannedRun*> selected = shard_runs(plan, options.shard);
  Progress progress(options.progress, plan.spec.name());

  // Unfinished runs (each id once: equal inputs are one simulation).
  SweepOutcome outcome;
  outcome.runs = selected.size();
  std::vector<const PlannedRun*> todo;
  std::set<std::string> queued;
  for (const PlannedRun* run : selected) {
    const auto done = load_result(out, run->id);
    if (done && done->status != "error") continue;
    if (queued.insert(run->id).second) todo.push_back(run);
  }

  // Traces first: each missing generated trace once.
  std::map<std::string, std::string> trace_errors;  // key -> message
  {
    std::vector<const PlannedRun*> to_generate;
    std::set<std::string> keys;
    for (const PlannedRun* run : todo)
      if (run->trace.file.empty() && !fs::exists(trace_path(out, *run)) && keys.insert(run->trace.key).second)
        to_generate.push_back(run);
    std::vector<std::function<std::string()>> tasks;
    for (const PlannedRun* run : to_generate)
      tasks.push_back([run, path = trace_path(out, *run)] {
        if (run->trace.decode) tracegen::generate_decode_trace(*run->trace.decode, path);
        else tracegen::generate_shape_trace(*run->trace.shape, path);
        return std::string();
      });
    size_t generated = 0;
    if (!tasks.empty()) progress.traces(0, tasks.size());
    systems::run_in_children(tasks, options.jobs, [&](size_t i, const systems::ChildResult& r) {
      if (r.exit_code != 0) trace_errors[to_generate[i]->trace.key] = "trace generation: " + r.output;
      progress.traces(++generated, tasks.size());
    });
  }

  outcome.skipped = selected.size() - todo.size();
  progress.start(selected.size(), outcome.skipped);
  std::vector<std::function<std::string()>> tasks;
  std::vector<const PlannedRun*> task_runs;
  for (const PlannedRun* run : todo) {
    auto failed = trace_errors.find(run->trace.key);
    if (failed != trace_errors.end()) {
      save_result(out, failed_run(*run, failed->second));
      progress.finished(true);
      continue;
    }
    task_runs.push_back(run);
    tasks.push_back([run, &out] { return result_to_json(simulate(*run, out)); });
  }
  systems::run_in_children(tasks, options.jobs, [&](size_t i, const systems::ChildResult& child) {
    const PlannedRun& run = *task_runs[i];
    RunResult r;
    if (child.exit_code == 0) {
      r = result_from_json(child.output, "run " + run.id);
    } else {
      r = failed_run(run, child.output);
    }
    save_result(out, r);
    progress.finished(r.status == "error");
  });
  progress.end();

  std::vector<Row> rows;
  for (const PlannedRun* run : selected) {
    std::optional<RunResult> r = load_result(out, run->id);
    if (!r) throw std::runtime_error("run " + run->id + " finished without a result file");
    (r->status == "ok" ? outcome.ok : r->status == "oom" ? outcome.oom : outcome.errors)++;
    rows.push_back(Row{run, *r});
  }
  const std::string stem = results_stem(out, options.shard);
  write_results(plan, rows, stem + ".csv", stem + ".json", options.command_line);
  return outcome;
}

}  // namespace ispsim::sweep
