// The metrics of one run as named numbers: the row of a sweep's results.
// Names carry their unit as a suffix (_ms, _bytes, _j, _mj, _w, _gbps, _pct),
// like the JSON keys of `ispsim compare`.
//
// LLM-inference platforms (platforms/systems/report.h RunSummary):
//   latency_ms, exposed_nand_ms, compute_ms, phase.<phase>_ms,
//   pcie_h2d_bytes, pcie_d2h_bytes, pcie.<direction>.<purpose>_bytes,
//   nand_read_bytes, nand_written_bytes, controller_dram_bytes,
//   energy_j, energy.<component>_j, energy_phase.<phase>_j, average_w, peak_w
// Paper 1's decode systems (B1, B2, S1, S2), in addition (per decode token):
//   tbt_ms (simulated), tbt_eq4_ms (eq.-4 model), energy_per_token_mj,
//   stage.<stage>_ms, stage_energy.<stage>_mj, stage_share.<stage>_pct (% of tbt_ms)
//   with <stage> one of weights, kv_write, kv_read_attention, pursuit, nonlinear, transfers
// NAND stream microbenchmark platforms:
//   end_to_end_ms, nand_read_gbps, nand_read_bytes
// (<phase> etc. lower case, blanks and '/' as '_', e.g. phase.fused_prefill_ms.)
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "platforms/systems/report.h"

namespace ispsim::sweep {

using Metrics = std::vector<std::pair<std::string, double>>;

// Every metric of a completed run (none for a run out of memory), in a fixed order.
Metrics summary_metrics(const systems::RunSummary& summary);

// The metrics of a NAND stream run from its statistics CSV (name,value,unit,description).
Metrics nand_stream_metrics(const std::string& stats_csv, const std::string& where);

bool is_known_metric(const std::string& name);
std::string known_metrics_help();

}  // namespace ispsim::sweep
