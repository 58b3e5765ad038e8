#include "traces/workload/request_trace.h"

#include "traces/gen/seeded_random.h"
#include "traces/gen/shape_generator.h"
#include "traces/trace_io.h"
#include "traces/trace_validator.h"

namespace ispsim::workload {
namespace {

constexpr uint64_t kMaskStream = 5;  // after the generator's streams (stream_gen.h)

trace::Header request_header(const StreamHeader& header, const StreamRequest& request,
                             const tracegen::BlendRequest& r, const std::vector<trace::Program>& programs) {
  trace::Producer producer;
  producer.set_kind(trace::PRODUCER_SHAPE_GENERATOR);
  producer.set_tool("ispsim workload trace");
  trace::Setting* s = producer.add_settings();
  s->set_key("request");
  s->set_value(std::to_string(request.index()));
  return tracegen::make_header(r, programs, producer, header.workload().dataset());
}

}  // namespace

// A decode step is an embedding, per layer 12 ops (norm, qkv_proj, rope,
// kv_append, attention, o_proj, residual, norm, ffn_up, activation, ffn_down,
// residual) and a dictionary encode when the cache is compressed, then the
// final norm and LM head; a prefill of any program, fewer than 64 ops per layer.
uint64_t op_count_bound(const tracegen::BlendRequest& r) {
  const uint64_t layers = r.model.layers();
  return r.answer_tokens * (3 + 13 * layers) + 64 * layers + 64;
}

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
  trace::TraceWriter writer(path, request_header(header, request, r, tracegen::all_programs()));
  tracegen::write_programs(writer, r, tracegen::all_programs());
  writer.close();
}

RequestProgram request_program(const StreamHeader& header, const StreamRequest& request, trace::Program program,
                               const std::string& where) {
  const tracegen::BlendRequest r = blend_request(header, request);
  RequestProgram p;
  p.header = request_header(header, request, r, {program});
  trace::TraceValidator validator(where);
  validator.check_header(p.header);
  p.ops.ops.reserve(op_count_bound(r));
  tracegen::emit_programs(
      [&](trace::Op& op) {
        validator.check_op(op);
        p.ops.add(std::move(op));
      },
      r, {program});
  validator.check_end(false);
  for (trace::ProgramInfo& info : *p.header.mutable_programs()) info.set_op_count(validator.ops_of(info.program()));
  return p;
}

ProgramsAhead::~ProgramsAhead() {
  if (prepared_.valid()) prepared_.wait();
}

void ProgramsAhead::prepare(const StreamRequest& request, const std::string& where) {
  if (prepared_.valid()) return;
  prepared_index_ = request.index();
  prepared_ = std::async(std::launch::async, [this, request, where] {
    return request_program(header_, request, program_, where);
  });
}

RequestProgram ProgramsAhead::take(const StreamRequest& request, const std::string& where) {
  if (prepared_.valid() && prepared_index_ == request.index()) return prepared_.get();
  return request_program(header_, request, program_, where);
}

RequestKvTokens request_kv_tokens(const StreamRequest& request) {
  RequestKvTokens kv;
  for (const DocumentRef& d : request.documents()) kv.precomputed += d.tokens();
  kv.appended = kv.precomputed + request.query_tokens() + request.answer_tokens();
  return kv;
}

}  // namespace ispsim::workload
