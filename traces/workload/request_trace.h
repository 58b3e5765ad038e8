// The single-request trace of one request of a stream: the same three programs
// `trace gen --shape` writes, for the request's documents, query and answer,
// with synthetic HKVD masks seeded by the workload's seed and the request's
// index. A stream's server simulates exactly this trace per request, so
// `ispsim run` of it reproduces a one-request stream.
#pragma once

#include <string>
#include <vector>

#include "traces/gen/program_builder.h"
#include "traces/workload/workload.pb.h"

namespace ispsim::workload {

tracegen::BlendRequest blend_request(const StreamHeader& header, const StreamRequest& request);

// Writes the trace of `request` (all three programs) to `path`, atomically.
void write_request_trace(const StreamHeader& header, const StreamRequest& request, const std::string& path);

// The same trace in memory: its header (op counts filled in) and the ops of
// `program`, checked op by op as a trace file is (BadInput names `where`).
struct RequestProgram {
  trace::Header header;
  std::vector<trace::Op> ops;
};
RequestProgram request_program(const StreamHeader& header, const StreamRequest& request, trace::Program program,
                               const std::string& where);

}  // namespace ispsim::workload
