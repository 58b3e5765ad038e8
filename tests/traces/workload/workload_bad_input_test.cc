// Bad workload files and request streams through the CLI: exit code 2, one
// stderr line naming the file and the problem, and no output file left.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/support/cli.h"
#include "tests/support/files.h"

namespace fs = std::filesystem;
using ispsim::testing::CliResult;
using ispsim::testing::run_cli;
using ispsim::testing::scratch_dir;
using ispsim::testing::shell_quote;

namespace {

const std::string kGood = "model: 'SmolLM2-135M' dataset: 'hpt' documents: 100 requests: 50 poisson { rate_per_s: 2 }";

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = (scratch_dir() / name).string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

CliResult gen(const std::string& spec, const std::string& out) {
  return run_cli("workload gen --workload " + shell_quote(spec) + " --out " + shell_quote(out));
}

// `text` as a workload file is refused: one line naming `file` and `problem`, no output.
void expect_refused(const std::string& text, const std::string& problem, const std::string& file_name = "w.txtpb") {
  const std::string spec = write_file("w.txtpb", text);
  const std::string out = (scratch_dir() / "w.stream").string();
  const CliResult r = gen(spec, out);
  EXPECT_EQ(r.exit_code, 2) << text;
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_EQ(r.err.rfind("ispsim: error: " + (scratch_dir() / file_name).string(), 0), 0u) << r.err;
  EXPECT_NE(r.err.find(problem), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
  for (const auto& entry : fs::directory_iterator(scratch_dir()))
    EXPECT_EQ(entry.path().filename().string().find(".tmp."), std::string::npos) << entry.path();
}

TEST(WorkloadBadInput, GoodFileWritesTheStream) {
  const std::string out = (scratch_dir() / "w.stream").string();
  const CliResult r = gen(write_file("w.txtpb", kGood), out);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "wrote " + out + ": 50 requests\n");
  const CliResult dump = run_cli("workload dump " + shell_quote(out));
  EXPECT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_NE(dump.out.find("\nrequest 49 arrival_ns "), std::string::npos) << dump.out;
}

TEST(WorkloadBadInput, NegativeRate) {
  expect_refused("model: 'SmolLM2-135M' dataset: 'hpt' documents: 100 requests: 5 poisson { rate_per_s: -1 }",
                 "poisson.rate_per_s = -1: must be a positive number of events per second");
  expect_refused(kGood + " ingestion { rate_per_s: -3 capacity_documents: 200 }",
                 "ingestion.rate_per_s = -3: must be a positive");
  expect_refused("model: 'SmolLM2-135M' dataset: 'hpt' documents: 100 requests: 5 "
                 "closed_loop { users: 2 think_time_s: -0.5 }",
                 "closed_loop.think_time_s = -0.5: must be a non-negative number of seconds");
}

TEST(WorkloadBadInput, EmptyCorpus) {
  expect_refused("model: 'SmolLM2-135M' dataset: 'hpt' requests: 5 top_k: 1 poisson { rate_per_s: 1 }",
                 "documents = 0: the corpus is empty");
}

TEST(WorkloadBadInput, TopKAboveTheCorpus) {
  expect_refused("model: 'SmolLM2-135M' dataset: 'hpt' documents: 4 requests: 5 poisson { rate_per_s: 1 }",
                 "top_k = 5: must be within 1..documents (4)");
}

TEST(WorkloadBadInput, UnknownProfileAndModel) {
  expect_refused("model: 'SmolLM2-135M' dataset: 'squad' documents: 10 requests: 5 poisson { rate_per_s: 1 }",
                 "dataset");
  expect_refused("model: 'GPT-9' dataset: 'hpt' documents: 10 requests: 5 poisson { rate_per_s: 1 }", "model");
}

TEST(WorkloadBadInput, ArrivalListOutOfOrder) {
  const std::string list = write_file("arrivals.txt", "0.1\n0.3\n0.2\n");
  const std::string spec = write_file("w.txtpb", "model: 'SmolLM2-135M' dataset: 'hpt' documents: 10 "
                                                 "arrival_list { file: 'arrivals.txt' }");
  const std::string out = (scratch_dir() / "w.stream").string();
  const CliResult r = gen(spec, out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "ispsim: error: " + list + ":3: arrival 0.2 s is before the previous one (0.300000 s): the list "
                   "must be in time order\n");
  EXPECT_FALSE(fs::exists(out));
}

TEST(WorkloadBadInput, MissingOrInconsistentFields) {
  expect_refused("model: 'SmolLM2-135M' dataset: 'hpt' documents: 10 requests: 5", "no arrival process");
  expect_refused("model: 'SmolLM2-135M' dataset: 'hpt' documents: 10 poisson { rate_per_s: 1 }", "requests is missing");
  expect_refused("model: 'SmolLM2-135M' dataset: 'hpt' documents: 10 requests: 5 closed_loop { users: 2 } "
                 "ingestion { rate_per_s: 1 capacity_documents: 20 }",
                 "ingestion needs an open-loop arrival process");
  expect_refused(kGood + " ingestion { rate_per_s: 1 capacity_documents: 50 }",
                 "ingestion.capacity_documents = 50: must be within 100..");
  expect_refused(kGood + " zipf_s: -1", "zipf_s = -1: must be a finite number >= 0");
  expect_refused(kGood + " recompute_ratio: 1.5", "recompute_ratio = 1.5: must be within 0..1");
  expect_refused(kGood + " rate: 3", "w.txtpb:1:");  // an unknown field, with its position
}

TEST(WorkloadBadInput, CorruptOrTruncatedStream) {
  const std::string out = (scratch_dir() / "w.stream").string();
  ASSERT_EQ(gen(write_file("w.txtpb", kGood), out).exit_code, 0);
  const std::string bytes = ispsim::testing::read_text(out);
  const std::string cut = write_file("cut.stream", bytes.substr(0, bytes.size() - 3));
  CliResult r = run_cli("workload dump " + shell_quote(cut));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_EQ(r.err.rfind("ispsim: error: " + cut + ": ", 0), 0u) << r.err;
  std::string flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x10;
  const std::string bad = write_file("bad.stream", flipped);
  r = run_cli("workload dump " + shell_quote(bad));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("CRC-32C"), std::string::npos) << r.err;
  r = run_cli("workload dump " + shell_quote(write_file("text.stream", kGood)));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not a request stream file"), std::string::npos) << r.err;
}

}  // namespace
