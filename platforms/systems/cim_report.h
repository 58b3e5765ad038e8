// The comparison table of paper 1's decode systems (B1, B2, S1, S2): time
// between tokens (TBT = simulated decode time / decode steps) and energy per
// token, each broken down by stage (weights, KV write, KV read/attention,
// pursuit, nonlinear, transfers), the analytic TBT of the paper's eq. (4)
// beside the simulated one, and speedup (baseline TBT / TBT) and energy ratio
// (energy per token / the baseline's) against the baseline platform.
//
// TEXT: aligned columns, ms and mJ with 3 decimals, ratios with 2; runs that did
// not fit show OOM, and every failure and physical note is listed below the
// table. CSV and JSON are the result schema of every run (report.h,
// docs/results.md): the metrics tbt_s, tbt_eq4_s, energy_per_token_j,
// stage.<stage>_s, stage_eq4.<stage>_s, stage_energy.<stage>_j, ... in SI units,
// with the provenance; JSON adds each run's decode_tokens and note.
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
// CSV and JSON always have them, and the provenance when given.
void write_cim_comparison(std::ostream& os, const std::vector<RunSummary>& runs, const std::string& baseline,
                          Format format, bool stage_columns = true, const Provenance* provenance = nullptr);

}  // namespace ispsim::systems
