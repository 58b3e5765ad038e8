#include "models/core/energy_ledger.h"

#include <algorithm>
#include <cmath>
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

// Energy per phase, accumulated by index into the sorted, disjoint phases
// (the last slot is "other": energy outside every phase).
class PhaseSplit {
 public:
  explicit PhaseSplit(const std::vector<EnergyLedger::PhaseInterval>& sorted)
      : phases_(sorted), joules_(sorted.size() + 1, 0.0) {}

  // Adds `joules` spent uniformly over [a, b] (an instant at a when a == b).
  void add(double joules, uint64_t a, uint64_t b) {
    // The first phase that ends after a (phases are [start, end)).
    size_t i = std::upper_bound(phases_.begin(), phases_.end(), a,
                                [](uint64_t t, const auto& p) { return t < p.end_ps; }) -
               phases_.begin();
    if (b == a) {
      joules_[i < phases_.size() && phases_[i].start_ps <= a ? i : phases_.size()] += joules;
      return;
    }
    const double per_ps = joules / static_cast<double>(b - a);
    double inside = 0;
    for (; i < phases_.size() && phases_[i].start_ps < b; ++i) {
      const double j = per_ps * static_cast<double>(overlap(a, b, phases_[i].start_ps, phases_[i].end_ps));
      joules_[i] += j;
      inside += j;
    }
    if (joules - inside > joules * 1e-12) joules_.back() += joules - inside;
  }

  // Phases that received energy, by name (several intervals may share a name).
  void write(std::map<std::string, double>& by_phase) const {
    for (size_t i = 0; i < phases_.size(); ++i)
      if (joules_[i] > 0) by_phase[phases_[i].name] += joules_[i];
    if (joules_.back() > 0) by_phase["other"] += joules_.back();
  }

 private:
  const std::vector<EnergyLedger::PhaseInterval>& phases_;
  std::vector<double> joules_;
};

}  // namespace

EnergyLedger::Summary EnergyLedger::summarize(uint64_t duration_ps, const std::vector<PhaseInterval>& phases,
                                              uint64_t window_ps) const {
  if (window_ps == 0) throw std::logic_error("energy ledger: zero peak-power window");
  for (const auto& p : phases)
    if (p.end_ps < p.start_ps) throw std::logic_error("energy ledger: phase " + p.name + " ends before it starts");
  std::vector<PhaseInterval> sorted = phases;
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.start_ps < b.start_ps; });
  for (size_t i = 1; i < sorted.size(); ++i)
    if (sorted[i].start_ps < sorted[i - 1].end_ps)
      throw std::logic_error("energy ledger: phases " + sorted[i - 1].name + " and " + sorted[i].name + " overlap");

  Summary s;
  s.duration_ps = duration_ps;
  const double static_w = static_power_w();
  PhaseSplit split(sorted);
  std::vector<double> by_component(names_.size(), 0.0);
  for (const Record& r : records_) {
    by_component[r.component] += r.joules;
    s.total_j += r.joules;
    split.add(r.joules, r.start_ps, r.end_ps);
  }
  for (size_t c = 0; c < names_.size(); ++c) s.dynamic_j_by_component[names_[c]] = by_component[c];
  for (const auto& [name, watts] : static_w_) {
    const double j = watts * static_cast<double>(duration_ps) * 1e-12;
    s.static_j_by_component[name] = j;
    s.total_j += j;
  }
  if (duration_ps > 0 && static_w > 0) split.add(static_w * static_cast<double>(duration_ps) * 1e-12, 0, duration_ps);
  split.write(s.j_by_phase);
  if (duration_ps == 0) return s;  // no time, no power
  s.average_w = s.total_j / (static_cast<double>(duration_ps) * 1e-12);
  peak_power(duration_ps, window_ps, static_w, s);
  return s;
}

// Peak window power without materialising every window (a 10 s run has 1e7
// windows of 1 us): the dynamic power is piecewise constant between record
// boundaries, so one sweep over the sorted boundaries yields, per constant
// segment, its two edge windows and the windows strictly inside it, which all
// hold the segment's power. Edge windows arrive in time order, so one running
// accumulator collects them. A window holding an instant record is cut out of
// the segments (its bounds become boundaries), so it is never an inside window.
// Records past the end of the run count in the totals but not in the windows;
// an instant at or past the end falls into the last window.
void EnergyLedger::peak_power(uint64_t duration_ps, uint64_t window_ps, double static_w, Summary& s) const {
  const uint64_t windows = (duration_ps + window_ps - 1) / window_ps;
  auto window_length = [&](uint64_t w) { return std::min(window_ps, duration_ps - w * window_ps); };

  struct Boundary {
    uint64_t at_ps;
    double rate_j_per_ps;  // change of the dynamic power
    int active;            // change of the number of records in progress
    double instant_j;      // an instant record at this time
  };
  std::vector<Boundary> boundaries;
  boundaries.reserve(2 * records_.size());
  for (const Record& r : records_) {
    if (r.start_ps == r.end_ps) {
      const uint64_t w = std::min(r.start_ps / window_ps, windows - 1);
      const uint64_t at = std::min(r.start_ps, duration_ps - 1);
      boundaries.push_back({w * window_ps, 0.0, 0, 0.0});
      boundaries.push_back({at, 0.0, 0, r.joules});
      boundaries.push_back({w * window_ps + window_length(w), 0.0, 0, 0.0});
      continue;
    }
    const uint64_t a = std::min(r.start_ps, duration_ps), b = std::min(r.end_ps, duration_ps);
    if (b == a) continue;  // entirely past the end
    const double rate = r.joules / static_cast<double>(r.end_ps - r.start_ps);
    boundaries.push_back({a, rate, 1, 0.0});
    boundaries.push_back({b, -rate, -1, 0.0});
  }
  std::sort(boundaries.begin(), boundaries.end(),
            [](const Boundary& x, const Boundary& y) { return x.at_ps < y.at_ps; });

  // Every window also carries the static power; a window without dynamic
  // energy has exactly that, and window 0 is the earliest such candidate.
  // Powers equal up to rounding (an edge window and the inside of the same
  // segment) count as equal, so the earliest window wins.
  s.peak_w = static_w;
  s.peak_window_start_ps = 0;
  auto candidate = [&](uint64_t start_ps, double dynamic_w) {
    const double watts = static_w + dynamic_w;
    const bool same = std::abs(watts - s.peak_w) <= s.peak_w * 1e-12;
    if ((watts > s.peak_w && !same) || (same && start_ps < s.peak_window_start_ps)) {
      s.peak_w = watts;
      s.peak_window_start_ps = start_ps;
    }
  };
  uint64_t edge_window = 0;
  double edge_j = 0;
  auto add_to_window = [&](uint64_t w, double j) {
    if (w != edge_window) {
      if (edge_j > 0) candidate(edge_window * window_ps, edge_j / (static_cast<double>(window_length(edge_window)) * 1e-12));
      edge_window = w;
      edge_j = 0;
    }
    edge_j += j;
  };

  double rate = 0;
  int active = 0;
  uint64_t previous = 0;
  auto segment = [&](uint64_t a, uint64_t b) {
    if (b <= a || active == 0 || rate <= 0) return;
    const uint64_t first = a / window_ps, last = (b - 1) / window_ps;
    if (first == last) return add_to_window(first, rate * static_cast<double>(b - a));
    add_to_window(first, rate * static_cast<double>((first + 1) * window_ps - a));
    if (last > first + 1) candidate((first + 1) * window_ps, rate * 1e12);
    add_to_window(last, rate * static_cast<double>(b - last * window_ps));
  };
  for (size_t i = 0; i < boundaries.size();) {
    const uint64_t at = boundaries[i].at_ps;
    segment(previous, at);
    for (; i < boundaries.size() && boundaries[i].at_ps == at; ++i) {
      rate += boundaries[i].rate_j_per_ps;
      active += boundaries[i].active;
      if (boundaries[i].instant_j > 0) add_to_window(std::min(at / window_ps, windows - 1), boundaries[i].instant_j);
    }
    if (active == 0) rate = 0;  // no drift once nothing is in progress
    previous = at;
  }
  add_to_window(windows, 0);  // flushes the last edge window
}

}  // namespace ispsim::core
