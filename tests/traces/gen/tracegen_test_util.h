// Helpers of the traces/gen tests: write a request's programs to a scratch file
// and read them back, and small queries over the ops.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/files.h"
#include "traces/gen/program_builder.h"
#include "traces/trace_io.h"

namespace ispsim::tracegen::testing {

// A path in this process's scratch folder (every TEST runs in its own process).
inline std::string scratch_path(const std::string& name) { return (ispsim::testing::scratch_dir() / name).string(); }

// Writes `programs` of `request` with the program builder and reads the whole trace back.
inline trace::TraceText build(const BlendRequest& request, const std::vector<trace::Program>& programs,
                              const std::string& name = "built.trace") {
  const std::string path = scratch_path(name);
  trace::Producer producer;
  producer.set_kind(trace::PRODUCER_HAND_WRITTEN);
  producer.set_tool("tracegen_test");
  trace::TraceWriter writer(path, make_header(request, programs, producer, "test"));
  write_programs(writer, request, programs);
  writer.close();
  return trace::read_trace(path);
}

inline std::vector<trace::Op> ops_of(const trace::TraceText& t, trace::Program program) {
  std::vector<trace::Op> ops;
  for (const trace::Op& op : t.op())
    if (op.program() == program) ops.push_back(op);
  return ops;
}

inline uint64_t popcount(const std::vector<bool>& bits) {
  uint64_t n = 0;
  for (bool b : bits) n += b;
  return n;
}

}  // namespace ispsim::tracegen::testing
