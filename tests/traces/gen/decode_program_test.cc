// The shape-only decode programs (traces/gen/decode_program.h): window
// bookkeeping against a brute-force replay, op counts against the closed form,
// every op validated by reading the file back, bad requests.
#include <gtest/gtest.h>

#include <map>

#include "common/error.h"
#include "tests/traces/gen/tracegen_test_util.h"
#include "traces/gen/decode_program.h"
#include "traces/gen/model_presets.h"
#include "traces/trace_io.h"

namespace ispsim::tracegen {
namespace {

trace::ModelShape tiny_llama() {
  trace::ModelShape m = find_model_preset("SmolLM2-135M");
  m.set_layers(2);
  return m;
}

TEST(DecodeProgram, WindowBookkeepingMatchesABruteForceReplay) {
  const trace::DictionarySettings d = paper_dictionary_settings();  // W = 128, U = 32
  for (uint64_t context : {1ull, 127ull, 128ull, 129ull, 159ull, 160ull, 1000ull, 65536ull}) {
    // Brute force: every token, in order, enters the window; the oldest U leave
    // together whenever the window reaches W + U.
    uint64_t compressed = 0, window = 0;
    for (uint64_t t = 0; t < context; ++t)
      if (++window >= d.window_tokens() + d.unit_tokens()) window -= d.unit_tokens(), compressed += d.unit_tokens();
    WindowState s = initial_window(context, d);
    EXPECT_EQ(s.compressed, compressed) << context;
    EXPECT_EQ(s.window, window) << context;
    uint64_t encodes = 0;
    for (int step = 0; step < 3 * 32; ++step) {
      s = step_window(s, d);
      ++window;
      bool due = false;
      if (window >= 160) window -= 32, compressed += 32, due = true;
      EXPECT_EQ(s.encodes, due);
      EXPECT_EQ(s.window, window);
      EXPECT_EQ(s.compressed + s.window, context + step + 1);
      encodes += s.encodes;
      if (context >= 128) { EXPECT_TRUE(s.window >= 128 && s.window < 160) << context << " step " << step; }
    }
    if (context >= 128) { EXPECT_EQ(encodes, 3u) << "one batch pursuit every U steps at context " << context; }
  }
}

TEST(DecodeProgram, OpCountsFollowTheClosedFormAndEveryOpValidates) {
  DecodeRequest r;
  r.model = tiny_llama();
  r.context_tokens = 1000;
  r.decode_steps = 40;
  r.dictionary = paper_dictionary_settings();
  const std::string path = testing::scratch_path("decode.trace");
  generate_decode_trace(r, path);
  trace::TraceReader reader(path);  // validates every op while reading
  std::map<trace::Program, uint64_t> ops, encodes, dict_attention;
  trace::Op op;
  uint64_t dense_kv = 0;
  while (reader.next(op)) {
    ++ops[op.program()];
    encodes[op.program()] += op.has_dict_encode();
    if (op.has_dict_attention()) {
      ++dict_attention[op.program()];
      EXPECT_EQ(op.dict_attention().compressed_tokens() + op.dict_attention().window_tokens(),
                r.context_tokens + op.decode_step() + 1);
    }
    if (op.has_attention()) { EXPECT_EQ(op.attention().kv(0).tokens().end(), r.context_tokens + op.decode_step() + 1); }
    if (op.has_kv_append()) dense_kv += op.kv_append().bytes();
  }
  const uint64_t l = 2, a = 40, b = 12;
  EXPECT_EQ(ops[trace::DECODE_ONLY], a * (l * b + 3));
  // 40 steps from a window of 136: the encodes fall on steps 23 and 55 -> one in range.
  EXPECT_EQ(encodes[trace::DECODE_ONLY_DICTIONARY], l * 1);
  EXPECT_EQ(ops[trace::DECODE_ONLY_DICTIONARY], a * (l * b + 3) + l * 1);
  EXPECT_EQ(dict_attention[trace::DECODE_ONLY_DICTIONARY], a * l);
  // Bytes: 2 programs x A steps x L layers x one token of K and V at FP16.
  EXPECT_EQ(dense_kv, 2 * a * l * (3 * 64 * 2 * 2));
}

TEST(DecodeProgram, BadRequestsAreRejected) {
  DecodeRequest r;
  r.model = tiny_llama();
  r.context_tokens = 0;
  r.decode_steps = 1;
  r.dictionary = paper_dictionary_settings();
  EXPECT_THROW(check_decode_request(r), BadInput);
  r.context_tokens = 10;
  r.decode_steps = 0;
  EXPECT_THROW(check_decode_request(r), BadInput);
  r.decode_steps = 1;
  r.dictionary.set_k_low(20);  // k_low > k_high
  EXPECT_THROW(check_decode_request(r), BadInput);
}

}  // namespace
}  // namespace ispsim::tracegen
