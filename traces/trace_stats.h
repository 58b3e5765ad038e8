// Totals over a trace, accumulated op by op while it streams (`ispsim trace stats`).
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>

#include "traces/trace.pb.h"

namespace ispsim::trace {

struct ProgramTotals {
  uint64_t ops = 0;
  std::map<Phase, uint64_t> ops_by_phase;
  std::map<std::string, uint64_t> ops_by_kind;  // oneof field name -> ops
  uint64_t kv_load_tokens = 0;                   // sum of token-range lengths
  uint64_t kv_load_bytes = 0;
  uint64_t kv_append_tokens = 0;
  uint64_t kv_append_bytes = 0;
  unsigned __int128 gemm_flop = 0;     // 2 * M * N * K over GEMM/GEMV ops
  unsigned __int128 lm_head_flop = 0;  // 2 * rows * hidden * vocab
  uint64_t measured_ops = 0;
  uint64_t measured_ns = 0;            // sum of measured durations
  uint64_t payload_bytes = 0;
};

class TraceStats {
 public:
  explicit TraceStats(const Header& header) : header_(header) {}

  void add(const Op& op);
  const ProgramTotals& totals(Program program) const;
  // Deterministic report: header summary, then one block per program in header order.
  void print(std::ostream& out) const;

 private:
  Header header_;
  std::map<Program, ProgramTotals> totals_;
};

}  // namespace ispsim::trace
