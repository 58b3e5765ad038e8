// safetensors files: the 8-byte header length, the JSON header, offsets and
// dtypes; every tensor found is then read as FP32 (bounds of the data region).
#include "common/error.h"
#include "fuzz/fuzz_support.h"
#include "kernels/model/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = ispsim::fuzz::write_file("model.safetensors", data, size);
  try {
    ispsim::model::SafetensorsFile file(path);
    for (const auto& [name, info] : file.tensors()) {
      try {
        (void)file.read_f32(name);
      } catch (const ispsim::BadInput&) {
      }
    }
  } catch (const ispsim::BadInput&) {
  }
  return 0;
}
