// Text cells shared by the comparison tables (report.cc: MemLLM systems;
// cim_report.cc: paper 1's decode systems), so both print numbers, CSV fields
// and JSON strings the same way.
#pragma once

#include <string>

namespace ispsim::systems {

// Fixed-point text of `value` with `decimals` decimals, C locale; "-0.000"
// becomes "0.000" so that a rounding sign never differs between runs.
std::string fixed(double value, int decimals);

// The shortest text that reads back to exactly `value` (%g with the fewest
// digits); whole numbers below 1e15 in full, without exponent.
std::string shortest_number(double value);
// The number `text` holds, exactly (strtod); std::runtime_error when it holds more or other.
double exact_number(const std::string& text);

// One RFC 4180 CSV field: quoted (with "" for ") when it holds , " CR or LF.
std::string csv_cell(const std::string& s);

// A JSON string literal of `s` (quotes, escapes).
std::string json_quoted(const std::string& s);

}  // namespace ispsim::systems
