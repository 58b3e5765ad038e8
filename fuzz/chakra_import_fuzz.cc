// Chakra execution traces: record framing, GlobalMetadata and Node parsing, the
// restore of an ispsim export and the foreign mapping (shape text, dependency
// order, phases), as `ispsim trace chakra-import --shape Llama-3.2-1B` runs them.
#include "common/error.h"
#include "fuzz/fuzz_support.h"
#include "traces/chakra/chakra_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = ispsim::fuzz::write_file("input.et", data, size);
  try {
    ispsim::chakra::import_chakra(path, ispsim::fuzz::scratch_dir() + "/output.trace", {"Llama-3.2-1B"});
  } catch (const ispsim::BadInput&) {
  }
  return 0;
}
