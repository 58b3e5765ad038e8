#include "platforms/systems/nand_stream_run.h"

#include <iomanip>
#include <memory>
#include <ostream>
#include <systemc>

#include "common/error.h"
#include "common/output_files.h"
#include "models/core/stats.h"
#include "models/core/vcd.h"
#include "models/core/vcd_view.h"
#include "models/nand/nand_stream_system.h"
#include "platforms/systems/isp_selection.h"
#include "platforms/systems/stats_output.h"

namespace ispsim::systems {
namespace {

std::vector<nand::KvOp> kv_ops_of_program(trace::TraceReader& trace, trace::Program program,
                                          const std::string& platform_name) {
  std::vector<nand::KvOp> ops;
  trace::Op op;
  while (trace.next(op)) {
    if (op.program() != program) continue;
    nand::KvOp kv;
    if (op.has_kv_load()) {
      kv.kind = nand::KvOp::kLoad;
      kv.layer = op.layer();
      kv.token_begin = op.kv_load().tokens().begin();
      kv.token_end = op.kv_load().tokens().end();
      kv.bytes = op.kv_load().bytes();
    } else if (op.has_kv_append()) {
      kv.kind = nand::KvOp::kAppend;
      kv.bytes = op.kv_append().bytes();
    } else {
      throw BadInput(trace.path(), "op " + std::to_string(op.id()) + ": platform '" + platform_name +
                                       "' streams KV only (kv_load, kv_append); it cannot run this op");
    }
    ops.push_back(kv);
  }
  return ops;
}

// Exact for every time the kernel can represent (an integer count of its resolution).
double to_ns(const sc_core::sc_time& t) {
  return static_cast<double>(t.value()) / static_cast<double>(sc_core::sc_time(1, sc_core::SC_NS).value());
}
double to_us(const sc_core::sc_time& t) { return to_ns(t) / 1e3; }

}  // namespace

void run_nand_stream(const schema::LoadedPlatform& loaded, trace::TraceReader& trace,
                     const RunOptions& options, std::ostream& report) {
  const schema::Platform& platform = loaded.platform;
  const std::string program_name = schema::Platform::Program_Name(platform.program());
  trace::Program program;
  if (!trace::Program_Parse(program_name, &program))
    throw BadInput(loaded.file, "program " + program_name + " is not a trace program");
  bool declared = false;
  for (const auto& p : trace.header().programs()) declared |= p.program() == program;
  if (!declared)
    throw BadInput(trace.path(), "has no " + program_name + " program, which platform '" +
                                     platform.name() + "' runs");
  // The stream's consumer is the fixed-time-per-page model of the per-channel
  // Elastic-SIMD (models/nand/page_consumer.h, stream.consumer_ns_per_page);
  // the other accelerators cost tiles of attention ops, which this system does
  // not run, so naming one is an error, not a silent no-op.
  check_isp_accelerator(loaded, true, "");
  if (platform.modules().isp_accelerator() != "elastic_simd")
    throw BadInput(loaded.file, "modules.isp_accelerator = '" + platform.modules().isp_accelerator() +
                                    "' is not modelled by the NAND stream system (its consumer is the Elastic-SIMD's "
                                    "fixed time per page, stream.consumer_ns_per_page); run an attention platform "
                                    "such as memllm to compare accelerators");
  OutputFiles outputs;
  AtomicFile* stats_file = open_stats_file(outputs, options.stats_path);

  const std::vector<nand::KvOp> ops = kv_ops_of_program(trace, program, platform.name());

  std::unique_ptr<vcd::Writer> waveform;
  if (!options.waveform.path.empty()) waveform = std::make_unique<vcd::Writer>(options.waveform);

  nand::NandStreamSystem system("ssd", platform.nand(), platform.stream());
  stats::Group summary("run");
  auto& end_to_end = summary.scalar("end_to_end_time", "ns", "simulated time from the first op to the last");
  auto& read_time = summary.scalar("read_time", "ns", "simulated time spent in kv_load ops");
  auto& append_time = summary.scalar("append_time", "ns", "simulated time spent in kv_append ops and the final flush");
  auto& read_bw = summary.scalar("read_bandwidth", "GB/s", "bytes read from flash / read_time (GB = 1e9 B)");
  auto& bytes_read = summary.counter("bytes_read", "bytes", "whole flash pages read");
  auto& bytes_requested = summary.counter("bytes_requested", "bytes", "useful KV bytes named by the trace ops");
  auto& bytes_programmed = summary.counter("bytes_programmed", "bytes", "whole flash pages programmed by appends");
  auto& ops_run = summary.counter("ops", "count", "trace ops simulated");
  if (waveform) {
    system.trace(*waveform);
    waveform->require_signals();
  }

  const nand::KvRunResult result = system.run(ops);

  end_to_end = to_ns(result.total_time);
  read_time = to_ns(result.read_time);
  append_time = to_ns(result.append_time);
  read_bw = result.read_gbps;
  bytes_read += result.bytes_read;
  bytes_requested += result.bytes_requested;
  bytes_programmed += result.bytes_programmed;
  ops_run += ops.size();

  if (waveform) {
    // Named markers where each step (load, append, flush) begins.
    std::vector<vcd::Marker> markers;
    for (size_t i = 0; i < result.steps.size(); ++i)
      markers.push_back({static_cast<uint64_t>(result.steps[i].start.value()), result.steps[i].what + " " + std::to_string(i)});
    waveform->close(markers, outputs);
  }
  if (stats_file) write_stats(*stats_file, options.stats_provenance);

  const auto mode = schema::NandStreamParams::ReadMode_Name(platform.stream().read_mode());
  report << std::fixed << std::setprecision(3);
  report << "platform       " << platform.name() << " (" << loaded.file << ")\n"
         << "trace          " << trace.path() << ": " << ops.size() << " " << program_name << " ops\n"
         << "read mode      " << mode << "\n"
         << "end-to-end     " << to_us(result.total_time) << " us\n"
         << "reads          " << result.pages_read << " pages, " << result.bytes_read << " bytes in "
         << to_us(result.read_time) << " us = " << result.read_gbps << " GB/s\n"
         << "appends        " << result.pages_programmed << " pages, " << result.bytes_programmed
         << " bytes in " << to_us(result.append_time) << " us\n";
  if (!options.stats_path.empty()) report << "statistics     " << options.stats_path << "\n";
  if (waveform)
    report << "waveform       " << options.waveform.path << " (open the ready view: gtkwave "
           << vcd::view_path(options.waveform.path) << ")\n";
  // The report first: a report that cannot be written leaves the statistics uncommitted.
  report.flush();
  if (!report) throw BadInput("stdout", "write failed");
  outputs.commit();
}

}  // namespace ispsim::systems
