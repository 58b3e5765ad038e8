// Property: any trace the validator accepts runs to completion on every platform
// or is refused as bad input (exit 2) or out of memory (exit 3) -- never an
// internal error. Seeded random edits of the fields the runtime reads
// (dependencies, layers, phases, query rows, KV spans and appends, HKVD masks)
// of a shipped three-program trace; each edited trace the validator accepts is
// compared on the eight MemLLM-study platforms.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>

#include "common/error.h"
#include "tests/support/cli.h"
#include "traces/trace_io.h"
#include "traces/trace_validator.h"

using namespace ispsim::trace;

namespace {

uint64_t below(std::mt19937_64& rng, uint64_t n) { return n == 0 ? 0 : rng() % n; }

void edit_deps(Op& op, const TraceText& t, std::mt19937_64& rng) {
  if (op.deps_size() > 0 && rng() % 2 == 0) {
    op.mutable_deps()->erase(op.mutable_deps()->begin() + static_cast<int>(below(rng, op.deps_size())));
    return;
  }
  const Op& other = t.op(static_cast<int>(below(rng, t.op_size())));
  if (other.id() < op.id() && other.program() == op.program()) op.add_deps(other.id());
}

void edit_attention(Attention& a, std::mt19937_64& rng) {
  KvSpan& s = *a.mutable_kv(static_cast<int>(below(rng, a.kv_size())));
  const uint64_t length = s.tokens().end() - s.tokens().begin();
  switch (rng() % 4) {
    case 0: a.set_query_rows(1 + below(rng, 2 * a.query_rows() + 2)); break;
    case 1: s.mutable_tokens()->set_end(s.tokens().begin() + 1 + below(rng, 2 * length + 2)); break;
    case 2: s.set_region(s.region() == KV_REGION_APPENDED ? KV_REGION_PRECOMPUTED : KV_REGION_APPENDED); break;
    case 3:
      if (a.has_hkvd_mask() && a.hkvd_mask().bit_length() > 0) {
        std::string& bits = *a.mutable_hkvd_mask()->mutable_bits();
        const uint64_t bit = below(rng, a.hkvd_mask().bit_length());
        bits[bit / 8] = static_cast<char>(bits[bit / 8] ^ (1 << (bit % 8)));
      }
      break;
  }
}

// A new token range of the same bytes per token, so that the byte count stays consistent.
void edit_append(KvTransfer& kv, std::mt19937_64& rng) {
  const uint64_t per_token = kv.bytes() / moved_tokens(kv);
  const uint64_t length = kv.tokens().end() - kv.tokens().begin();
  const uint64_t begin = below(rng, kv.tokens().begin() + 4);
  const uint64_t tokens = 1 + below(rng, 2 * length + 2);
  kv.clear_token_mask();
  kv.mutable_tokens()->set_begin(begin);
  kv.mutable_tokens()->set_end(begin + tokens);
  kv.set_bytes(tokens * per_token);
}

// One to three edits of random ops.
void mutate(TraceText& t, std::mt19937_64& rng) {
  const uint32_t layers = t.header().model().layers();
  for (uint64_t e = 0, n = 1 + below(rng, 3); e < n; ++e) {
    Op& op = *t.mutable_op(static_cast<int>(below(rng, t.op_size())));
    switch (rng() % 5) {
      case 0: edit_deps(op, t, rng); break;
      case 1: if (op.has_layer()) op.set_layer(static_cast<uint32_t>(below(rng, layers + 1))); break;
      case 2: op.set_phase(static_cast<Phase>(1 + below(rng, PHASE_DECODE))); break;
      case 3: if (op.has_attention()) edit_attention(*op.mutable_attention(), rng); break;
      case 4: if (op.has_kv_append()) edit_append(*op.mutable_kv_append(), rng); break;
    }
  }
}

// 24 edited traces by default (about 8 s); ISPSIM_PROPERTY_TRACES=N tries more.
int traces_to_try() {
  const char* n = std::getenv("ISPSIM_PROPERTY_TRACES");
  return n ? std::max(1, std::atoi(n)) : 24;
}

}  // namespace

TEST(TraceProperty, AcceptedTracesRunOrAreRefusedNeverInternalErrors) {
  const TraceText valid = read_trace(std::string(ISPSIM_SOURCE_DIR) + "/traces/samples/blend_small.trace");
  const std::string path = (ispsim::testing::scratch_dir() / "edited.trace").string();
  std::mt19937_64 rng(20261204);
  int accepted = 0;
  for (int i = 0; i < traces_to_try(); ++i) {
    TraceText edited = valid;
    mutate(edited, rng);
    try {
      write_trace(path, edited);
    } catch (const ispsim::BadInput&) {
      continue;  // refused up front: what the property is about is the rest
    }
    ++accepted;
    const auto r = ispsim::testing::run_cli("compare --trace " + ispsim::testing::shell_quote(path) + " -j 2");
    SCOPED_TRACE("edited trace " + std::to_string(i));
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 2 || r.exit_code == 3) << r.exit_code << ": " << r.err;
    if (r.exit_code != 0) {
      EXPECT_EQ(r.err_lines(), 1) << r.err;
    }
    if (HasFailure()) return;
  }
  // Enough edits survive validation for the property to say something.
  EXPECT_GE(accepted, traces_to_try() / 4);
}
