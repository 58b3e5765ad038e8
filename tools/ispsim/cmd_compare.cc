// ispsim compare --trace T [--platforms A,B,...] [--baseline NAME] [--format text|csv|json]
//                [--columns C,...|all] [--csv F] [--json F] [--timeline-dir D] [--jobs N] [--set path=value]...
// Simulates one trace on several platforms, each in its own child process, and
// prints the comparison table (platforms/systems/report.h).
#include <boost/program_options.hpp>

#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include "common/error.h"
#include "common/output_files.h"
#include "schema/platform_loader.h"
#include "platforms/systems/blend_system.h"
#include "platforms/systems/cim_report.h"
#include "platforms/systems/cim_system.h"
#include "platforms/systems/run_summary_io.h"
#include "platforms/systems/child_process.h"
#include "platforms/systems/progress.h"
#include "tools/ispsim/cli.h"
#include "platforms/systems/system_registry.h"
#include "tools/ispsim/cli_common.h"
#include "tools/ispsim/provenance.h"
#include "traces/trace_io.h"

namespace po = boost::program_options;

namespace ispsim::cli {
namespace {

std::string join(const std::vector<std::string>& names) {
  std::string list;
  for (const std::string& name : names) list += (list.empty() ? "" : ",") + name;
  return list;
}

// Without --platforms: the MemLLM study's systems (their platform files' group).
std::string default_platforms() { return join(schema::platforms_in_group("memllm_study")); }

}  // namespace

int compare(const Args& args) {
  std::string trace_path, platform_list, baseline = "GPU-FullCompute", format_name = "text";
  std::string csv_path, json_path, timeline_dir, column_list;
  std::vector<std::string> overrides;
  // Signed: boost would wrap "-1" into 4294967295 for an unsigned option.
  long long jobs = std::max(1u, std::thread::hardware_concurrency());
  const std::string columns_help =
      "text table columns, comma-separated, or 'all' (default " + join(systems::default_text_columns()) + ")";
  po::options_description desc("compare options");
  desc.add_options()
      ("help,h", "print this help")
      ("trace,t", po::value(&trace_path)->required(), "binary trace file (from 'ispsim trace gen')")
      ("platforms,p", po::value(&platform_list), "comma-separated platform names or .textproto files "
                                                  "(default: the eight MemLLM systems)")
      ("baseline", po::value(&baseline), "platform name the speedup is measured against (default GPU-FullCompute; '' for none)")
      ("format", po::value(&format_name), "table on stdout: text, csv or json (default text)")
      ("columns", po::value(&column_list), columns_help.c_str())
      ("csv", po::value(&csv_path), "also write the table as CSV to this file")
      ("json", po::value(&json_path), "also write the table as JSON to this file")
      ("timeline-dir", po::value(&timeline_dir), "write one Chrome trace-event timeline per platform into this directory")
      ("jobs,j", po::value(&jobs), "platforms simulated at once (default: the number of CPUs)")
      ("set", po::value(&overrides)->composing(), "override a parameter of every platform: path=value (repeatable)");
  po::variables_map vm;
  if (!parse_options(args, "compare", desc, &vm)) return 0;
  if (!vm.count("platforms")) platform_list = default_platforms();
  const systems::Format format = systems::parse_format(format_name);
  checked_count(jobs, "--jobs", 1, kMaxJobs);
  if (!timeline_dir.empty() && !std::filesystem::is_directory(timeline_dir))
    throw BadInput(timeline_dir, "--timeline-dir is not an existing directory");

  // Everything that can be checked without simulating is checked here, so bad
  // input fails before any child runs.
  std::vector<schema::LoadedPlatform> platforms;
  const std::vector<std::string> platform_names = split_list(platform_list, "--platforms");
  std::vector<NamedPath> inputs = {{"--trace", trace_path}};
  for (const std::string& name : platform_names) inputs.push_back({"--platforms", name});
  for (const std::string& name : platform_names) platforms.push_back(schema::load_platform(name, overrides));
  std::vector<NamedPath> outputs = {{"--csv", csv_path}, {"--json", json_path}};
  for (const schema::LoadedPlatform& p : platforms)
    if (!timeline_dir.empty()) {
      // The platform's name becomes a file name in the directory: nothing that leaves it.
      const std::string& name = p.platform.name();
      if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos ||
          name.find('\0') != std::string::npos)
        throw BadInput(p.file, "name '" + name + "' cannot name a timeline file in --timeline-dir (no '/', '.' or '..')");
      outputs.push_back({"--timeline-dir", (std::filesystem::path(timeline_dir) / (name + ".json")).string()});
    }
  check_outputs_distinct(outputs, inputs);
  if (platforms.empty()) throw BadInput("--platforms", "no platform given");
  {  // a --set that none of paper 1's decode systems uses is bad input
    std::map<std::string, size_t> ignored_by;
    size_t decode_systems = 0;
    for (const schema::LoadedPlatform& p : platforms)
      if (systems::system_for(p).decode_only) {
        ++decode_systems;
        for (const std::string& path : systems::ignored_settings(p)) ++ignored_by[path];
      }
    for (const auto& [path, count] : ignored_by)
      if (decode_systems == platforms.size() && count == platforms.size())
        throw BadInput("--set " + path, "none of the platforms compared uses this parameter");
    if (decode_systems == platforms.size() && vm.count("columns") && column_list != "all")
      throw BadInput("--columns", "paper 1's decode systems take 'all' (adds each stage's time and energy per "
                                  "token to the time-between-tokens table) or nothing");
  }
  const std::vector<std::string> columns =
      vm.count("columns") ? systems::parse_text_columns(column_list) : systems::default_text_columns();
  {
    trace::TraceReader trace(trace_path);
    for (const schema::LoadedPlatform& p : platforms) systems::program_source(p.platform, trace.header(), trace_path);
  }

  // --baseline may name a platform as given in --platforms (file name, e.g. b1) or by its display name.
  const std::vector<std::string> given = split_list(platform_list, "--platforms");
  for (size_t i = 0; i < given.size() && i < platforms.size(); ++i)
    if (!baseline.empty() && given[i] == baseline) baseline = platforms[i].platform.name();
  bool has_baseline = false;
  for (const schema::LoadedPlatform& p : platforms) has_baseline |= p.platform.name() == baseline;
  if (!has_baseline && !baseline.empty()) {
    if (vm.count("baseline")) throw BadInput("--baseline", "'" + baseline + "' is none of the platforms compared");
    baseline.clear();  // the default baseline is not among the platforms
  }

  // An unwritable output fails before any simulation. A regular file (or a new
  // one) is only tried now and let go, so that nothing of it is on disk while
  // the platforms run (a SIGKILL would leave it); it is written and committed
  // once the table is complete. A FIFO or device is opened now and kept.
  OutputFiles output_files;
  std::map<std::string, AtomicFile*> kept;
  for (const std::string& path : {csv_path, json_path}) {
    if (path.empty()) continue;
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (!std::filesystem::exists(status) || std::filesystem::is_regular_file(status))
      OutputFiles{}.open(path);  // tried, then let go
    else
      kept[path] = output_files.open(path);
  }
  const auto output = [&](const std::string& path) -> AtomicFile* {
    if (path.empty()) return nullptr;
    const auto it = kept.find(path);
    return it != kept.end() ? it->second : output_files.open(path);
  };

  // Each child publishes its ops completed; the parent draws them on a terminal.
  systems::SharedProgress progress_slots(platforms.size());
  std::vector<std::string> names;
  std::vector<std::function<std::string()>> tasks;
  for (const schema::LoadedPlatform& p : platforms) {
    systems::RunOptions options;
    options.progress_slot = &progress_slots[tasks.size()];
    names.push_back(p.platform.name());
    if (!timeline_dir.empty())
      options.timeline_path = (std::filesystem::path(timeline_dir) / (p.platform.name() + ".json")).string();
    tasks.push_back([&p, options, trace_path] { return systems::summary_to_json(systems::run_system(p, trace_path, options)); });
  }
  std::vector<systems::ChildResult> results;
  {
    systems::CompareProgress progress(names, progress_slots);
    results = systems::run_in_children(
        tasks, static_cast<unsigned>(jobs), [&](size_t i, const systems::ChildResult&) { progress.finished(i); },
        [&] { progress.tick(); });
  }

  std::vector<systems::RunSummary> runs;
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string& name = platforms[i].platform.name();
    if (results[i].exit_code == 2) throw BadInput("", results[i].output + " (platform " + name + ")");
    if (results[i].exit_code != 0)
      throw std::runtime_error("platform " + name + ": " + results[i].output);
    runs.push_back(systems::summary_from_json(results[i].output, "platform " + name));
    runs.back().configuration = schema::configuration_text(platforms[i]);
    runs.back().settings = schema::settings_text(platforms[i]);
  }
  const systems::Provenance provenance = cli::provenance(trace_path);
  // Paper 1's decode systems get the time-between-tokens table (cim_report.h).
  bool decode_systems = true;
  for (const schema::LoadedPlatform& p : platforms) decode_systems &= systems::system_for(p).decode_only;
  const auto write = [&](std::ostream& os, systems::Format f) {
    if (decode_systems) return systems::write_cim_comparison(os, runs, baseline, f, column_list == "all", &provenance);
    systems::write_comparison(os, runs, baseline, f, columns, &provenance);
  };
  write(std::cout, format);
  for (auto [path, file_format] : {std::pair{&csv_path, systems::Format::CSV}, {&json_path, systems::Format::JSON}})
    if (AtomicFile* file = output(*path)) write(file->stream(), file_format);
  output_files.commit();
  return 0;
}

}  // namespace ispsim::cli
