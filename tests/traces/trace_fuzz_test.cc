// Fuzz-ish robustness without libFuzzer: seeded random mutations of a valid
// trace must make the reader either succeed or throw BadInput -- never crash,
// hang or throw anything else. Run under the asan preset as well.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <random>

#include "common/error.h"
#include "tests/traces/trace_fixtures.h"
#include "traces/trace_io.h"
#include "traces/trace_stats.h"
#include "traces/trace_format.h"
#include "traces/trace_text.h"

using namespace ispsim::trace;
using namespace ispsim::trace::testing;

namespace {

std::string mutate(std::string bytes, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> what(0, 5);
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits && !bytes.empty(); ++e) {
    const size_t at = rng() % bytes.size();
    switch (what(rng)) {
      case 0: bytes[at] = static_cast<char>(bytes[at] ^ (1 << (rng() % 8))); break;  // flip a bit
      case 1: bytes[at] = static_cast<char>(rng()); break;                            // random byte
      case 2: bytes.insert(at, 1, static_cast<char>(rng())); break;                   // insert
      case 3: bytes.erase(at, 1 + rng() % 8); break;                                  // delete
      case 4: bytes.resize(at); break;                                                // truncate
      case 5: bytes[at] = static_cast<char>(0xff); break;                             // huge varints
    }
  }
  return bytes;
}

// 3000 by default; ISPSIM_FUZZ_ITERATIONS=N runs longer (e.g. under the asan preset).
int iterations() {
  const char* n = std::getenv("ISPSIM_FUZZ_ITERATIONS");
  return n ? std::max(1, std::atoi(n)) : 3000;
}

}  // namespace

TEST(TraceFuzz, MutatedTracesAreRejectedCleanlyOrRead) {
  const std::string dir = scratch_dir("fuzz");
  write_trace(dir + "/valid.trace", every_kind_trace());
  const std::string valid = read_file(dir + "/valid.trace");
  std::mt19937_64 rng(20261130);
  int rejected = 0, accepted = 0;
  const int n = iterations();
  for (int i = 0; i < n; ++i) {
    // A fresh name each time: rewriting one truncated file makes ext4 flush it.
    const std::string path = dir + "/m" + std::to_string(i) + ".trace";
    write_file(path, mutate(valid, rng));
    try {
      TraceReader reader(path);
      TraceStats stats(reader.header());
      Op op;
      while (reader.next(op)) {
        stats.add(op);
        (void)format_op(op);  // formatting must cope with whatever passed validation
      }
      ++accepted;
    } catch (const ispsim::BadInput&) {
      ++rejected;
    }
    std::filesystem::remove(path);
  }
  EXPECT_GT(rejected, n * 2 / 3) << "most mutations must be caught";
  RecordProperty("accepted", accepted);
  RecordProperty("rejected", rejected);
}

TEST(TraceFuzz, MutatedTextTracesAreRejectedCleanlyOrParsed) {
  const std::string valid = read_file(std::string(ISPSIM_SOURCE_DIR) + "/traces/samples/nand_stream.txtpb");
  std::mt19937_64 rng(7);
  int rejected = 0;
  const int n = iterations();
  for (int i = 0; i < n; ++i) {
    try {
      const TraceText t = parse_text_trace(mutate(valid, rng), "mutated.txtpb");
      for (const Op& op : t.op()) (void)format_op(op);
    } catch (const ispsim::BadInput&) {
      ++rejected;
    }
  }
  EXPECT_GT(rejected, n / 3) << "most mutations must be caught";
  RecordProperty("rejected", rejected);
}
