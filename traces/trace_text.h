// Hand-written traces: the protobuf text format of `TraceText` (trace.proto).
// Parse errors and unknown fields are reported as one line "file:line:col: problem";
// semantic problems (the same checks as for binary traces) as "file:line:col: op 12: ...",
// pointing at the offending op.
#pragma once

#include <string>

#include "traces/trace.pb.h"

namespace ispsim::trace {

// Parses and validates a text trace. Program op counts may be omitted; if given
// they must match the ops present.
TraceText load_text_trace(const std::string& path);

// Parses and validates text already in memory; `where` names it in errors.
TraceText parse_text_trace(const std::string& text, const std::string& where);

// `ispsim trace pack`: text trace -> binary trace (written atomically).
void pack_text_trace(const std::string& text_path, const std::string& binary_path);

}  // namespace ispsim::trace
