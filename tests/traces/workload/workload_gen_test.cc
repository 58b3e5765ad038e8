// The request stream generator (traces/workload): the Zipf and Poisson draws
// against their closed forms, closed loop, ingestion under a capacity, arrival
// lists, the stream file round trip and determinism.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <set>

#include "common/error.h"
#include "tests/support/cli.h"
#include "tests/support/files.h"
#include "traces/workload/stream_gen.h"
#include "traces/workload/stream_io.h"
#include "traces/workload/workload_file.h"
#include "traces/workload/zipf.h"
#include "schema/textproto_file.h"

using namespace ispsim::workload;
using ispsim::testing::scratch_dir;

namespace {

Workload parse(const std::string& text) {
  Workload w;
  ispsim::schema::parse_textproto(text, "test.txtpb", w);
  return resolve_workload(w, "test.txtpb");
}

std::vector<StreamRecord> records(const Workload& w, const std::string& list = "") {
  std::vector<StreamRecord> out;
  generate_records(w, list, [&](const StreamRecord& r) { out.push_back(r); });
  return out;
}

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = (scratch_dir() / name).string();
  std::ofstream(path) << text;
  return path;
}

const char* kPoisson =
    "model: 'SmolLM2-135M' dataset: 'hpt' documents: 1000 requests: 20000 poisson { rate_per_s: 50 }";

// Rank 1's share of single draws: 1 / H(n, s), within four standard errors.
TEST(WorkloadZipf, MostPopularRankMatchesItsClosedForm) {
  const uint64_t n = 1000, draws = 200000;
  for (double s : {0.0, 0.99, 1.5}) {
    ZipfPopularity zipf(s, n);
    ispsim::tracegen::SeededRandom random(7);
    uint64_t first = 0;
    for (uint64_t i = 0; i < draws; ++i) first += zipf.draw(n, random) == 1;
    double h = 0;
    for (uint64_t r = 1; r <= n; ++r) h += std::pow(double(r), -s);
    const double p = 1.0 / h;
    EXPECT_DOUBLE_EQ(zipf.probability(1, n), p);
    EXPECT_NEAR(double(first) / draws, p, 4 * std::sqrt(p * (1 - p) / draws)) << "s = " << s;
  }
}

TEST(WorkloadZipf, DistinctRanksAreSortedAndTakeEveryRankWhenKEqualsN) {
  ZipfPopularity zipf(3.0, 6);  // rank 6 has weight 1/216: the walk over the remaining ranks takes over
  ispsim::tracegen::SeededRandom random(1);
  EXPECT_EQ(zipf.draw_distinct(6, 6, random), (std::vector<uint64_t>{1, 2, 3, 4, 5, 6}));
  for (int i = 0; i < 100; ++i) {
    const auto ranks = zipf.draw_distinct(6, 3, random);
    ASSERT_EQ(ranks.size(), 3u);
    EXPECT_TRUE(ranks[0] < ranks[1] && ranks[1] < ranks[2]);
    EXPECT_LE(ranks[2], 6u);
  }
}

// Exponential intervals of mean 1/λ: the mean gap within four standard errors
// (σ = 1/λ), and P(gap > mean) = e^-1.
TEST(WorkloadPoisson, InterArrivalTimesAreExponentialOfMeanOneOverRate) {
  const auto all = records(parse(kPoisson));
  std::vector<double> gaps;
  uint64_t previous = 0;
  for (const StreamRecord& r : all) {
    if (!r.has_request()) continue;
    gaps.push_back((r.request().arrival_ns() - previous) * 1e-9);
    previous = r.request().arrival_ns();
  }
  ASSERT_EQ(gaps.size(), 20000u);
  double sum = 0;
  uint64_t long_gaps = 0;
  for (double g : gaps) sum += g, long_gaps += g > 0.02;
  const double n = double(gaps.size());
  EXPECT_NEAR(sum / n, 0.02, 4 * 0.02 / std::sqrt(n));
  const double p = std::exp(-1.0);
  EXPECT_NEAR(long_gaps / n, p, 4 * std::sqrt(p * (1 - p) / n));
}

TEST(WorkloadStream, RequestsHaveTopKDistinctLiveDocumentsAndProfileLengths) {
  const auto all = records(parse(kPoisson));
  ASSERT_EQ(all.size(), 1000u + 20000u);
  std::vector<uint64_t> corpus;
  for (size_t i = 0; i < 1000; ++i) {
    ASSERT_TRUE(all[i].has_corpus_document());
    EXPECT_EQ(all[i].corpus_document().id(), i);
    EXPECT_GE(all[i].corpus_document().tokens(), 20u);   // hpt's document range 20..800
    EXPECT_LE(all[i].corpus_document().tokens(), 800u);
    corpus.push_back(all[i].corpus_document().tokens());
  }
  for (size_t i = 1000; i < all.size(); ++i) {
    const StreamRequest& q = all[i].request();
    EXPECT_EQ(q.index(), i - 1000);
    ASSERT_EQ(q.documents_size(), 5);
    std::set<uint64_t> ids;
    for (const DocumentRef& d : q.documents()) {
      ids.insert(d.id());
      EXPECT_EQ(d.tokens(), corpus.at(d.id()));
    }
    EXPECT_EQ(ids.size(), 5u);
    EXPECT_GE(q.query_tokens(), 10u);
    EXPECT_LE(q.query_tokens(), 40u);
    EXPECT_LE(q.answer_tokens(), 6u);
  }
}

// With top-1 retrieval the newest document (rank 1) is drawn with probability
// 1 / H(D, s), within four standard errors.
TEST(WorkloadStream, NewestDocumentIsTheMostPopular) {
  const auto all = records(parse(std::string(kPoisson) + " top_k: 1"));
  uint64_t newest = 0;
  for (const StreamRecord& r : all)
    if (r.has_request()) newest += r.request().documents(0).id() == 999;
  double h = 0;
  for (int rank = 1; rank <= 1000; ++rank) h += std::pow(double(rank), -0.99);
  const double p = 1 / h, n = 20000;
  EXPECT_NEAR(newest / n, p, 4 * std::sqrt(p * (1 - p) / n));
}

TEST(WorkloadStream, ClosedLoopRequestsCarryExponentialThinkTimes) {
  const auto all = records(parse("model: 'SmolLM2-135M' dataset: 'hpt' documents: 10 requests: 20000 "
                                 "closed_loop { users: 4 think_time_s: 0.5 } document_tokens: 100 query_tokens: 20 "
                                 "answer_tokens: 3"));
  double sum = 0;
  for (const StreamRecord& r : all) {
    if (!r.has_request()) {
      EXPECT_EQ(r.corpus_document().tokens(), 100u);
      continue;
    }
    EXPECT_FALSE(r.request().has_arrival_ns());
    EXPECT_EQ(r.request().query_tokens(), 20u);
    EXPECT_EQ(r.request().answer_tokens(), 3u);
    sum += r.request().think_ns() * 1e-9;
  }
  EXPECT_NEAR(sum / 20000, 0.5, 4 * 0.5 / std::sqrt(20000.0));
}

// Documents arrive at rate μ; the oldest leaves when the store exceeds its
// capacity; requests only see live documents.
TEST(WorkloadStream, IngestionEvictsTheOldestUnderTheCapacity) {
  const auto all = records(parse("model: 'SmolLM2-135M' dataset: 'hpt' documents: 20 requests: 5000 top_k: 3 "
                                 "poisson { rate_per_s: 10 } ingestion { rate_per_s: 20 capacity_documents: 50 }"));
  uint64_t first = 0, next = 20, ingested = 0, evicted = 0, last_ns = 0;
  for (const StreamRecord& r : all) {
    if (r.has_ingest()) {
      EXPECT_EQ(r.ingest().document().id(), next++);
      ++ingested;
      last_ns = r.ingest().at_ns();
    } else if (r.has_evict()) {
      EXPECT_EQ(r.evict().document().id(), first++);
      ++evicted;
    } else if (r.has_request()) {
      for (const DocumentRef& d : r.request().documents()) EXPECT_TRUE(d.id() >= first && d.id() < next);
      EXPECT_LE(next - first, 50u);
    }
  }
  EXPECT_EQ(evicted, ingested - 30);
  // About 20 documents per second over the 500 s the requests last.
  EXPECT_NEAR(ingested / (last_ns * 1e-9), 20.0, 4 * 20.0 / std::sqrt(double(ingested)));
}

TEST(WorkloadStream, ArrivalListGivesTheArrivalTimes) {
  const std::string list = write_file("arrivals.txt", "# seconds\n0\n0.5\n\n0.5\n2.25\n");
  auto w = parse("model: 'SmolLM2-135M' dataset: 'hpt' documents: 10 arrival_list { file: 'arrivals.txt' }");
  std::vector<uint64_t> times;
  for (const StreamRecord& r : records(w, list))
    if (r.has_request()) times.push_back(r.request().arrival_ns());
  EXPECT_EQ(times, (std::vector<uint64_t>{0, 500000000, 500000000, 2250000000}));
  w.set_requests(2);
  EXPECT_EQ(records(w, list).size(), 12u);
  w.set_requests(5);
  EXPECT_THROW(records(w, list), ispsim::BadInput);
}

TEST(WorkloadStream, FileRoundTripsTheGeneratedRecords) {
  const std::string spec = write_file("w.txtpb", kPoisson);
  const std::string out = (scratch_dir() / "w.stream").string();
  EXPECT_EQ(generate_stream(spec, out), 20000u);
  const auto expected = records(load_workload(spec));
  StreamReader reader(out);
  EXPECT_EQ(reader.header().workload().zipf_s(), 0.99);
  EXPECT_EQ(reader.header().model().name(), "SmolLM2-135M");
  StreamRecord r;
  size_t i = 0;
  while (reader.next(r)) {
    ASSERT_LT(i, expected.size());
    EXPECT_EQ(r.SerializeAsString(), expected[i++].SerializeAsString());
  }
  EXPECT_EQ(i, expected.size());
}

TEST(WorkloadStream, SameSeedSameBytesOtherSeedOtherBytes) {
  const std::string a = write_file("a.txtpb", std::string(kPoisson) + " seed: 3");
  const std::string b = write_file("b.txtpb", std::string(kPoisson) + " seed: 4");
  const auto out = [](const char* name) { return (scratch_dir() / name).string(); };
  generate_stream(a, out("a1.stream"));
  generate_stream(a, out("a2.stream"));
  generate_stream(b, out("b.stream"));
  const std::string a1 = ispsim::testing::read_text(out("a1.stream"));
  EXPECT_GT(a1.size(), 100000u);
  EXPECT_EQ(a1, ispsim::testing::read_text(out("a2.stream")));
  EXPECT_NE(a1, ispsim::testing::read_text(out("b.stream")));
}

}  // namespace

namespace {

// The shipped examples (traces/workload/examples) load and draw their streams.
TEST(WorkloadStream, ExamplesGenerate) {
  const std::string dir = std::string(ISPSIM_SOURCE_DIR) + "/traces/workload/examples/";
  for (const auto& [name, requests] : std::vector<std::pair<std::string, uint64_t>>{
           {"hpt_poisson.txtpb", 1000}, {"cad_closed_loop.txtpb", 200}, {"wik_ingestion.txtpb", 500},
           {"hpt_server.txtpb", 200}}) {
    uint64_t seen = 0;
    generate_records(load_workload(dir + name), "", [&](const StreamRecord& r) { seen += r.has_request(); });
    EXPECT_EQ(seen, requests) << name;
  }
}

}  // namespace
