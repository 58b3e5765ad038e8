// `ispsim workload serve` through the CLI: a stream of one request reproduces
// `ispsim run` of that request's trace exactly on every MemLLM-study platform;
// a queue forms behind a busy host; outputs and bad inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "tests/support/cli.h"
#include "tests/support/files.h"
#include "tests/support/workload_cli.h"

namespace fs = std::filesystem;
using ispsim::testing::CliResult;
using ispsim::testing::csv_rows;
using ispsim::testing::path;
using ispsim::testing::read_text;
using ispsim::testing::run_cli;
using ispsim::testing::shell_quote;
using ispsim::testing::statistic;
using ispsim::testing::stream;

namespace {

// Column `name` of a CSV's first data row ("" if absent).
std::string csv_column(const std::string& csv, const std::string& name) {
  std::istringstream lines(read_text(csv));
  std::string header, row;
  std::getline(lines, header);
  std::getline(lines, row);
  std::istringstream names(header), cells(row);
  for (std::string n, cell; std::getline(names, n, ',') && std::getline(cells, cell, ',');)
    if (n == name) return cell;
  return "";
}

const char* kOne = "model: 'SmolLM2-135M' dataset: 'hpt' documents: 50 requests: 1 poisson { rate_per_s: 1 }";

TEST(WorkloadServe, OneRequestStreamReproducesRunExactlyOnEveryMemLlmPlatform) {
  const std::string one = stream("one", kOne);
  const CliResult t = run_cli("workload trace --stream " + shell_quote(one) + " --request 0 --out " +
                              shell_quote(path("one.trace")));
  ASSERT_EQ(t.exit_code, 0) << t.err;
  for (const char* platform : {"gpu_fullcompute", "gpu_precompute", "instattention", "aif", "memllm_base",
                               "memllm_fused", "memllm_perch", "memllm"}) {
    const std::string p = platform;
    const CliResult run = run_cli("run --platform " + p + " --trace " + shell_quote(path("one.trace")) +
                                  " --stats " + shell_quote(path(p + "_run.csv")) + " --format csv");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    std::ofstream(path(p + "_run_result.csv")) << run.out;
    const CliResult serve = run_cli("workload serve --platform " + p + " --stream " + shell_quote(one) +
                                    " --stats " + shell_quote(path(p + "_serve.csv")) + " --requests " +
                                    shell_quote(path(p + "_requests.csv")));
    ASSERT_EQ(serve.exit_code, 0) << serve.err;
    const std::string latency = statistic(path(p + "_run.csv"), "system.run.latency");
    ASSERT_FALSE(latency.empty());
    EXPECT_EQ(statistic(path(p + "_serve.csv"), "system.serving.latency.max"), latency) << p;
    EXPECT_EQ(statistic(path(p + "_serve.csv"), "system.serving.queueing.max"), "0") << p;
    // The request is charged exactly what the run reports.
    for (const char* metric : {"energy_j", "nand_read_bytes", "nand_written_bytes", "pcie_host_to_device_bytes",
                               "pcie_device_to_host_bytes"}) {
      const std::string expected = csv_column(path(p + "_run_result.csv"), metric);
      ASSERT_FALSE(expected.empty()) << p << " " << metric;
      EXPECT_EQ(csv_column(path(p + "_requests.csv"), metric), expected) << p << " " << metric;
    }
  }
}

// Ten requests at once (an arrival list of zeros): request i waits for the i
// before it, so its queueing delay is the sum of their latencies and the
// latencies grow; the CSV has one row per request and is complete.
TEST(WorkloadServe, SimultaneousArrivalsQueueInOrder) {
  std::ofstream(path("zeros.txt")) << "0\n0\n0\n0\n0\n0\n0\n0\n0\n0\n";
  const std::string s = stream("zeros", "model: 'SmolLM2-135M' dataset: 'hpt' documents: 50 document_tokens: 100 "
                                        "query_tokens: 20 answer_tokens: 2 arrival_list { file: 'zeros.txt' }");
  const CliResult r = run_cli("workload serve --platform memllm --stream " + shell_quote(s) + " --requests " +
                              shell_quote(path("r.csv")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("MemLLM: 10 requests, 30 output tokens"), std::string::npos) << r.out;
  std::istringstream lines(read_text(path("r.csv")));
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line.rfind("request,arrival_s,start_s,queueing_s,ttft_s,", 0), 0u) << line;
  double previous_end = 0;
  int rows = 0;
  while (std::getline(lines, line)) {
    std::vector<double> v;
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, ',');) v.push_back(std::stod(cell));
    ASSERT_EQ(v.size(), 18u) << line;
    EXPECT_EQ(v[0], rows);
    EXPECT_EQ(v[1], 0);                     // arrival
    EXPECT_EQ(v[2], previous_end) << line;  // starts when the previous one ends (FCFS, one at a time)
    EXPECT_EQ(v[3], v[2]);                  // queueing = start - arrival
    previous_end = v[8];
    ++rows;
  }
  EXPECT_EQ(rows, 10);
}

// Two requests 100 s apart for the one document of the corpus: on a platform
// that stages KV in host DRAM the second finds the document's precomputed KV
// where the first left it and reads nothing from flash; MemLLM, whose
// attention reads the KV inside the SSD, reads it again.
TEST(WorkloadServe, SecondRequestFindsItsDocumentStaged) {
  std::ofstream(path("two.txt")) << "0\n100\n";
  const std::string s = stream("two", "model: 'SmolLM2-135M' dataset: 'hpt' documents: 1 top_k: 1 "
                                      "document_tokens: 512 query_tokens: 20 answer_tokens: 4 "
                                      "arrival_list { file: 'two.txt' }");
  for (const std::string p : {"gpu_precompute", "memllm"}) {
    const CliResult r = run_cli("workload serve --platform " + p + " --stream " + shell_quote(s) + " --requests " +
                                shell_quote(path("two_" + p + ".csv")));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto rows = csv_rows(path("two_" + p + ".csv"));
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_GT(std::stoull(rows[0].at("nand_read_bytes")), 0u) << p;
    if (p == "memllm") {
      EXPECT_GT(std::stoull(rows[1].at("nand_read_bytes")), 0u);
    } else {
      EXPECT_EQ(rows[1].at("nand_read_bytes"), "0");
      EXPECT_LT(std::stod(rows[1].at("latency_s")), std::stod(rows[0].at("latency_s")));
    }
  }
}

// Forty requests whose appended and written-through KV sum to more pages than
// a small drive has (64 units x 32 blocks x 16 pages = 32,768): each request's
// region is TRIMmed when its writes have drained and its logical pages go to a
// later request, so the stream is served. Every page programmed for a request
// is trimmed (GC's copies aside), and the FTL maps only the precomputed KV at
// the end: 30 layers x ceil(longest context / 64) tiles x 3 KV heads.
TEST(WorkloadServe, AStreamWhoseAppendsExceedTheFlashIsServedOnTrimmedPages) {
  const std::string s = stream("long", "model: 'SmolLM2-135M' dataset: 'hpt' documents: 50 requests: 40 "
                                       "poisson { rate_per_s: 2 }");
  for (const std::string p : {"gpu_fullcompute", "memllm"}) {
    const CliResult r = run_cli("workload serve --platform " + p + " --stream " + shell_quote(s) +
                                " --set nand.pages_per_block=16 --set nand.blocks_per_plane=32 "
                                "--set ftl.spare_factor=0.2 --stats " + shell_quote(path("long_" + p + ".csv")) +
                                " --requests " + shell_quote(path("long_" + p + "_requests.csv")));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string stats = path("long_" + p + ".csv");
    EXPECT_EQ(statistic(stats, "system.serving.requests"), "40");
    const uint64_t programmed = std::stoull(statistic(stats, "system.ssd.nand_pages_programmed"));
    const uint64_t gc = std::stoull(statistic(stats, "system.ssd.gc_pages_programmed"));
    if (p == "gpu_fullcompute") {
      EXPECT_GT(programmed, 32768u);
    }
    EXPECT_EQ(std::stoull(statistic(stats, "system.serving.ftl_trimmed_pages")), programmed - gc) << p;
    uint64_t longest = 0;
    for (const auto& row : csv_rows(path("long_" + p + "_requests.csv")))
      longest = std::max<uint64_t>(longest, std::stoull(row.at("context_tokens")));
    EXPECT_EQ(std::stoull(statistic(stats, "system.serving.ftl_mapped_pages")), 30 * ((longest + 63) / 64) * 3) << p;
    EXPECT_EQ(statistic(stats, "system.serving.ftl_valid_pages"), statistic(stats, "system.serving.ftl_mapped_pages"));
  }
}

// Documents of 300 tokens ingested while 20 requests run over a corpus of 20,
// with a store of at most 25: each ingestion writes its KV, 30 layers x
// ceil(300 / 64) tiles x 3 KV heads = 450 pages and 30 x 300 x 768 bytes, or on
// GPU-FullCompute its text, 300 x 4 bytes in one page; the corpus is evicted
// first (no pages of its own), then ingested documents, whose pages are
// TRIMmed. After the stream the FTL maps the precomputed KV (30 layers x
// ceil(1,500 / 64) tiles x 3 heads) and the 25 documents still held. A KV
// platform's GPU computes each ingested document's KV first.
TEST(WorkloadServe, IngestedDocumentsAreWrittenThroughTheFtlAndEvictedByTrim) {
  const std::string s = stream("ingest", "model: 'SmolLM2-135M' dataset: 'wik' documents: 20 document_tokens: 300 "
                                         "requests: 20 poisson { rate_per_s: 2 } "
                                         "ingestion { rate_per_s: 4 capacity_documents: 25 }");
  uint64_t ingests = 0, evictions = 0;
  std::istringstream dump(run_cli("workload dump " + shell_quote(s)).out);
  for (std::string line; std::getline(dump, line);) {
    ingests += line.rfind("ingest ", 0) == 0;
    evictions += line.rfind("evict ", 0) == 0;
  }
  ASSERT_GT(ingests, 25u);
  ASSERT_EQ(evictions, ingests - 5);
  for (const std::string p : {"memllm", "gpu_fullcompute"}) {
    const std::string stats = path("ingest_" + p + ".csv");
    const CliResult r = run_cli("workload serve --platform " + p + " --stream " + shell_quote(s) + " --stats " +
                                shell_quote(stats));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const bool text = p == "gpu_fullcompute";
    const uint64_t pages = text ? 1 : 450, bytes = text ? 1200 : 30 * 300 * 768;
    EXPECT_EQ(statistic(stats, "system.serving.ingested_documents"), std::to_string(ingests));
    EXPECT_EQ(statistic(stats, "system.serving.evicted_documents"), std::to_string(evictions));
    EXPECT_EQ(statistic(stats, "system.serving.ingested_pages"), std::to_string(ingests * pages));
    EXPECT_EQ(statistic(stats, "system.serving.ingested_bytes"), std::to_string(ingests * bytes));
    // KV is computed on the GPU before it is written; text is not.
    EXPECT_EQ(std::stod(statistic(stats, "system.serving.ingest_precompute_time")) > 0, !text) << p;
    EXPECT_EQ(statistic(stats, "system.serving.ftl_mapped_pages"), std::to_string(30 * 24 * 3 + 25 * pages)) << p;
    EXPECT_EQ(statistic(stats, "system.serving.ftl_valid_pages"), statistic(stats, "system.serving.ftl_mapped_pages"));
    const uint64_t programmed = std::stoull(statistic(stats, "system.ssd.nand_pages_programmed")),
                   gc = std::stoull(statistic(stats, "system.ssd.gc_pages_programmed"));
    // Every page programmed is trimmed but those of the 25 documents held.
    EXPECT_EQ(std::stoull(statistic(stats, "system.serving.ftl_trimmed_pages")), programmed - gc - 25 * pages) << p;
  }
}

// A stream served on a preconditioned drive (full, aged by random overwrites):
// between requests the drive is idle and collects garbage in the background
// (ftl.gc_idle_us), which it does not when the background threshold is 0.
// A file that is not a drive state is one line and exit 2, as for `run`.
TEST(WorkloadServe, AnAgedDriveCollectsGarbageInTheGapsBetweenRequests) {
  const std::string s = stream("gaps", "model: 'SmolLM2-135M' dataset: 'hpt' documents: 50 requests: 10 "
                                       "poisson { rate_per_s: 0.5 }");
  const auto background_lines = [&](const std::string& set) {
    const std::string stats = path("gaps.csv");
    const CliResult r = run_cli("workload serve --platform gpu_fullcompute --stream " + shell_quote(s) +
                                " --set nand.pages_per_block=16 --set nand.blocks_per_plane=32 --precondition" + set +
                                " --stats " + shell_quote(stats));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_GT(std::stod(statistic(stats, "system.ssd.ftl_waf")), 1.5);
    return std::stoull(statistic(stats, "system.ssd.gc_background_lines"));
  };
  EXPECT_GT(background_lines(""), 0u);
  EXPECT_EQ(background_lines(" --set ftl.gc_background_free_ratio=0"), 0u);
  const CliResult r = run_cli("workload serve --platform memllm --stream " + shell_quote(s) + " --drive-state " +
                              shell_quote(s));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_NE(r.err.find("not an ispsim drive state"), std::string::npos) << r.err;
}

// A request whose KV AiF must keep in host memory but cannot: the stream is
// refused as `run` refuses that request (exit 3, why on stdout, no file).
TEST(WorkloadServe, OutOfMemoryAsRunRefusesTheRequest) {
  const std::string s = stream("big", "model: 'SmolLM2-1.7B' dataset: 'cad' documents: 20 requests: 1 "
                                      "poisson { rate_per_s: 1 }");
  const CliResult serve = run_cli("workload serve --platform aif --stream " + shell_quote(s) + " --requests " +
                                  shell_quote(path("big.csv")));
  EXPECT_EQ(serve.exit_code, 3) << serve.err;
  EXPECT_EQ(serve.out.rfind("AiF: out of memory: request 0 of the stream: its KV of ", 0), 0u) << serve.out;
  EXPECT_FALSE(fs::exists(path("big.csv")));
  ASSERT_EQ(run_cli("workload trace --stream " + shell_quote(s) + " --request 0 --out " + shell_quote(path("big.trace")))
                .exit_code, 0);
  EXPECT_EQ(run_cli("run --platform aif --trace " + shell_quote(path("big.trace"))).exit_code, 3);
}

TEST(WorkloadServe, BadInputs) {
  const std::string one = stream("one", kOne);
  CliResult r = run_cli("workload serve --platform b1 --stream " + shell_quote(one));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_NE(r.err.find("does not serve request streams"), std::string::npos) << r.err;
  r = run_cli("workload serve --platform memllm --stream " + shell_quote(one) + " --requests " + shell_quote(one));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  r = run_cli("workload trace --stream " + shell_quote(one) + " --request 3 --out " + shell_quote(path("x.trace")));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("has no such request"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("x.trace")));
}

}  // namespace

namespace {

// The SLO search on a real platform: the probes at the two ends and the
// bisection's, a bracket printed, exit 0; closed-loop workloads are refused.
TEST(WorkloadSlo, PrintsProbesAndABracket) {
  std::ofstream(path("w.txtpb")) << "model: 'SmolLM2-135M' dataset: 'hpt' documents: 50 requests: 8 "
                                    "poisson { rate_per_s: 1 }";
  const CliResult r = run_cli("workload slo --platform memllm --workload " + shell_quote(path("w.txtpb")) +
                              " --slo-ms 400 --low 0.5 --high 200 --steps 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("MemLLM: p99 ttft within 400 ms", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("highest rate within the SLO: between "), std::string::npos) << r.out;
  int probes = 0;
  for (size_t at = r.out.find("requests/s: "); at != std::string::npos; at = r.out.find("requests/s: ", at + 1))
    ++probes;
  EXPECT_EQ(probes, 3);
  std::ofstream(path("c.txtpb")) << "model: 'SmolLM2-135M' dataset: 'hpt' documents: 50 requests: 3 "
                                    "closed_loop { users: 1 }";
  const CliResult c = run_cli("workload slo --platform memllm --workload " + shell_quote(path("c.txtpb")) +
                              " --slo-ms 400");
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_NE(c.err.find("use poisson arrivals"), std::string::npos) << c.err;
}

}  // namespace
