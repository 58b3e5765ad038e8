// KV-store directories (`engine precompute --out`): index.json is the input up
// to its first NUL byte, tiles.bin the rest.
#include "common/error.h"
#include "fuzz/fuzz_support.h"
#include "kernels/rag/kv_store.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto [index, tiles] = ispsim::fuzz::split_at_nul(data, size);
  ispsim::fuzz::write_file("index.json", reinterpret_cast<const uint8_t*>(index.data()), index.size());
  ispsim::fuzz::write_file("tiles.bin", reinterpret_cast<const uint8_t*>(tiles.data()), tiles.size());
  try {
    (void)ispsim::rag::KvStore::load(ispsim::fuzz::scratch_dir());
  } catch (const ispsim::BadInput&) {
  }
  return 0;
}
