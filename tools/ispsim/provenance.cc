#include "tools/ispsim/provenance.h"

#include <sstream>

#include "common/sha1.h"
#include "platforms/systems/report_cells.h"
#include "tools/ispsim/sweep/results.h"
#include "traces/trace_io.h"

namespace ispsim::cli {
namespace {

std::string& stored_command_line() {
  static std::string line;
  return line;
}

// The generator's seed from the trace header, if it is a number.
std::string trace_seed(const std::string& trace_path) {
  trace::TraceReader reader(trace_path);
  for (const trace::Setting& s : reader.header().producer().settings())
    if (s.key() == "seed" && !s.value().empty() && s.value().find_first_not_of("0123456789") == std::string::npos)
      return s.value();
  return "";
}

}  // namespace

void set_command_line(int argc, char** argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) line += (i ? " " : "") + systems::shell_quoted(i ? argv[i] : "ispsim");
  stored_command_line() = line;
}

const std::string& command_line() { return stored_command_line(); }

systems::Provenance provenance(const std::string& trace_path) {
  systems::Provenance p;
  p.ispsim_version = sweep::ispsim_version();
  p.command_line = command_line();
  p.trace = trace_path;
  if (!trace_path.empty()) {
    p.trace_seed = trace_seed(trace_path);  // first: a bad trace gets the reader's message
    p.trace_sha1 = file_sha1(trace_path);
  }
  return p;
}

}  // namespace ispsim::cli
