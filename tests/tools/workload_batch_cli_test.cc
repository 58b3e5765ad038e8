// `ispsim workload serve` on a host that batches (host.batch_limit > 1):
// throughput rises with the limit at a load that saturates one request at a
// time, the interactive response-time law still holds, batched SSD attention
// runs, requests in service together reuse the SSD's appended slots, and
// limits a platform cannot honour are refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "tests/support/cli.h"
#include "tests/support/workload_cli.h"

using ispsim::testing::CliResult;
using ispsim::testing::csv_rows;
using ispsim::testing::path;
using ispsim::testing::read_text;
using ispsim::testing::run_cli;
using ispsim::testing::shell_quote;
using ispsim::testing::stream;

namespace {

// The value of statistic `name` in the statistics CSV `stats`, as a number.
double number(const std::string& stats, const std::string& name) {
  const std::string value = ispsim::testing::statistic(stats, name);
  if (value.empty()) ADD_FAILURE() << "no statistic " << name;
  return value.empty() ? 0 : std::stod(value);
}

// Serves `stream` on `platform` with `settings`; returns statistic `name` of system.serving.
double serve(const std::string& stream, const std::string& platform, const std::string& settings,
             const std::string& name) {
  const std::string stats = path("stats.csv");
  const CliResult r =
      run_cli("workload serve --platform " + platform + " " + settings + " --stream " + shell_quote(stream) +
              " --stats " + shell_quote(stats));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return number(stats, "system.serving." + name);
}

// 40 requests at 200/s: far beyond what one request at a time serves.
const char* kSaturating = "model: 'SmolLM2-135M' dataset: 'hpt' documents: 20 top_k: 2 document_tokens: 256 "
                          "query_tokens: 16 answer_tokens: 8 requests: 40 poisson { rate_per_s: 200 }";

TEST(WorkloadBatch, ThroughputRisesWithTheBatchLimit) {
  const std::string s = stream("saturating", kSaturating);
  const double one = serve(s, "server_gpu_precompute", "--set host.batch_limit=1", "throughput");
  const double four = serve(s, "server_gpu_precompute", "--set host.batch_limit=4", "throughput");
  const double sixteen = serve(s, "server_gpu_precompute", "", "throughput");  // the server's default
  // Less than in proportion: a request waits for a slot of the appended
  // region while the finished requests' write-backs drain (limit + 1 slots).
  EXPECT_GT(four, 1.1 * one);
  EXPECT_GT(sixteen, 1.3 * one);
  EXPECT_GT(sixteen, four);
  // A batched step takes longer than one request's, so tokens come slower.
  EXPECT_GT(serve(s, "server_gpu_precompute", "--set host.batch_limit=4", "tbt.mean"),
            serve(s, "server_gpu_precompute", "--set host.batch_limit=1", "tbt.mean"));
}

// Closed loop, N = 8 users thinking Z (exponential, mean 20 ms): throughput
// X = N / (R + Z) (the interactive response-time law, with the stream's
// realized mean Z) up to the run's ends (users finishing at different times
// bias the measured X low: 0.2 % here).
TEST(WorkloadBatch, ClosedLoopThroughputIsUsersOverResponsePlusThinkTime) {
  const std::string s = stream("closed", "model: 'SmolLM2-135M' dataset: 'hpt' documents: 20 top_k: 2 "
                                         "document_tokens: 256 query_tokens: 16 answer_tokens: 4 requests: 320 "
                                         "closed_loop { users: 8 think_time_s: 0.02 }");
  const CliResult dump = run_cli("workload dump " + shell_quote(s));
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  std::istringstream lines(dump.out);
  double think_s = 0, requests = 0;
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("request ", 0) == 0) {
      think_s += std::stod(line.substr(line.find("think_ns ") + 9)) * 1e-9;
      ++requests;
    }
  ASSERT_EQ(requests, 320);
  const double x = serve(s, "server_gpu_precompute", "--set host.batch_limit=4", "throughput");
  const double r_s = serve(s, "server_gpu_precompute", "--set host.batch_limit=4", "latency.mean");
  const double law = 8 / (r_s + think_s / requests);
  EXPECT_NEAR(x, law, 0.02 * law);
}

// MemLLM batches too once its inter-layer prefetch is off: one fused command
// per layer carries the batch's queries, the SSD serves their KV one after
// another.
TEST(WorkloadBatch, InStorageAttentionServesTheBatch) {
  const std::string s = stream("saturating", kSaturating);
  const std::string no_prefetch = "--set placement.ssd_prefetch_layers=0";
  const double one = serve(s, "memllm", no_prefetch + " --set host.batch_limit=1", "throughput");
  const double four = serve(s, "memllm", no_prefetch + " --set host.batch_limit=4", "throughput");
  EXPECT_GT(four, one);
}

// Eighty requests, two in service at a time, on a drive of 64 units x 16
// blocks x 16 pages = 16,384 pages, fewer than their appended KV sums to: each
// request holds one of the three slots of the appended region (through its own
// port, inside the batched attention commands too), TRIMmed when its writes
// drain and taken by a later request. Every page programmed is trimmed (no GC
// copies: a slot's pages are all invalid when its blocks are collected), and
// the FTL ends with the precomputed KV alone, 30 layers x ceil(longest context
// / 64) tiles x 3 KV heads, valid as mapped.
TEST(WorkloadBatch, BatchedRequestsReuseTheSlotsOfADriveTheirAppendsExceed) {
  const std::string s = stream("long", "model: 'SmolLM2-135M' dataset: 'hpt' documents: 50 requests: 80 "
                                       "poisson { rate_per_s: 20 }");
  const std::string stats = path("long.csv"), requests = path("long_requests.csv");
  const CliResult r = run_cli("workload serve --platform memllm --set host.batch_limit=2 "
                              "--set placement.ssd_prefetch_layers=0 --set nand.pages_per_block=16 "
                              "--set nand.blocks_per_plane=16 --set ftl.spare_factor=0.2 --stream " +
                              shell_quote(s) + " --stats " + shell_quote(stats) + " --requests " +
                              shell_quote(requests));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(number(stats, "system.serving.requests"), 80);
  EXPECT_EQ(number(stats, "system.serving.batch.largest"), 2);
  const double programmed = number(stats, "system.ssd.nand_pages_programmed");
  EXPECT_GT(programmed, 16384);
  EXPECT_EQ(number(stats, "system.ssd.gc_pages_programmed"), 0);
  EXPECT_EQ(number(stats, "system.serving.ftl_trimmed_pages"), programmed);
  uint64_t longest = 0;
  for (const auto& row : csv_rows(requests))
    longest = std::max<uint64_t>(longest, std::stoull(row.at("context_tokens")));
  EXPECT_EQ(number(stats, "system.serving.ftl_mapped_pages"), 30 * ((longest + 63) / 64) * 3);
  EXPECT_EQ(number(stats, "system.serving.ftl_valid_pages"), number(stats, "system.serving.ftl_mapped_pages"));
}

// Two requests arriving together on a batching host: the second is admitted
// at once but its prefill (and so its service) starts when the first's ends,
// at the first's first token.
TEST(WorkloadBatch, QueueingLastsUntilThePrefillStarts) {
  std::ofstream(path("together.txt")) << "0\n0\n";
  const std::string s = stream("together", "model: 'SmolLM2-135M' dataset: 'hpt' documents: 1 top_k: 1 "
                                           "document_tokens: 256 query_tokens: 16 answer_tokens: 4 "
                                           "arrival_list { file: 'together.txt' }");
  const CliResult r = run_cli("workload serve --platform server_gpu_precompute --stream " + shell_quote(s) +
                              " --requests " + shell_quote(path("together.csv")));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, std::map<std::string, std::string>> by_request;
  for (const auto& row : csv_rows(path("together.csv"))) by_request[row.at("request")] = row;
  ASSERT_EQ(by_request.size(), 2u);
  EXPECT_EQ(by_request["0"].at("queueing_s"), "0");
  EXPECT_EQ(by_request["1"].at("queueing_s"), by_request["0"].at("ttft_s"));
  EXPECT_EQ(by_request["1"].at("start_s"), by_request["0"].at("ttft_s"));
}

// KV that must stay in host memory: the requests in service together must fit
// together (each SmolLM2-1.7B HotpotQA request fits the Jetson's budget alone,
// 16 of the largest do not): out of memory, exit 3, no file.
TEST(WorkloadBatch, ResidentKvOfTheWholeBatchMustFit) {
  const std::string s = stream("resident", "model: 'SmolLM2-1.7B' dataset: 'hpt' documents: 20 requests: 2 "
                                           "poisson { rate_per_s: 1 }");
  const CliResult r = run_cli("workload serve --platform gpu_precompute --set placement.kv_resident_in_host_memory=true "
                              "--set host.batch_limit=16 --stream " + shell_quote(s) + " --requests " +
                              shell_quote(path("resident.csv")));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.out.rfind("GPU-PreCompute: out of memory: 16 requests in service together", 0), 0u) << r.out;
  EXPECT_FALSE(std::ifstream(path("resident.csv")).good());
}

TEST(WorkloadBatch, LimitsThePlatformCannotHonourAreRefused) {
  const std::string s = stream("saturating", kSaturating);
  const auto refused = [&](const std::string& platform, const std::string& settings, const std::string& why) {
    const CliResult r = run_cli("workload serve --platform " + platform + " " + settings + " --stream " +
                                shell_quote(s) + " --requests " + shell_quote(path("refused.csv")));
    EXPECT_EQ(r.exit_code, 2) << platform << " " << settings;
    EXPECT_EQ(r.err_lines(), 1) << r.err;
    EXPECT_NE(r.err.find(why), std::string::npos) << r.err;
    EXPECT_FALSE(std::ifstream(path("refused.csv")).good());
  };
  refused("memllm", "--set host.batch_limit=2", "needs placement.ssd_prefetch_layers = 0");
  refused("aif", "--set host.batch_limit=2", "placement.decode_linear = IN_FLASH");
  refused("gpu_precompute", "--set host.batch_limit=0", "host.batch_limit");
  refused("gpu_precompute", "--set host.batch_limit=257", "host.batch_limit");
}

}  // namespace
