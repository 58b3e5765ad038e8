// Sweep files (tools/ispsim/sweep/sweep.proto): the text format, axes, ranges,
// points and metrics, expanded into runs with every parameter checked against
// the platform schema. Malformed input must be one BadInput.
#include "common/error.h"
#include "fuzz/fuzz_support.h"
#include "tools/ispsim/sweep/sweep_plan.h"

// The sweep library links SystemC, which wants an sc_main; libFuzzer owns main().
extern "C" int sc_main(int, char**) { return 0; }

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    (void)ispsim::sweep::sweep_from_text(std::string(reinterpret_cast<const char*>(data), size), "fuzz.sweep");
  } catch (const ispsim::BadInput&) {
  }
  return 0;
}
