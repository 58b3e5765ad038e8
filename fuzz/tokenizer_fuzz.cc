// tokenizer.json (byte-level BPE); the text after the first NUL byte is then
// encoded and decoded again.
#include "common/error.h"
#include "fuzz/fuzz_support.h"
#include "kernels/model/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto [json, text] = ispsim::fuzz::split_at_nul(data, size);
  const std::string path = ispsim::fuzz::write_file(
      "tokenizer.json", reinterpret_cast<const uint8_t*>(json.data()), json.size());
  try {
    const ispsim::model::Tokenizer tok(path);
    tok.check_fits(tok.vocab_size() + 1, "fuzz config.json");
    const std::vector<int> ids = tok.encode(text, "fuzz text");
    (void)tok.decode(ids);
  } catch (const ispsim::BadInput&) {
  }
  return 0;
}
