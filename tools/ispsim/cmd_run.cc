// ispsim run --platform P --trace T [--set path=value]... [--stats F] [--vcd F ...]
// Exit codes: 0 the run completed, 3 the platform ran out of memory (the
// summary shows OOM and the reason), 2 bad input, 1 internal failure.
#include <boost/program_options.hpp>

#include <iostream>

#include "common/error.h"
#include "schema/platform_loader.h"
#include "platforms/systems/blend_system.h"
#include "platforms/systems/system_registry.h"
#include "platforms/systems/cim_report.h"
#include "platforms/systems/cim_system.h"
#include "platforms/systems/nand_stream_run.h"
#include "platforms/systems/run_options.h"
#include "tools/ispsim/cli.h"
#include "tools/ispsim/cli_common.h"
#include "tools/ispsim/provenance.h"
#include "traces/trace_io.h"

namespace po = boost::program_options;

namespace ispsim::cli {
namespace {

// Whether a --set chooses the stream model (a waveform otherwise asks for page events).
bool sets_stream_model(const std::vector<std::string>& overrides) {
  for (const std::string& o : overrides)
    if (o.rfind("ssd.stream_model=", 0) == 0) return true;
  return false;
}

}  // namespace

int run(const Args& args) {
  std::string platform_name, trace_path, window, format_name = "text";
  std::vector<std::string> overrides, vcd_filters;
  systems::RunOptions options;
  std::string roles;
  for (const vcd::RoleInfo& r : vcd::roles()) roles += std::string(roles.empty() ? "" : ", ") + r.name;
  po::options_description desc("run options");
  desc.add_options()
      ("help,h", "print this help")
      ("platform,p", po::value(&platform_name)->required(), "platform name (see 'ispsim describe') or .textproto file")
      ("trace,t", po::value(&trace_path)->required(), "binary trace file")
      ("set", po::value(&overrides)->composing(), "override a parameter: path=value (repeatable), e.g. nand.t_read_us=20")
      ("stats", po::value(&options.stats_path), "write statistics to this .json or .csv file")
      ("vcd", po::value(&options.waveform.path),
       "write a waveform to this .vcd (or .fst, through GTKWave's vcd2fst) file, with its GTKWave view beside it "
       "(.gtkw: open with 'gtkwave FILE.gtkw'); the NAND streams then run page by page "
       "(ssd.stream_model=PAGE_ACCURATE, so that dies and channels have events to draw) unless --set "
       "ssd.stream_model says otherwise")
      ("vcd-filter", po::value(&vcd_filters)->composing(),
       ("only these signals: roles (" + roles + ") and/or globs, comma-separated or repeated, e.g. dies,simd or "
        "'*.ch0.*'").c_str())
      ("vcd-window", po::value(&window), "only changes within BEGIN:END simulated time, e.g. 0us:200us")
      ("timeline", po::value(&options.timeline_path), "write a Chrome trace-event timeline (Perfetto) to this .json file")
      ("drive-state", po::value(&options.drive_state_in),
       "start the SSD from this saved drive state (a file --save-drive-state wrote for the same flash and ftl "
       "parameters) instead of a fresh drive")
      ("precondition", po::bool_switch(&options.precondition),
       "precondition the SSD's drive first (after --drive-state, if given): fill, then random overwrites until the "
       "write amplification is stable (ftl.precondition_* parameters)")
      ("save-drive-state", po::value(&options.drive_state_out),
       "after the run, save the SSD's drive state (mapping, free blocks, wear; the request's own KV trimmed) to "
       "this file")
      ("format", po::value(&format_name), "summary on stdout: text, csv or json (default text)");
  if (!parse_options(args, "run", desc)) return 0;
  if (!window.empty()) vcd::parse_window(window, "--vcd-window", options.waveform);
  for (const std::string& filter : vcd_filters) vcd::add_filter(filter, "--vcd-filter", options.waveform);
  if ((!vcd_filters.empty() || !window.empty()) && options.waveform.path.empty())
    throw BadInput("--vcd-filter/--vcd-window", "need --vcd FILE");

  check_outputs_distinct({{"--stats", options.stats_path}, {"--vcd", options.waveform.path},
                          {"--timeline", options.timeline_path}, {"--save-drive-state", options.drive_state_out}},
                         {{"--trace", trace_path}, {"--platform", platform_name}, {"--drive-state", options.drive_state_in}});
  const bool drive_options = !options.drive_state_in.empty() || options.precondition || !options.drive_state_out.empty();
  const systems::Format format = systems::parse_format(format_name);
  schema::LoadedPlatform platform = schema::load_platform(platform_name, overrides);
  if (platform.platform.program() == schema::Platform::MICROBENCHMARK) {
    if (format != systems::Format::TEXT) throw BadInput("--format", "the NAND stream system prints text only");
    if (!options.timeline_path.empty()) throw BadInput("--timeline", "the NAND stream system writes no timeline");
    if (drive_options) throw BadInput("--drive-state", "the NAND stream system has no flash translation layer");
    trace::TraceReader trace(trace_path);
    options.stats_provenance = stats_provenance(cli::provenance(trace_path), schema::configuration_text(platform));
    systems::run_nand_stream(platform, trace, options, std::cout);
    return 0;
  }
  const systems::SystemKind& system = systems::system_for(platform);
  system.check(platform);
  if (system.decode_only && drive_options)
    throw BadInput("--drive-state", "platform '" + platform.platform.name() + "' has no SSD with a flash translation layer");
  if (!system.decode_only && !options.waveform.path.empty() && !sets_stream_model(overrides)) {
    overrides.insert(overrides.begin(), "ssd.stream_model=PAGE_ACCURATE");
    platform = schema::load_platform(platform_name, overrides);
  }
  const std::string configuration = schema::configuration_text(platform), settings = schema::settings_text(platform);
  const systems::Provenance provenance = cli::provenance(trace_path);
  options.stats_provenance = stats_provenance(provenance, configuration);
  options.progress = true;  // drawn only when stderr is a terminal
  // The table goes to stdout before the output files are committed: when stdout
  // fails, none of them is (the run failed).
  bool printed = false;
  const auto print = [&](const systems::RunSummary& summary) {
    systems::RunSummary shown = summary;
    shown.configuration = configuration;
    shown.settings = settings;
    if (system.decode_only)
      systems::write_cim_comparison(std::cout, {shown}, "", format, true, &provenance);
    else
      // One row: room for every column.
      systems::write_comparison(std::cout, {shown}, "", format, systems::parse_text_columns("all"), &provenance);
    std::cout.flush();
    printed = true;
    if (!std::cout) throw BadInput("stdout", "write failed");
  };
  options.before_commit = print;
  const systems::RunSummary summary = system.run(platform, trace_path, options);
  if (!printed) print(summary);  // out of memory: no output files
  // Out of memory is a result, not an error: the summary says OOM and why
  // (status "out_of_memory" in CSV/JSON); the exit code tells scripts apart.
  return summary.out_of_memory ? kExitOutOfMemory : 0;
}

}  // namespace ispsim::cli
