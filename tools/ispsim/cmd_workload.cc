// `ispsim workload gen | dump`: sustained workloads (traces/workload/README.md).
#include <boost/program_options.hpp>
#include <iostream>

#include "common/error.h"
#include "tools/ispsim/cli.h"
#include "tools/ispsim/cli_common.h"
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

}  // namespace

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
