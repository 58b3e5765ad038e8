#include "platforms/systems/run_stats.h"

#include <stdexcept>

#include "platforms/systems/metrics.h"

namespace ispsim::systems {
namespace {

// One statistic per member of `family`, each holding its value as given.
void declare_family(stats::Group& root, const char* family, const std::string& unit, const std::string& desc,
                    const std::map<std::string, double>& by_key, std::string (*key)(const std::string&)) {
  if (!root.path().empty()) throw std::logic_error("run statistics: declared into group " + root.path());
  for (const auto& [name, v] : by_key) root.formula(family_member(family, key(name)), unit, desc, [v = v] { return v; });
}

std::string same(const std::string& name) { return name; }

}  // namespace

void declare_phase_times(stats::Group& root, const std::map<std::string, double>& ns_by_phase) {
  declare_family(root, kRunPhaseTime, "ns", "time of the phase (its intervals of the run, added up)", ns_by_phase,
                 phase_key);
}

void declare_energy(stats::Group& root, const std::map<std::string, double>& j_by_component,
                    const std::map<std::string, double>& j_by_phase) {
  declare_family(root, kComponentEnergy, "J", "energy the run's ledger charged to the component", j_by_component,
                 same);
  declare_family(root, kRunPhaseEnergy, "J", "energy of the phase (dynamic, and the static share of its time)",
                 j_by_phase, phase_key);
}

}  // namespace ispsim::systems
