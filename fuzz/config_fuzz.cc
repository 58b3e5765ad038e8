// Hugging Face config.json (Llama, Qwen2, OPT families).
#include "common/error.h"
#include "fuzz/fuzz_support.h"
#include "kernels/model/model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ispsim::fuzz::write_file("config.json", data, size);
  try {
    (void)ispsim::model::load_config(ispsim::fuzz::scratch_dir());
  } catch (const ispsim::BadInput&) {
  }
  return 0;
}
