// The single-request programs a served stream runs (traces/workload/request_trace.h):
// one program alone is the three-program trace's ops of that program, ids
// counted from 0; the KV space from the request's shape alone is what its ops
// append.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "schema/textproto_file.h"
#include "traces/gen/program_builder.h"
#include "traces/trace_validator.h"
#include "traces/workload/request_trace.h"
#include "traces/workload/stream_gen.h"
#include "traces/workload/workload_file.h"

using namespace ispsim;
using namespace ispsim::workload;

namespace {

// The header and requests of a stream drawn from `text` (a workload file).
std::pair<StreamHeader, std::vector<StreamRequest>> stream(const std::string& text) {
  Workload w;
  schema::parse_textproto(text, "test.txtpb", w);
  w = resolve_workload(w, "test.txtpb");
  std::pair<StreamHeader, std::vector<StreamRequest>> s;
  generate_records(w, "", [&](const StreamRecord& r) {
    if (r.has_request()) s.second.push_back(r.request());
  });
  s.first = stream_header(w);
  return s;
}

const char* kStreams[] = {
    "model: 'SmolLM2-135M' dataset: 'hpt' documents: 100 requests: 6 poisson { rate_per_s: 1 }",
    "model: 'SmolLM2-360M' dataset: 'cad' documents: 20 top_k: 2 requests: 3 poisson { rate_per_s: 1 }",
    "model: 'SmolLM2-135M' dataset: 'hpt' documents: 10 document_tokens: 40 query_tokens: 3 answer_tokens: 0 "
    "requests: 2 poisson { rate_per_s: 1 }"};

TEST(RequestTrace, OneProgramIsTheFullTracesOpsOfThatProgram) {
  const auto [header, requests] = stream(kStreams[0]);
  for (const StreamRequest& request : requests)
    for (trace::Program program : tracegen::all_programs()) {
      std::vector<trace::Op> all;
      tracegen::emit_programs([&](const trace::Op& op) { if (op.program() == program) all.push_back(op); },
                              blend_request(header, request), tracegen::all_programs());
      const RequestProgram one = request_program(header, request, program, "test");
      ASSERT_EQ(one.ops.ops.size(), all.size());
      EXPECT_LE(all.size(), op_count_bound(blend_request(header, request)));
      ASSERT_EQ(one.header.programs_size(), 1);
      EXPECT_EQ(one.header.programs(0).op_count(), all.size());
      EXPECT_LE(one.ops.masks.distinct(), header.model().layers()) << "at most one mask per layer is held";
      const uint64_t offset = all.front().id();
      for (size_t i = 0; i < all.size(); ++i) {
        trace::Op shifted = all[i];
        shifted.set_id(shifted.id() - offset);
        for (auto& dep : *shifted.mutable_deps()) dep -= offset;
        ASSERT_EQ(one.ops.masks.with_mask(i, one.ops.ops[i]).SerializeAsString(), shifted.SerializeAsString())
            << trace::Program_Name(program) << i;
      }
    }
}

TEST(RequestTrace, KvTokensFromTheShapeAreWhatTheOpsAppend) {
  for (const char* text : kStreams) {
    const auto [header, requests] = stream(text);
    for (const StreamRequest& request : requests) {
      const RequestKvTokens kv = request_kv_tokens(request);
      uint64_t context = 0;
      for (const DocumentRef& d : request.documents()) context += d.tokens();
      EXPECT_EQ(kv.precomputed, context);
      for (trace::Program program : tracegen::all_programs()) {
        std::map<uint32_t, uint64_t> appended;
        const RequestProgram p = request_program(header, request, program, "test");
        EXPECT_LE(p.ops.ops.size(), op_count_bound(blend_request(header, request)));
        for (const trace::Op& op : p.ops.ops)
          if (op.has_kv_append()) appended[op.layer()] += trace::moved_tokens(op.kv_append());
        uint64_t most = 0;
        for (const auto& [layer, n] : appended) most = std::max(most, n);
        EXPECT_EQ(kv.appended, most) << text << " " << trace::Program_Name(program);
      }
    }
  }
}

std::string serialized(const RequestProgram& p) {
  std::string bytes = p.header.SerializeAsString();
  for (size_t i = 0; i < p.ops.ops.size(); ++i) bytes += p.ops.masks.with_mask(i, p.ops.ops[i]).SerializeAsString();
  return bytes;
}

// A program made ahead is the one made on the spot; one not prepared is made
// on the spot while the prepared one waits for its request.
TEST(RequestTrace, ProgramsMadeAheadAreTheProgramsMadeOnTheSpot) {
  const auto [header, requests] = stream(kStreams[1]);
  ASSERT_GE(requests.size(), 3u);
  for (trace::Program program : tracegen::all_programs()) {
    auto on_the_spot = [&](size_t i) { return serialized(request_program(header, requests[i], program, "test")); };
    ProgramsAhead ahead(header, program);
    ahead.prepare(requests[0], "test");
    ahead.prepare(requests[1], "test");  // one at a time: not made
    EXPECT_EQ(serialized(ahead.take(requests[0], "test")), on_the_spot(0));
    ahead.prepare(requests[2], "test");
    EXPECT_EQ(serialized(ahead.take(requests[1], "test")), on_the_spot(1));
    EXPECT_EQ(serialized(ahead.take(requests[2], "test")), on_the_spot(2));
  }
}

}  // namespace
