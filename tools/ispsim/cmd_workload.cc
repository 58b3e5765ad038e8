// `ispsim workload gen | dump`: sustained workloads (traces/workload/README.md).
#include <boost/program_options.hpp>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "common/error.h"
#include "common/sha1.h"
#include "tools/ispsim/cli.h"
#include "tools/ispsim/cli_common.h"
#include "tools/ispsim/provenance.h"
#include "platforms/systems/child_process.h"
#include "platforms/systems/serving_blend.h"
#include "platforms/systems/slo_search.h"
#include "schema/platform_loader.h"
#include "traces/workload/request_trace.h"
#include "traces/workload/stream_gen.h"
#include "traces/workload/stream_io.h"
#include "traces/workload/workload_file.h"

namespace po = boost::program_options;

namespace ispsim::cli {
namespace {

const char* kWorkloadUsage =
    "usage: ispsim workload <action> [options]\n"
    "actions:\n"
    "  gen --workload W.txtpb --out S.stream\n"
    "                           draw the request stream of a workload file (corpus, arrivals,\n"
    "                           top-k Zipf documents, query/answer lengths, ingestion) from\n"
    "                           its seed and write it, in constant memory, atomically\n"
    "  dump S.stream            print the header, then one line per record\n"
    "  serve --platform P --stream S.stream [--set path=value]... [--requests F.csv]\n"
    "      [--stats F.json|F.csv] [--drive-state F] [--precondition]\n"
    "                           serve the stream on a MemLLM-study platform: requests queue at\n"
    "                           the host (FCFS, one at a time); prints queueing delay, TTFT,\n"
    "                           TBT and latency (mean, p50, p95, p99, max), throughput, and\n"
    "                           energy, NAND and PCIe bytes per request; --requests writes\n"
    "                           one CSV row per request\n"
    "  slo --platform P --workload W.txtpb --slo-ms X [--metric ttft|latency]\n"
    "      [--quantile Q] [--low R] [--high R] [--steps N] [--set path=value]...\n"
    "                           the highest Poisson rate (requests/s) at which the Q-quantile\n"
    "                           of TTFT (or latency) stays within X ms, by bisection between\n"
    "                           --low and --high (defaults: ttft, 0.99, 0.01, 10, 6 steps);\n"
    "                           W must use poisson arrivals; prints every probe and the bracket\n"
    "  trace --stream S.stream --request I --out T.trace\n"
    "                           the single-request trace that serve simulates for request I\n"
    "Workload files: traces/workload/README.md. A bad file ends the command with one\n"
    "error line and exit code 2.\n";

std::string document_list(const google::protobuf::RepeatedPtrField<workload::DocumentRef>& docs) {
  std::string out;
  for (const workload::DocumentRef& d : docs)
    out += (out.empty() ? "" : ",") + std::to_string(d.id()) + ":" + std::to_string(d.tokens());
  return out;
}

void print_record(const workload::StreamRecord& r) {
  if (r.has_corpus_document())
    std::cout << "corpus id " << r.corpus_document().id() << " tokens " << r.corpus_document().tokens() << "\n";
  if (r.has_ingest())
    std::cout << "ingest at_ns " << r.ingest().at_ns() << " id " << r.ingest().document().id() << " tokens "
              << r.ingest().document().tokens() << "\n";
  if (r.has_evict()) std::cout << "evict at_ns " << r.evict().at_ns() << " id " << r.evict().document().id() << "\n";
  if (!r.has_request()) return;
  const workload::StreamRequest& q = r.request();
  std::cout << "request " << q.index();
  if (q.has_arrival_ns()) std::cout << " arrival_ns " << q.arrival_ns();
  if (q.has_think_ns()) std::cout << " think_ns " << q.think_ns();
  std::cout << " docs(id:tokens) " << document_list(q.documents()) << " query_tokens " << q.query_tokens()
            << " answer_tokens " << q.answer_tokens() << "\n";
}

// The summary table: one row per metric, times in ms.
void print_serving(const std::string& platform, const systems::ServingStatistics& s) {
  std::printf("%s: %llu requests, %llu output tokens, throughput %.4f requests/s\n", platform.c_str(),
              static_cast<unsigned long long>(s.requests), static_cast<unsigned long long>(s.tokens),
              s.throughput_per_s());
  std::printf("%-18s %12s %12s %12s %12s %12s\n", "(ms)", "mean", "p50", "p95", "p99", "max");
  const auto row = [](const char* name, const QuantileSketch& q) {
    std::printf("%-18s %12.4f %12.4f %12.4f %12.4f %12.4f\n", name, q.mean() / 1e6, q.quantile(0.5) / 1e6,
                q.quantile(0.95) / 1e6, q.quantile(0.99) / 1e6, q.max() / 1e6);
  };
  row("queueing", s.queueing);
  row("ttft", s.ttft);
  row("tbt", s.tbt);
  row("latency", s.latency);
  std::printf("%-18s %12s %12s %12s %12s %12s\n", "per request", "mean", "p50", "p95", "p99", "max");
  const auto usage = [](const char* name, const QuantileSketch& q, double scale) {
    std::printf("%-18s %12.4f %12.4f %12.4f %12.4f %12.4f\n", name, q.mean() / scale, q.quantile(0.5) / scale,
                q.quantile(0.95) / scale, q.quantile(0.99) / scale, q.max() / scale);
  };
  usage("energy (mJ)", s.energy, 1e-3);
  usage("NAND read (MB)", s.nand_read, 1e6);
  usage("NAND written (MB)", s.nand_written, 1e6);
  usage("PCIe to dev (MB)", s.pcie_host_to_device, 1e6);
  usage("PCIe to host (MB)", s.pcie_device_to_host, 1e6);
  std::printf("energy of all requests %.6f J; percentiles within %.1f %% (streaming sketch); mean and max exact\n",
              s.energy.sum(), s.ttft.relative_accuracy() * 100);
  std::fflush(stdout);
  if (std::ferror(stdout)) throw BadInput("stdout", "write failed");
}

}  // namespace

// The provenance of statistics served from a stream: the stream stands where a
// trace would, its seed the workload's.
systems::StatsProvenance stream_provenance(const std::string& stream_path, const schema::LoadedPlatform& platform) {
  systems::Provenance p = provenance("");
  p.trace = stream_path;
  p.trace_sha1 = file_sha1(stream_path);
  p.trace_seed = std::to_string(workload::StreamReader(stream_path).header().workload().seed());
  return stats_provenance(p, schema::configuration_text(platform));
}

int workload_serve(const Args& args) {
  std::string platform_name, stream_path;
  std::vector<std::string> overrides;
  systems::ServeOptions options;
  po::options_description desc("workload serve options");
  desc.add_options()("help,h", "print this help")
      ("platform,p", po::value(&platform_name)->required(), "platform name or .textproto file")
      ("stream", po::value(&stream_path)->required(), "request stream file (ispsim workload gen)")
      ("set", po::value(&overrides)->composing(), "override a parameter: path=value (repeatable)")
      ("requests", po::value(&options.requests_csv), "write one CSV row per request to this file")
      ("stats", po::value(&options.stats_path), "write statistics to this .json or .csv file")
      ("drive-state", po::value(&options.drive_state_in),
       "start the SSD from this saved drive state (ispsim run --save-drive-state) instead of a fresh drive")
      ("precondition", po::bool_switch(&options.precondition),
       "precondition the SSD's drive first (after --drive-state, if given; ftl.precondition_* parameters)");
  if (!parse_options(args, "workload serve", desc)) return 0;
  check_outputs_distinct({{"--requests", options.requests_csv}, {"--stats", options.stats_path}},
                         {{"--stream", stream_path}, {"--platform", platform_name}, {"--drive-state", options.drive_state_in}});
  const schema::LoadedPlatform platform = schema::load_platform(platform_name, overrides);
  options.stats_provenance = stream_provenance(stream_path, platform);
  bool printed = false;
  options.before_commit = [&](const systems::ServingStatistics& s) {
    print_serving(platform.platform.name(), s);
    printed = true;
  };
  const systems::ServingStatistics s = systems::serve_blend_stream(platform, stream_path, options);
  if (!s.out_of_memory.empty()) {
    std::printf("%s: out of memory: %s\n", platform.platform.name().c_str(), s.out_of_memory.c_str());
    return kExitOutOfMemory;
  }
  if (!printed) print_serving(platform.platform.name(), s);
  return 0;
}

namespace {

struct SloOptions {
  std::string platform, workload, metric = "ttft";
  std::vector<std::string> overrides;
  double slo_ms = 0, quantile = 0.99, low = 0.01, high = 10;
  unsigned steps = 6;
};

void check_slo_options(const SloOptions& o, const workload::Workload& w) {
  if (!w.has_poisson()) throw BadInput(o.workload, "the SLO search varies the Poisson rate: use poisson arrivals");
  if (!(o.slo_ms > 0)) throw BadInput("--slo-ms", "must be a positive number of milliseconds");
  if (o.metric != "ttft" && o.metric != "latency") throw BadInput("--metric", "'" + o.metric + "': ttft or latency");
  if (!(o.quantile > 0 && o.quantile < 1)) throw BadInput("--quantile", "must be within (0, 1)");
  if (!(o.low > 0 && o.high > o.low)) throw BadInput("--low/--high", "need 0 < low < high (requests/s)");
  if (o.steps > 30) throw BadInput("--steps", "at most 30");
}

// Serves the workload at `rate` in a child process (SystemC elaborates once
// per process) and returns the chosen quantile in ns.
double probe_rate(const SloOptions& o, const schema::LoadedPlatform& platform, workload::Workload w, double rate) {
  w.mutable_poisson()->set_rate_per_s(rate);
  const std::string stream = std::filesystem::temp_directory_path() /
                             ("ispsim_slo_" + std::to_string(::getpid()) + ".stream");
  workload::generate_stream(w, "", stream);
  const auto results = systems::run_in_children(
      {[&] {
        const systems::ServingStatistics s = systems::serve_blend_stream(platform, stream, {});
        if (!s.out_of_memory.empty()) throw BadInput(platform.platform.name(), "out of memory: " + s.out_of_memory);
        const QuantileSketch& q = o.metric == "ttft" ? s.ttft : s.latency;
        return std::to_string(q.quantile(o.quantile));
      }},
      1);
  std::filesystem::remove(stream);
  if (results[0].exit_code == 2) throw BadInput("ispsim workload slo", results[0].output);
  if (results[0].exit_code != 0) throw std::runtime_error(results[0].output);
  return std::stod(results[0].output);
}

}  // namespace

int workload_slo(const Args& args) {
  SloOptions o;
  po::options_description desc("workload slo options");
  desc.add_options()("help,h", "print this help")
      ("platform,p", po::value(&o.platform)->required(), "platform name or .textproto file")
      ("workload", po::value(&o.workload)->required(), "workload file with poisson arrivals")
      ("slo-ms", po::value(&o.slo_ms)->required(), "the SLO, ms")
      ("metric", po::value(&o.metric), "ttft (default) or latency")
      ("quantile", po::value(&o.quantile), "quantile of the metric, default 0.99")
      ("low", po::value(&o.low), "lowest rate probed, requests/s, default 0.01")
      ("high", po::value(&o.high), "highest rate probed, requests/s, default 10")
      ("steps", po::value(&o.steps), "bisection steps after the two ends, default 6")
      ("set", po::value(&o.overrides)->composing(), "override a parameter: path=value (repeatable)");
  if (!parse_options(args, "workload slo", desc)) return 0;
  const workload::Workload w = workload::load_workload(o.workload);
  check_slo_options(o, w);
  const schema::LoadedPlatform platform = schema::load_platform(o.platform, o.overrides);
  const systems::SloResult r = systems::search_slo(o.low, o.high, o.steps, o.slo_ms * 1e6,
                                                   [&](double rate) { return probe_rate(o, platform, w, rate); });
  std::printf("%s: p%g %s within %g ms (quantiles within %.1f %%)\n", platform.platform.name().c_str(),
              o.quantile * 100, o.metric.c_str(), o.slo_ms, QuantileSketch().relative_accuracy() * 100);
  for (const systems::SloProbe& p : r.probes)
    std::printf("  %12.6f requests/s: %14.4f ms %s\n", p.rate_per_s, p.value_ns / 1e6, p.meets ? "meets" : "misses");
  if (r.fails_at_low)
    std::printf("highest rate within the SLO: below %g requests/s (the lowest probed misses it)\n", o.low);
  else if (r.meets_at_high)
    std::printf("highest rate within the SLO: at least %g requests/s (the highest probed meets it)\n", o.high);
  else
    std::printf("highest rate within the SLO: between %.6f and %.6f requests/s\n", r.met_rate_per_s,
                r.missed_rate_per_s);
  std::fflush(stdout);
  if (std::ferror(stdout)) throw BadInput("stdout", "write failed");
  return 0;
}

int workload_trace(const Args& args) {
  std::string stream_path, out_path;
  uint64_t index = 0;
  po::options_description desc("workload trace options");
  desc.add_options()("help,h", "print this help")
      ("stream", po::value(&stream_path)->required(), "request stream file")
      ("request", po::value(&index)->required(), "index of the request (0 = the first)")
      ("out", po::value(&out_path)->required(), "trace file to write");
  if (!parse_options(args, "workload trace", desc)) return 0;
  check_outputs_distinct({{"--out", out_path}}, {{"--stream", stream_path}});
  workload::StreamReader reader(stream_path);
  workload::StreamRecord record;
  while (reader.next(record)) {
    if (!record.has_request() || record.request().index() != index) continue;
    workload::write_request_trace(reader.header(), record.request(), out_path);
    return 0;
  }
  throw BadInput("--request", std::to_string(index) + ": the stream " + stream_path + " has no such request");
}

int workload_gen(const Args& args) {
  std::string workload_path, out_path;
  po::options_description desc("workload gen options");
  desc.add_options()("help,h", "print this help")
      ("workload", po::value(&workload_path)->required(), "workload file (protobuf text format, workload.proto)")
      ("out", po::value(&out_path)->required(), "request stream file to write");
  if (!parse_options(args, "workload gen", desc)) return 0;
  check_outputs_distinct({{"--out", out_path}}, {{"--workload", workload_path}});
  const uint64_t requests = workload::generate_stream(workload_path, out_path);
  std::cout << "wrote " << out_path << ": " << requests << " requests\n";
  return 0;
}

int workload_dump(const Args& args) {
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    std::cout << kWorkloadUsage;
    return 0;
  }
  if (args.size() != 1) throw BadInput("ispsim workload dump", "expects one request stream file");
  workload::StreamReader reader(args[0]);
  std::cout << "# " << reader.header().ShortDebugString() << "\n";
  workload::StreamRecord record;
  while (reader.next(record)) print_record(record);
  return 0;
}

int workload(const Args& args) {
  if (args.empty())
    throw BadInput("ispsim workload",
                   "missing the action (" + names_of(workload_actions()) + "; see ispsim workload --help)");
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kWorkloadUsage;
    return 0;
  }
  return run_subcommand(workload_actions(), args, "ispsim workload");
}

}  // namespace ispsim::cli
