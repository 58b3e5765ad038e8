#include "platforms/systems/result_schema.h"

#include "common/sha1.h"
#include "platforms/systems/report_cells.h"

namespace ispsim::systems {

void write_provenance_json(std::ostream& os, const Provenance& p) {
  os << "\"schema_version\": " << kResultSchemaVersion << ",\n  \"provenance\": {\"ispsim_version\": "
     << json_quoted(p.ispsim_version) << ", \"command_line\": " << json_quoted(p.command_line)
     << ",\n    \"trace\": " << json_quoted(p.trace) << ", \"trace_sha1\": " << json_quoted(p.trace_sha1)
     << ", \"trace_seed\": " << (p.trace_seed.empty() ? "null" : p.trace_seed) << "}";
}

const char* provenance_csv_header() {
  return "schema_version,ispsim_version,trace_sha1,trace_seed,configuration_sha1";
}

std::string provenance_csv_cells(const Provenance& p, const std::string& configuration) {
  return std::to_string(kResultSchemaVersion) + "," + csv_cell(p.ispsim_version) + "," + p.trace_sha1 + "," +
         p.trace_seed + "," + text_sha1(configuration);
}

std::string shell_quoted(const std::string& argument) {
  if (!argument.empty() && argument.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                      "0123456789_./=:,+-") == std::string::npos)
    return argument;
  std::string out = "'";
  for (char c : argument) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace ispsim::systems
