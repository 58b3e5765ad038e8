#include "models/core/energy_ledger.h"

#include <algorithm>
#include <stdexcept>

namespace ispsim::core {

void EnergyLedger::add(const std::string& component, double joules, uint64_t start_ps, uint64_t end_ps) {
  if (!(joules >= 0)) throw std::logic_error("energy ledger: " + component + " records negative or NaN energy");
  if (end_ps < start_ps) throw std::logic_error("energy ledger: " + component + " records a reversed interval");
  if (joules == 0) return;
  auto [it, inserted] = ids_.emplace(component, static_cast<uint32_t>(names_.size()));
  if (inserted) names_.push_back(component);
  records_.push_back({it->second, joules, start_ps, end_ps});
}

void EnergyLedger::add_static_power(const std::string& component, double watts) {
  if (!(watts >= 0)) throw std::logic_error("energy ledger: " + component + " declares negative static power");
  static_w_[component] += watts;
}

double EnergyLedger::static_power_w() const {
  double w = 0;
  for (const auto& [name, watts] : static_w_) w += watts;
  return w;
}

namespace {

// Length of the overlap of [a0, a1] and [b0, b1].
uint64_t overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1) {
  const uint64_t lo = std::max(a0, b0), hi = std::min(a1, b1);
  return hi > lo ? hi - lo : 0;
}

}  // namespace

EnergyLedger::Summary EnergyLedger::summarize(uint64_t duration_ps, const std::vector<PhaseInterval>& phases,
                                              uint64_t window_ps) const {
  if (window_ps == 0) throw std::logic_error("energy ledger: zero peak-power window");
  std::vector<PhaseInterval> sorted = phases;
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.start_ps < b.start_ps; });
  for (size_t i = 1; i < sorted.size(); ++i)
    if (sorted[i].start_ps < sorted[i - 1].end_ps)
      throw std::logic_error("energy ledger: phases " + sorted[i - 1].name + " and " + sorted[i].name + " overlap");

  Summary s;
  s.duration_ps = duration_ps;
  const uint64_t end = std::max<uint64_t>(duration_ps, 1);
  const size_t windows = (end + window_ps - 1) / window_ps;
  std::vector<double> window_j(windows, 0.0);
  const double static_w = static_power_w();

  // Spreads `joules` over [a, b] into the windows and the phases.
  auto spread = [&](double joules, uint64_t a, uint64_t b, std::map<std::string, double>& by_phase) {
    if (b == a) {
      window_j[std::min<size_t>(a / window_ps, windows - 1)] += joules;
      std::string where = "other";
      for (const auto& p : sorted)
        if (a >= p.start_ps && a < p.end_ps) where = p.name;
      by_phase[where] += joules;
      return;
    }
    const double per_ps = joules / static_cast<double>(b - a);
    for (size_t w = a / window_ps; w < windows && w * window_ps < b; ++w)
      window_j[w] += per_ps * static_cast<double>(overlap(a, b, w * window_ps, (w + 1) * window_ps));
    double inside = 0;
    for (const auto& p : sorted) {
      const double j = per_ps * static_cast<double>(overlap(a, b, p.start_ps, p.end_ps));
      if (j > 0) by_phase[p.name] += j;
      inside += j;
    }
    if (joules - inside > joules * 1e-12) by_phase["other"] += joules - inside;
  };

  for (const Record& r : records_) {
    s.dynamic_j_by_component[names_[r.component]] += r.joules;
    s.total_j += r.joules;
    spread(r.joules, r.start_ps, r.end_ps, s.j_by_phase);
  }
  for (const auto& [name, watts] : static_w_) {
    const double j = watts * static_cast<double>(duration_ps) * 1e-12;
    s.static_j_by_component[name] = j;
    s.total_j += j;
  }
  if (duration_ps > 0 && static_w > 0) spread(static_w * static_cast<double>(duration_ps) * 1e-12, 0, duration_ps, s.j_by_phase);

  s.average_w = duration_ps > 0 ? s.total_j / (static_cast<double>(duration_ps) * 1e-12) : 0.0;
  for (size_t w = 0; w < windows; ++w) {
    // The last window may be cut short by the end of the run.
    const uint64_t len = std::min<uint64_t>(window_ps, end - w * window_ps);
    const double watts = window_j[w] / (static_cast<double>(len) * 1e-12);
    if (watts > s.peak_w) {
      s.peak_w = watts;
      s.peak_window_start_ps = w * window_ps;
    }
  }
  return s;
}

}  // namespace ispsim::core
