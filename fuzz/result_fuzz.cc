// Result files read back by `ispsim rerun` (platforms/systems/result_schema.h):
// Boost.JSON's parse, the schema version and provenance, each run's recorded
// configuration, and the exact re-reading of the metrics from the text.
#include "common/error.h"
#include "fuzz/fuzz_support.h"
#include "platforms/systems/result_schema.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = ispsim::fuzz::write_file("result.json", data, size);
  try {
    (void)ispsim::systems::read_result_file(path);
  } catch (const ispsim::BadInput&) {
  }
  return 0;
}
