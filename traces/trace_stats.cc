#include "traces/trace_stats.h"

#include <cstdio>

#include "traces/trace_format.h"
#include "traces/trace_validator.h"

namespace ispsim::trace {

namespace {

// "12345 FLOP (12.345 kFLOP)"-style text with a decimal-prefixed figure for reading.
std::string format_flop(unsigned __int128 flop) {
  const char* prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  double scaled = static_cast<double>(flop);
  int i = 0;
  while (scaled >= 1000.0 && i < 6) {
    scaled /= 1000.0;
    ++i;
  }
  std::string s = format_u128(flop) + " FLOP";
  if (i > 0) {
    char buf[48];
    std::snprintf(buf, sizeof buf, " (%.3f %sFLOP)", scaled, prefixes[i]);
    s += buf;
  }
  return s;
}

}  // namespace

void TraceStats::add(const Op& op) {
  ProgramTotals& t = totals_[op.program()];
  ++t.ops;
  ++t.ops_by_phase[op.phase()];
  ++t.ops_by_kind[kind_name(op.kind_case())];
  switch (op.kind_case()) {
    case Op::kKvLoad:
      t.kv_load_tokens += moved_tokens(op.kv_load());
      t.kv_load_bytes += op.kv_load().bytes();
      break;
    case Op::kKvAppend:
      t.kv_append_tokens += moved_tokens(op.kv_append());
      t.kv_append_bytes += op.kv_append().bytes();
      break;
    case Op::kGemm:
      t.gemm_flop += static_cast<unsigned __int128>(2) * op.gemm().m() * op.gemm().n() * op.gemm().k();
      break;
    case Op::kLmHead:
      t.lm_head_flop += static_cast<unsigned __int128>(2) * op.lm_head().rows() * header_.model().hidden() *
                        header_.model().vocab();
      break;
    default:
      break;
  }
  if (op.has_measured_duration_ns()) {
    ++t.measured_ops;
    t.measured_ns += op.measured_duration_ns();
  }
  for (const Tensor& p : op.payloads()) t.payload_bytes += p.data().size();
}

const ProgramTotals& TraceStats::totals(Program program) const {
  static const ProgramTotals kEmpty;
  auto it = totals_.find(program);
  return it == totals_.end() ? kEmpty : it->second;
}

void TraceStats::print(std::ostream& out) const {
  out << format_header(header_);
  for (const ProgramInfo& p : header_.programs()) {
    const ProgramTotals& t = totals(p.program());
    out << "\n" << Program_Name(p.program()) << ": " << t.ops << " ops\n";
    out << "  ops by phase:";
    const char* sep = " ";
    for (const auto& [phase, n] : t.ops_by_phase) {
      out << sep << phase_name(phase) << " " << n;
      sep = ", ";
    }
    out << "\n  ops by kind:";
    sep = " ";
    for (const auto& [kind, n] : t.ops_by_kind) {
      out << sep << kind << " " << n;
      sep = ", ";
    }
    out << "\n";
    out << "  KV load:   " << t.kv_load_tokens << " token-layers, " << format_bytes(t.kv_load_bytes) << "\n";
    out << "  KV append: " << t.kv_append_tokens << " token-layers, " << format_bytes(t.kv_append_bytes) << "\n";
    out << "  GEMM/GEMV: " << format_flop(t.gemm_flop) << "\n";
    out << "  LM head:   " << format_flop(t.lm_head_flop) << "\n";
    out << "  measured:  " << t.measured_ops << " ops, " << t.measured_ns << " ns\n";
    if (t.payload_bytes) out << "  payloads:  " << format_bytes(t.payload_bytes) << "\n";
  }
}

}  // namespace ispsim::trace
