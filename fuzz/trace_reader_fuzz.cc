// Binary traces: framing, checksums (format 1.2), protobuf records and every
// validator rule, streamed as `ispsim trace dump` does.
#include "common/error.h"
#include "fuzz/fuzz_support.h"
#include "traces/trace_format.h"
#include "traces/trace_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = ispsim::fuzz::write_file("input.trace", data, size);
  try {
    ispsim::trace::TraceReader reader(path);
    (void)ispsim::trace::format_header(reader.header());
    ispsim::trace::Op op;
    while (reader.next(op)) (void)ispsim::trace::format_op(op);
  } catch (const ispsim::BadInput&) {
  }
  return 0;
}
