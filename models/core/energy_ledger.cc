#include "models/core/energy_ledger.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ispsim::core {

EnergyLedger::EnergyLedger(uint64_t window_ps) : window_ps_(window_ps) {
  if (window_ps == 0) throw std::logic_error("energy ledger: zero peak-power window");
}

void EnergyLedger::add(const std::string& component, double joules, uint64_t start_ps, uint64_t end_ps) {
  if (!(joules >= 0)) throw std::logic_error("energy ledger: " + component + " records negative or NaN energy");
  if (end_ps < start_ps) throw std::logic_error("energy ledger: " + component + " records a reversed interval");
  if (joules == 0) return;
  if (start_ps < swept_ps_) {
    throw std::logic_error("energy ledger: " + component + " records energy from " + std::to_string(start_ps) +
                           " ps, before the settled time " + std::to_string(swept_ps_) +
                           " ps (hold the activity's start with open())");
  }
  auto it = ids_.find(component);  // emplace() would build a node (and copy the name) to find out
  if (it == ids_.end()) {
    it = ids_.emplace(component, static_cast<uint32_t>(names_.size())).first;
    names_.push_back(component);
    dynamic_j_.push_back(0.0);
  }
  dynamic_j_[it->second] += joules;
  if (start_ps == end_ps) {
    pending_.push_back({start_ps, 0.0, 0, joules});
  } else {
    const double rate = joules / static_cast<double>(end_ps - start_ps);
    pending_.push_back({start_ps, rate, 1, 0.0});
    pending_.push_back({end_ps, -rate, -1, 0.0});
  }
  if (clock_ && pending_.size() >= fold_when_pending_) {
    fold(settled_ps(), false);
    fold_when_pending_ = std::max(kFoldBatch, 2 * pending_.size());
  }
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

double EnergyLedger::dynamic_j() const {
  double j = 0;
  for (const double c : dynamic_j_) j += c;
  return j;
}

double EnergyLedger::total_j(double dynamic_j, uint64_t duration_ps) const {
  for (const auto& [name, watts] : static_w_) dynamic_j += watts * static_cast<double>(duration_ps) * 1e-12;
  return dynamic_j;
}

void EnergyLedger::set_clock(std::function<uint64_t()> now_ps) { clock_ = std::move(now_ps); }

uint64_t EnergyLedger::open(uint64_t start_ps) {
  const uint64_t ticket = next_ticket_++;
  open_.emplace(ticket, open_starts_.insert(start_ps));
  return ticket;
}

void EnergyLedger::close(uint64_t ticket) {
  const auto it = open_.find(ticket);
  if (it == open_.end()) throw std::logic_error("energy ledger: close() of a ticket that is not open");
  open_starts_.erase(it->second);
  open_.erase(it);
}

uint64_t EnergyLedger::settled_ps() const {
  const uint64_t now = clock_();
  return open_starts_.empty() ? now : std::min(now, *open_starts_.begin());
}

void EnergyLedger::set_phase(const std::string& name, uint64_t from_ps) {
  PhaseChange& last = phases_.back();
  if (from_ps < last.from_ps || from_ps < swept_ps_) {
    throw std::logic_error("energy ledger: phase " + name + " set at " + std::to_string(from_ps) +
                           " ps, before an earlier change or the settled time");
  }
  if (from_ps == last.from_ps) {
    last.name = name;  // nothing has been attributed from from_ps on yet
    if (phases_.size() > 1 && phases_[phases_.size() - 2].name == name) phases_.pop_back();
  } else if (last.name != name) {
    phases_.push_back({from_ps, name});
  }
}

// --- the sweep ---------------------------------------------------------------
//
// The dynamic power is piecewise constant between record boundaries, so one
// sweep over the boundaries in time order yields, per constant segment, its
// energy per phase, its two edge windows and the windows strictly inside it,
// which all hold the segment's power (a 10 s run has 1e7 windows of 1 us; none
// is materialised). Edge windows arrive in time order, so one running
// accumulator collects them; an instant lies on a boundary, so its window is
// always an edge. Records past the end of the run count in the totals but not
// in the windows; an instant at or past the end falls into the last window.

void EnergyLedger::sort_pending() {
  const auto by_time = [](const Boundary& a, const Boundary& b) { return a.at_ps < b.at_ps; };
  const auto middle = pending_.begin() + std::ptrdiff_t(sorted_);
  std::stable_sort(middle, pending_.end(), by_time);
  std::inplace_merge(pending_.begin(), middle, pending_.end(), by_time);
  sorted_ = pending_.size();
}

void EnergyLedger::fold(uint64_t until_ps, bool final) {
  sort_pending();
  size_t i = 0;
  while (i < pending_.size() && (final || pending_[i].at_ps < until_ps)) {
    const uint64_t at = pending_[i].at_ps;
    segment(swept_ps_, at);
    advance_phases(at);
    for (; i < pending_.size() && pending_[i].at_ps == at; ++i) {
      const Boundary& b = pending_[i];
      rate_ += b.rate_j_per_ps;
      active_ += b.active;
      if (b.instant_j > 0) {
        dynamic_j_by_phase_[phases_.front().name] += b.instant_j;
        if (duration_ps_ > 0) add_to_window(std::min(at, duration_ps_ - 1) / window_ps_, b.instant_j);
      }
    }
    if (active_ == 0) rate_ = 0;  // no drift once nothing is in progress
    swept_ps_ = at;
  }
  pending_.erase(pending_.begin(), pending_.begin() + std::ptrdiff_t(i));
  sorted_ = pending_.size();
}

void EnergyLedger::segment(uint64_t a, uint64_t b) {
  if (b <= a || active_ == 0 || rate_ <= 0) return;
  attribute_to_phases(rate_, a, b);
  a = std::min(a, duration_ps_);
  b = std::min(b, duration_ps_);
  if (b <= a) return;
  const uint64_t first = a / window_ps_, last = (b - 1) / window_ps_;
  if (first == last) return add_to_window(first, rate_ * static_cast<double>(b - a));
  add_to_window(first, rate_ * static_cast<double>((first + 1) * window_ps_ - a));
  if (last > first + 1) window_candidate(first + 1, rate_ * 1e12);
  add_to_window(last, rate_ * static_cast<double>(b - last * window_ps_));
}

void EnergyLedger::attribute_to_phases(double rate_j_per_ps, uint64_t a, uint64_t b) {
  while (a < b) {
    advance_phases(a);
    const uint64_t end = phases_.size() > 1 ? std::min(b, phases_[1].from_ps) : b;
    dynamic_j_by_phase_[phases_.front().name] += rate_j_per_ps * static_cast<double>(end - a);
    a = end;
  }
}

void EnergyLedger::advance_phases(uint64_t to_ps) {
  while (phases_.size() > 1 && phases_[1].from_ps <= to_ps) {
    ps_by_phase_[phases_.front().name] += phases_[1].from_ps - phases_.front().from_ps;
    phases_.pop_front();
  }
}

uint64_t EnergyLedger::window_length(uint64_t window) const {
  return std::min(window_ps_, duration_ps_ - window * window_ps_);
}

void EnergyLedger::add_to_window(uint64_t window, double joules) {
  if (window != edge_window_) {
    if (edge_j_ > 0)
      window_candidate(edge_window_, edge_j_ / (static_cast<double>(window_length(edge_window_)) * 1e-12));
    edge_window_ = window;
    edge_j_ = 0;
  }
  edge_j_ += joules;
}

// Every window also carries the static power; a window without dynamic energy
// has exactly that, and window 0 is the earliest such candidate. Powers equal
// up to rounding (an edge window and the inside of the same segment) count as
// equal, so the earliest window wins.
void EnergyLedger::window_candidate(uint64_t window, double dynamic_w) {
  const double static_w = static_power_w();
  const double watts = static_w + dynamic_w, peak = static_w + peak_dynamic_w_;
  const bool same = std::abs(watts - peak) <= peak * 1e-12;
  if ((watts > peak && !same) || (same && window < peak_window_)) {
    peak_dynamic_w_ = dynamic_w;
    peak_window_ = window;
  }
}

// --- the summary -------------------------------------------------------------

EnergyLedger::Summary EnergyLedger::summarize(uint64_t duration_ps) {
  if (duration_ps_ != UINT64_MAX) throw std::logic_error("energy ledger: summarize() called twice");
  if (swept_ps_ > duration_ps) {  // only a fold while running goes past the end
    throw std::logic_error("energy ledger: the run ends at " + std::to_string(duration_ps) +
                           " ps, before energy folded while it ran (" + std::to_string(swept_ps_) + " ps)");
  }
  duration_ps_ = duration_ps;
  fold(0, true);
  if (duration_ps > 0) add_to_window((duration_ps + window_ps_ - 1) / window_ps_, 0);  // flushes the last edge
  advance_phases(duration_ps);
  if (duration_ps > phases_.front().from_ps) ps_by_phase_[phases_.front().name] += duration_ps - phases_.front().from_ps;

  Summary s;
  s.duration_ps = duration_ps;
  for (size_t c = 0; c < names_.size(); ++c) s.dynamic_j_by_component[names_[c]] = dynamic_j_[c];
  for (const auto& [name, watts] : static_w_)
    s.static_j_by_component[name] = watts * static_cast<double>(duration_ps) * 1e-12;
  s.total_j = total_j(dynamic_j(), duration_ps);
  const double static_w = static_power_w();
  std::map<std::string, double> by_phase = dynamic_j_by_phase_;
  for (const auto& [name, ps] : ps_by_phase_) by_phase[name] += static_w * static_cast<double>(ps) * 1e-12;
  for (const auto& [name, joules] : by_phase)
    if (joules > 0) s.j_by_phase[name.empty() ? "other" : name] += joules;
  if (duration_ps == 0) return s;  // no time, no power
  s.average_w = s.total_j / (static_cast<double>(duration_ps) * 1e-12);
  s.peak_w = static_w + peak_dynamic_w_;
  s.peak_window_start_ps = peak_window_ * window_ps_;
  return s;
}

EnergyLedger::Summary EnergyLedger::summarize(uint64_t duration_ps, const std::vector<PhaseInterval>& phases) {
  if (phases_.size() != 1 || !phases_.front().name.empty() || swept_ps_ > 0)
    throw std::logic_error("energy ledger: phases given twice (set_phase and summarize)");
  for (const auto& p : phases)
    if (p.end_ps < p.start_ps) throw std::logic_error("energy ledger: phase " + p.name + " ends before it starts");
  std::vector<PhaseInterval> sorted = phases;
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.start_ps < b.start_ps; });
  for (size_t i = 1; i < sorted.size(); ++i)
    if (sorted[i].start_ps < sorted[i - 1].end_ps)
      throw std::logic_error("energy ledger: phases " + sorted[i - 1].name + " and " + sorted[i].name + " overlap");
  for (const PhaseInterval& p : sorted) {
    set_phase(p.name, p.start_ps);
    set_phase("", p.end_ps);
  }
  return summarize(duration_ps);
}

}  // namespace ispsim::core
