// A sweep file (sweep.proto) expanded into runs. Everything that can be checked
// without simulating is checked here: unknown axes, parameter paths and values
// (each platform is loaded with its overrides), trace settings, metric names and
// listed points. Every problem is a BadInput naming the sweep file.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "platforms/systems/report_cells.h"
#include "tools/ispsim/sweep/sweep.pb.h"
#include "traces/gen/generator_settings.h"

namespace ispsim::sweep {

// (axis name, value text), in the order of the sweep file's axes.
using Inputs = std::vector<std::pair<std::string, std::string>>;

// Where a run's trace comes from. Generated traces come from the generator the
// platform's program needs: the request generator (FULL_PREFILL and the blend
// programs) or, for paper 1's decode systems, the decode generator
// (traces/gen/generator_settings.h names the settings of both).
struct TraceSource {
  std::string file;                              // an existing trace, or
  std::optional<tracegen::ShapeOptions> shape;   // the request generator's settings, or
  std::optional<tracegen::DecodeRequest> decode;  // the decode generator's
  std::string key;  // 16 hex digits: hash of the file's bytes or of the settings
};

struct PlannedRun {
  std::string id;         // 16 hex digits: hash of the resolved platform and the trace's key
  Inputs inputs;
  std::string platform;   // name or file, as in `ispsim run --platform`
  std::vector<std::string> overrides;  // "path=value" for every parameter axis
  TraceSource trace;
  bool microbenchmark = false;  // a MICROBENCHMARK platform (NAND stream system)
  std::string system;           // the platform's display name, e.g. "MemLLM-Base"
};

struct SweepPlan {
  std::string file;
  Sweep spec;
  std::vector<std::string> axes;     // axis names in file order (the input columns)
  std::vector<std::string> metrics;  // kept metrics; empty = all
  std::vector<PlannedRun> runs;      // in expansion order: the last axis varies fastest
};

// Reads, checks and expands a sweep file.
SweepPlan load_sweep(const std::string& path);
// The same for sweep text in memory (`where` names it in errors), and for a
// parsed sweep (`path`: its file, for errors and SweepPlan::file).
SweepPlan sweep_from_text(const std::string& text, const std::string& where);
SweepPlan expand_sweep(const Sweep& spec, const std::string& path);

// 64-bit FNV-1a as 16 lower-case hex digits: stable across machines and builds.
std::string fnv1a_hex(const std::string& bytes);

// The fewest decimal digits that read back as exactly `value` ("8", "0.15", "1e-05").
using systems::shortest_number;

}  // namespace ispsim::sweep
