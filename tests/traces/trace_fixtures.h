// Shared test data: a small valid header, a trace using every op kind, and
// scratch-file helpers.
#pragma once

#include <string>
#include <vector>

#include "traces/trace.pb.h"

namespace ispsim::trace::testing {

// 2-layer toy model (KV: 2 heads x 16 x 2 x 2 B = 128 B per token and layer),
// two documents of 40 + 24 tokens, 8 query tokens, 4 answer tokens, FP16 KV.
// Declares PRECOMPUTED_BLEND, DECODE_ONLY and MICROBENCHMARK without op counts.
Header small_header();

// Packs bits LSB-first as BitVector requires.
BitVector make_mask(const std::vector<bool>& bits);

// A valid trace with at least one op of every kind (all three programs used),
// dependencies, a measured duration and a functional payload.
TraceText every_kind_trace();

// A fresh empty directory for one test, removed when the process exits
// (kept if ISPSIM_KEEP_TEST_FILES is set).
std::string scratch_dir(const std::string& test_name);
std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& bytes);

}  // namespace ispsim::trace::testing
