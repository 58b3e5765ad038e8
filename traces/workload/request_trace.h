// The single-request trace of one request of a stream: the same three programs
// `trace gen --shape` writes, for the request's documents, query and answer,
// with synthetic HKVD masks seeded by the workload's seed and the request's
// index. A stream's server simulates exactly this trace per request, so
// `ispsim run` of it reproduces a one-request stream.
#pragma once

#include <future>
#include <string>
#include <vector>

#include "traces/gen/program_builder.h"
#include "traces/hkvd_masks.h"
#include "traces/workload/workload.pb.h"

namespace ispsim::workload {

tracegen::BlendRequest blend_request(const StreamHeader& header, const StreamRequest& request);

// At least as many ops as any program of `r` has (reserved for them at once).
uint64_t op_count_bound(const tracegen::BlendRequest& r);

// Writes the trace of `request` (all three programs) to `path`, atomically.
void write_request_trace(const StreamHeader& header, const StreamRequest& request, const std::string& path);

// The trace of `request` with `program` alone, in memory: its header (op
// count filled in) and ops, checked op by op as a trace file is (BadInput names
// `where`). The ops are those of the three-program trace, with ids counted
// from 0 (their order, and so a simulation, is the same). Their HKVD masks are
// interned as the ops are made, so a long request never holds one per op.
struct RequestProgram {
  trace::Header header;
  trace::InternedOps ops;
};
RequestProgram request_program(const StreamHeader& header, const StreamRequest& request, trace::Program program,
                               const std::string& where);

// request_program() one request ahead, on a second thread: the next request's
// program is made while the current ones are simulated. A program is a
// function of the header and the request alone, so it is the same bytes
// whichever thread made it; at most one is made ahead.
class ProgramsAhead {
 public:
  ProgramsAhead(const StreamHeader& header, trace::Program program) : header_(header), program_(program) {}
  ProgramsAhead(const ProgramsAhead&) = delete;
  ProgramsAhead& operator=(const ProgramsAhead&) = delete;
  ~ProgramsAhead();  // waits for the one under way
  // Starts making `request`'s program, unless one is already made or under way.
  void prepare(const StreamRequest& request, const std::string& where);
  // `request`'s program: the one prepared, else made now. Throws what making it threw.
  RequestProgram take(const StreamRequest& request, const std::string& where);

 private:
  const StreamHeader& header_;
  const trace::Program program_;
  uint64_t prepared_index_ = 0;
  std::future<RequestProgram> prepared_;
};

// The KV each layer of the request holds, in tokens, from its shape alone:
// the context C (precomputed) and the most entries any layer appends. In every
// program layer 0 appends the whole prompt (C + Q; FULL_PREFILL every layer
// does) and each of the A decode steps appends one entry per layer, while the
// blend programs' layers >= 1 append H + Q <= C + Q; so the most is C + Q + A.
struct RequestKvTokens {
  uint64_t precomputed = 0, appended = 0;
};
RequestKvTokens request_kv_tokens(const StreamRequest& request);

}  // namespace ispsim::workload
