// `ispsim workload gen | dump`: sustained workloads (traces/workload/README.md).
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>

#include "common/error.h"
#include "tools/ispsim/cli.h"
#include "tools/ispsim/cli_common.h"
#include "platforms/systems/serving_blend.h"
#include "schema/platform_loader.h"
#include "traces/workload/request_trace.h"
#include "traces/workload/stream_gen.h"
#include "traces/workload/stream_io.h"

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
    "      [--stats F.json|F.csv]\n"
    "                           serve the stream on a MemLLM-study platform: requests queue at\n"
    "                           the host (FCFS, one at a time); prints queueing delay, TTFT,\n"
    "                           TBT and latency (mean, p50, p95, p99, max) and throughput;\n"
    "                           --requests writes one CSV row per request\n"
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
  std::printf("%-10s %12s %12s %12s %12s %12s\n", "(ms)", "mean", "p50", "p95", "p99", "max");
  const auto row = [](const char* name, const QuantileSketch& q) {
    std::printf("%-10s %12.4f %12.4f %12.4f %12.4f %12.4f\n", name, q.mean() / 1e6, q.quantile(0.5) / 1e6,
                q.quantile(0.95) / 1e6, q.quantile(0.99) / 1e6, q.max() / 1e6);
  };
  row("queueing", s.queueing);
  row("ttft", s.ttft);
  row("tbt", s.tbt);
  row("latency", s.latency);
  std::printf("percentiles within %.1f %% (streaming sketch); mean and max exact\n",
              s.ttft.relative_accuracy() * 100);
  std::fflush(stdout);
  if (std::ferror(stdout)) throw BadInput("stdout", "write failed");
}

}  // namespace

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
      ("stats", po::value(&options.stats_path), "write statistics to this .json or .csv file");
  if (!parse_options(args, "workload serve", desc)) return 0;
  check_outputs_distinct({{"--requests", options.requests_csv}, {"--stats", options.stats_path}},
                         {{"--stream", stream_path}, {"--platform", platform_name}});
  const schema::LoadedPlatform platform = schema::load_platform(platform_name, overrides);
  bool printed = false;
  options.before_commit = [&](const systems::ServingStatistics& s) {
    print_serving(platform.platform.name(), s);
    printed = true;
  };
  const systems::ServingStatistics s = systems::serve_blend_stream(platform, stream_path, options);
  if (!printed) print_serving(platform.platform.name(), s);
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
