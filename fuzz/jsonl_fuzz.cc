// The engine's JSON-lines inputs: `--queries` and `--docs` (tokenized with the
// demo model's tokenizer, as `engine precompute` does).
#include "common/error.h"
#include "fuzz/fuzz_support.h"
#include "kernels/model/tokenizer.h"
#include "tools/ispsim/cli_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const ispsim::model::Tokenizer tok(std::string(ISPSIM_SOURCE_DIR) + "/assets/brown-llama/tokenizer.json");
  const std::string path = ispsim::fuzz::write_file("input.jsonl", data, size);
  try {
    (void)ispsim::cli::read_queries(path);
  } catch (const ispsim::BadInput&) {
  }
  try {
    (void)ispsim::cli::read_documents(path, tok, tok.bos_id());
  } catch (const ispsim::BadInput&) {
  }
  return 0;
}
