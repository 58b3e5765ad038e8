// Dictionary files (kernels/dict/dictionary.h): the safetensors container, the
// per-layer INT8 atoms and their scales. A file the loader accepts must hold
// only what the integer kernels can use: it dequantizes to finite values.
#include <cmath>

#include "common/error.h"
#include "fuzz/fuzz_support.h"
#include "kernels/dict/dictionary.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = ispsim::fuzz::write_file("dict.safetensors", data, size);
  try {
    const ispsim::dict::KvDictionaries d = ispsim::dict::load(path);
    for (const ispsim::dict::Int8Dictionary& x : d.dicts)
      for (const float v : ispsim::dict::dequantize(x).data)
        if (!std::isfinite(v) || std::fabs(v) > 1.01f) __builtin_trap();  // unit-norm atoms
  } catch (const ispsim::BadInput&) {
  }
  return 0;
}
