// Hand-written text traces (`ispsim trace pack`): protobuf text parsing, then
// the validator op by op.
#include "common/error.h"
#include "fuzz/fuzz_support.h"
#include "traces/trace_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)ispsim::trace::parse_text_trace(text, "fuzz.txtpb");
  } catch (const ispsim::BadInput&) {
  }
  return 0;
}
