// The comparison table of paper 1's decode systems (B1, B2, S1, S2): time
// between tokens (TBT = simulated decode time / decode steps) and energy per
// token, each broken down by stage (weights, KV write, KV read/attention,
// pursuit, nonlinear, transfers), the analytic TBT of the paper's eq. (4)
// beside the simulated one, and speedup (baseline TBT / TBT) and energy ratio
// (energy per token / the baseline's) against the baseline platform.
//
// TEXT: aligned columns, ms and mJ with 3 decimals, ratios with 2; runs that did
// not fit show OOM, and every failure and physical note is listed below the
// table. CSV: the same with 6 decimals plus the analytic stage times and the
// energy by component. JSON: {"baseline", "runs": [...]}, units in the keys.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "platforms/systems/report.h"

namespace ispsim::systems {

// Same contract as write_comparison (report.h): an unknown baseline name is
// BadInput("--baseline", ...); an empty one leaves speedup and ratio empty.
// TEXT has each stage's columns only with `stage_columns` (`run`'s one row;
// `compare --columns all`), so that several platforms fit 120 characters;
// CSV and JSON always have them.
void write_cim_comparison(std::ostream& os, const std::vector<RunSummary>& runs, const std::string& baseline,
                          Format format, bool stage_columns = true);

}  // namespace ispsim::systems
