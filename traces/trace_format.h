// Human-readable text for trace contents: short enum names, one line per op
// (`ispsim trace dump`), a header summary. Every number carries its unit.
#pragma once

#include <cstdint>
#include <string>

#include "traces/trace.pb.h"

namespace ispsim::trace {

// Enum names without their prefix, lower case: PHASE_FUSED_PREFILL -> "fused_prefill".
std::string phase_name(Phase phase);
std::string dtype_name(DType dtype);
std::string region_name(KvRegion region);
std::string parts_name(KvParts parts);
std::string kv_format_name(KvFormat format);
std::string nonlinear_name(NonlinearKind kind);
std::string pursuit_name(PursuitMethod method);
std::string family_name(ArchitectureFamily family);
std::string producer_name(ProducerKind kind);
// The oneof field name of an op kind ("gemm", "kv_load", ...); "none" if unset.
std::string kind_name(Op::KindCase kind);

// "3145728 B (3.000 MiB)".
std::string format_bytes(uint64_t bytes);
// Decimal text of a 128-bit count (FLOP totals can exceed 64 bits).
std::string format_u128(unsigned __int128 value);

// One line (no newline) describing the op completely except payload contents.
std::string format_op(const Op& op);
// Several lines (each ending in a newline) summarising the header.
std::string format_header(const Header& header);

}  // namespace ispsim::trace
