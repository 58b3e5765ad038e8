#include "traces/workload/request_trace.h"

#include "traces/gen/seeded_random.h"
#include "traces/gen/shape_generator.h"
#include "traces/trace_io.h"

namespace ispsim::workload {
namespace {

constexpr uint64_t kMaskStream = 5;  // after the generator's streams (stream_gen.h)

}  // namespace

tracegen::BlendRequest blend_request(const StreamHeader& header, const StreamRequest& request) {
  tracegen::BlendRequest r;
  r.model = header.model();
  uint64_t context = 0;
  for (const DocumentRef& d : request.documents()) {
    r.doc_tokens.push_back(d.tokens());
    context += d.tokens();
  }
  r.query_tokens = request.query_tokens();
  r.answer_tokens = request.answer_tokens();
  r.recompute_ratio = header.workload().recompute_ratio();
  const uint64_t seed = tracegen::SeededRandom::derive_seed(
      tracegen::SeededRandom::derive_seed(header.workload().seed(), kMaskStream), request.index());
  r.hkvd_masks = tracegen::synthetic_hkvd_masks(r.model.layers(), context,
                                                tracegen::selected_tokens(context, r.recompute_ratio),
                                                tracegen::kDefaultMaskResampleFraction, seed);
  return r;
}

void write_request_trace(const StreamHeader& header, const StreamRequest& request, const std::string& path) {
  const tracegen::BlendRequest r = blend_request(header, request);
  trace::Producer producer;
  producer.set_kind(trace::PRODUCER_SHAPE_GENERATOR);
  producer.set_tool("ispsim workload trace");
  trace::Setting* s = producer.add_settings();
  s->set_key("request");
  s->set_value(std::to_string(request.index()));
  const auto programs = tracegen::all_programs();
  trace::TraceWriter writer(path, tracegen::make_header(r, programs, producer, header.workload().dataset()));
  tracegen::write_programs(writer, r, programs);
  writer.close();
}

}  // namespace ispsim::workload
