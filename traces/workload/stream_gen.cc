#include "traces/workload/stream_gen.h"

#include <cmath>
#include <deque>
#include <limits>
#include <memory>

#include "common/error.h"
#include "traces/gen/dataset_profiles.h"
#include "traces/gen/model_presets.h"
#include "traces/gen/seeded_random.h"
#include "traces/workload/arrival_list.h"
#include "traces/workload/stream_io.h"
#include "traces/workload/workload_file.h"
#include "traces/workload/zipf.h"

namespace ispsim::workload {
namespace {

using tracegen::SeededRandom;

enum Stream : uint64_t { kCorpus = 0, kDocuments = 1, kArrivals = 2, kIngestion = 3, kLengths = 4 };

// An exponential interval of mean `mean_s` seconds (1 - u lies in (0, 1]).
double exponential(double mean_s, SeededRandom& random) { return -std::log(1.0 - random.uniform_unit()) * mean_s; }

uint64_t to_ns(double seconds) { return static_cast<uint64_t>(std::llround(seconds * 1e9)); }

// The live documents, oldest first: ids [first_id, first_id + size).
struct Store {
  uint64_t first_id = 0;
  std::deque<uint64_t> tokens;
  uint64_t next_id() const { return first_id + tokens.size(); }
  // Popularity rank r (1 = newest).
  DocumentRef by_rank(uint64_t rank) const {
    DocumentRef d;
    d.set_id(next_id() - rank);
    d.set_tokens(tokens[tokens.size() - rank]);
    return d;
  }
};

// Times of the next open-loop arrival: Poisson intervals or the list's lines.
class ArrivalSource {
 public:
  ArrivalSource(const Workload& w, const std::string& list_path)
      : random_(SeededRandom::derive_seed(w.seed(), kArrivals)), poisson_(w.has_poisson()) {
    if (poisson_) mean_s_ = 1.0 / w.poisson().rate_per_s();
    else list_ = std::make_unique<ArrivalListReader>(list_path);
  }
  bool next(double& seconds) {
    if (!poisson_) return list_->next(seconds);
    now_s_ += exponential(mean_s_, random_);
    seconds = now_s_;
    return true;
  }
  const std::string& list_path() const { return list_->path(); }

 private:
  SeededRandom random_;
  bool poisson_;
  double mean_s_ = 0, now_s_ = 0;
  std::unique_ptr<ArrivalListReader> list_;
};

class Generator {
 public:
  Generator(const Workload& w, const RecordSink& sink)
      : w_(w),
        sink_(sink),
        profile_(tracegen::find_dataset_profile(w.dataset())),
        zipf_(w.zipf_s(), w.has_ingestion() ? w.ingestion().capacity_documents() : w.documents()),
        documents_(SeededRandom::derive_seed(w.seed(), kDocuments)),
        lengths_(SeededRandom::derive_seed(w.seed(), kLengths)),
        ingestion_(SeededRandom::derive_seed(w.seed(), kIngestion)) {}

  void corpus() {
    SeededRandom random(SeededRandom::derive_seed(w_.seed(), kCorpus));
    for (uint64_t d = 0; d < w_.documents(); ++d) {
      StreamRecord r;
      *r.mutable_corpus_document() = add_document(random);
      sink_(r);
    }
  }

  void open_loop(const std::string& list_path) {
    ArrivalSource arrivals(w_, list_path);
    if (w_.has_ingestion()) next_ingest_s_ = exponential(1.0 / w_.ingestion().rate_per_s(), ingestion_);
    const uint64_t count = w_.requests() ? w_.requests() : std::numeric_limits<uint64_t>::max();
    double at_s = 0;
    uint64_t i = 0;
    for (; i < count && arrivals.next(at_s); ++i) {
      ingest_until(at_s);
      StreamRecord r = request(i);
      r.mutable_request()->set_arrival_ns(to_ns(at_s));
      sink_(r);
    }
    if (i == 0) throw BadInput(arrivals.list_path(), "has no arrival times");
    if (i < count && w_.requests())
      throw BadInput(arrivals.list_path(), "has " + std::to_string(i) + " arrival times, fewer than requests = " +
                                               std::to_string(count));
  }

  void closed_loop() {
    SeededRandom think(SeededRandom::derive_seed(w_.seed(), kArrivals));
    for (uint64_t i = 0; i < w_.requests(); ++i) {
      StreamRecord r = request(i);
      r.mutable_request()->set_think_ns(to_ns(exponential(w_.closed_loop().think_time_s(), think)));
      sink_(r);
    }
  }

 private:
  DocumentRef add_document(SeededRandom& random) {
    const uint64_t drawn = tracegen::draw_document_tokens(profile_, random);
    store_.tokens.push_back(w_.has_document_tokens() ? w_.document_tokens() : drawn);
    DocumentRef d;
    d.set_id(store_.next_id() - 1);
    d.set_tokens(store_.tokens.back());
    return d;
  }

  // Ingestions (and the evictions they cause) up to time `until_s`.
  void ingest_until(double until_s) {
    while (w_.has_ingestion() && next_ingest_s_ <= until_s) {
      StreamRecord in;
      in.mutable_ingest()->set_at_ns(to_ns(next_ingest_s_));
      *in.mutable_ingest()->mutable_document() = add_document(ingestion_);
      sink_(in);
      if (store_.tokens.size() > w_.ingestion().capacity_documents()) {
        StreamRecord out;
        out.mutable_evict()->set_at_ns(to_ns(next_ingest_s_));
        *out.mutable_evict()->mutable_document() = store_.by_rank(store_.tokens.size());
        store_.tokens.pop_front();
        ++store_.first_id;
        sink_(out);
      }
      next_ingest_s_ += exponential(1.0 / w_.ingestion().rate_per_s(), ingestion_);
    }
  }

  StreamRecord request(uint64_t index) {
    StreamRecord r;
    StreamRequest& q = *r.mutable_request();
    q.set_index(index);
    for (uint64_t rank : zipf_.draw_distinct(store_.tokens.size(), w_.top_k(), documents_))
      *q.add_documents() = store_.by_rank(rank);
    const uint64_t query = tracegen::draw_query_tokens(profile_, lengths_);
    const uint64_t answer = tracegen::draw_answer_tokens(profile_, lengths_);
    q.set_query_tokens(w_.has_query_tokens() ? w_.query_tokens() : query);
    q.set_answer_tokens(w_.has_answer_tokens() ? w_.answer_tokens() : answer);
    return r;
  }

  const Workload& w_;
  const RecordSink& sink_;
  const tracegen::DatasetProfile& profile_;
  const ZipfPopularity zipf_;
  SeededRandom documents_, lengths_, ingestion_;
  Store store_;
  double next_ingest_s_ = 0;
};

}  // namespace

StreamHeader stream_header(const Workload& workload) {
  StreamHeader header;
  *header.mutable_workload() = workload;
  *header.mutable_model() = tracegen::find_model_preset(workload.model(), "model");
  return header;
}

void generate_records(const Workload& workload, const std::string& arrivals_path, const RecordSink& sink) {
  Generator generator(workload, sink);
  generator.corpus();
  if (workload.has_closed_loop()) generator.closed_loop();
  else generator.open_loop(arrivals_path);
}

uint64_t generate_stream(const std::string& workload_path, const std::string& out_path) {
  const Workload workload = load_workload(workload_path);
  const std::string arrivals = workload.has_arrival_list() ? arrival_list_path(workload, workload_path) : "";
  return generate_stream(workload, arrivals, out_path);
}

uint64_t generate_stream(const Workload& workload, const std::string& arrivals, const std::string& out_path) {
  StreamWriter writer(out_path, stream_header(workload));
  uint64_t requests = 0;
  generate_records(workload, arrivals, [&](const StreamRecord& r) {
    writer.write(r);
    requests += r.has_request();
  });
  writer.close();
  return requests;
}

}  // namespace ispsim::workload
