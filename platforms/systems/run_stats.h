// The statistics of a run's outcome that every system declares once its
// simulation is over, under the names of the families in metrics.h: time and
// energy by phase, energy by component. The tables read them from the registry
// like any other statistic (capture_stats), so a phase or a component is shown
// because the run declared it, not because a summary field was filled in.
#pragma once

#include <map>
#include <string>

#include "models/core/stats.h"

namespace ispsim::systems {

// Declares into `root` (a stats::Group with an empty path; the names are
// absolute) the time of each phase, `ns_by_phase` keyed by the phase's name
// as the runtime announces it ("fused prefill"), as system.run.phase.<key>.time
// in ns (key: phase_key), a phase of 0 ns included.
void declare_phase_times(stats::Group& root, const std::map<std::string, double>& ns_by_phase);
// Declares the energy by component (the ledger's component names) as
// <component>.total_energy and by phase as system.run.phase.<key>.energy, in J,
// each member given (0 J included).
void declare_energy(stats::Group& root, const std::map<std::string, double>& j_by_component,
                    const std::map<std::string, double>& j_by_phase);

}  // namespace ispsim::systems
