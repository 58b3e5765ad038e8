// Energy bookkeeping of one simulation, in memory that does not grow with the
// amount of simulated work. Every component records its dynamic energy as it
// works (joules spent uniformly over a time interval) and declares its static
// (leakage + idle) power once; the summary adds them up per component and per
// phase and derives average and peak power.
//
// Peak power is the largest mean power over any window of `window_ps` aligned
// to multiples of the window (default 1 us): a burst shorter than the window is
// averaged over it, which is how a power meter or a thermal budget sees it.
// Phases are announced as they begin (set_phase); energy spent outside every
// phase is reported under "other". Static energy = static power x simulated time.
//
// Streaming. Records are folded into the per-phase sums and the peak-window
// sweep as soon as no later record can start before them. With a clock
// (set_clock), the ledger folds once enough records are pending, up to the
// settled time: the clock's "now", or the start of the earliest activity still
// held open (open/close) if earlier. A component that charges an activity's
// energy only when it ends, spread back to its start, holds that start open
// meanwhile; a record that starts before the settled time is a programming
// error (std::logic_error naming the component). Without a clock everything is
// folded by summarize().
//
// No SystemC: components pass their own time stamps (picoseconds).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace ispsim::core {

class EnergyLedger {
 public:
  static constexpr uint64_t kDefaultWindowPs = 1'000'000;  // 1 us
  explicit EnergyLedger(uint64_t window_ps = kDefaultWindowPs);

  // Dynamic energy `joules` (>= 0) spent uniformly over [start_ps, end_ps]
  // (an instant when they are equal). Negative energy, a reversed interval or a
  // start before the settled time throws std::logic_error (a programming error).
  void add(const std::string& component, double joules, uint64_t start_ps, uint64_t end_ps);
  // Static power of `component` in watts, for the whole simulated time; a second
  // declaration of the same component adds to the first.
  void add_static_power(const std::string& component, double watts);
  double static_power_w() const;
  // Dynamic energy recorded so far, every component (readable while running).
  double dynamic_j() const;
  // `dynamic_j` plus the static energy of `duration_ps`, added up in the order
  // summarize() adds its total, so the same inputs give the same bits.
  double total_j(double dynamic_j, uint64_t duration_ps) const;

  // The simulated time now, in ps; enables folding while the simulation runs.
  void set_clock(std::function<uint64_t()> now_ps);
  // Holds `start_ps` open: nothing at or after it is folded until close(ticket).
  uint64_t open(uint64_t start_ps);
  void close(uint64_t ticket);

  // From `from_ps` on, time belongs to phase `name` ("" = no phase: "other").
  // Calls come in time order; a second call at the same time replaces the first.
  void set_phase(const std::string& name, uint64_t from_ps);

  struct Summary {
    uint64_t duration_ps = 0;
    double total_j = 0;
    std::map<std::string, double> dynamic_j_by_component;
    std::map<std::string, double> static_j_by_component;
    std::map<std::string, double> j_by_phase;  // dynamic + static share of each phase
    double average_w = 0;
    double peak_w = 0;
    uint64_t peak_window_start_ps = 0;
  };
  // Folds everything and summarises [0, duration_ps]; call once, at the end.
  // A zero duration gives zero average and peak power.
  Summary summarize(uint64_t duration_ps);

  // The phases as intervals, for a ledger that was given none by set_phase:
  // they may not overlap or be reversed (std::logic_error).
  struct PhaseInterval {
    std::string name;
    uint64_t start_ps, end_ps;
  };
  Summary summarize(uint64_t duration_ps, const std::vector<PhaseInterval>& phases);

  size_t pending_records() const { return pending_.size(); }

 private:
  // A change of the dynamic power (rate, records in progress) or an instant.
  struct Boundary {
    uint64_t at_ps;
    double rate_j_per_ps;
    int active;
    double instant_j;
  };
  struct PhaseChange {
    uint64_t from_ps;
    std::string name;
  };

  uint64_t settled_ps() const;
  void sort_pending();
  // Sweeps every pending boundary before `until_ps` (all of them when final).
  void fold(uint64_t until_ps, bool final);
  void segment(uint64_t a, uint64_t b);
  void attribute_to_phases(double rate_j_per_ps, uint64_t a, uint64_t b);
  void advance_phases(uint64_t to_ps);
  void add_to_window(uint64_t window, double joules);
  void window_candidate(uint64_t window, double dynamic_w);
  uint64_t window_length(uint64_t window) const;

  const uint64_t window_ps_;
  std::map<std::string, uint32_t> ids_;
  std::vector<std::string> names_;
  std::vector<double> dynamic_j_;  // by component id
  std::map<std::string, double> static_w_;

  std::function<uint64_t()> clock_;
  std::multiset<uint64_t> open_starts_;
  std::map<uint64_t, std::multiset<uint64_t>::iterator> open_;  // by ticket
  uint64_t next_ticket_ = 0;

  // Boundaries not yet swept: [0, sorted_) in time order, ties in the order
  // added (so their rates add up in that order), the rest as added.
  std::vector<Boundary> pending_;
  size_t sorted_ = 0;
  static constexpr size_t kFoldBatch = 1 << 16;  // pending boundaries that trigger a fold
  size_t fold_when_pending_ = kFoldBatch;

  // The sweep: dynamic power between boundaries, per phase and per window.
  uint64_t swept_ps_ = 0;  // every boundary before it is folded; no record may start before it
  double rate_ = 0;
  int active_ = 0;
  std::deque<PhaseChange> phases_{{0, ""}};  // front: the phase at swept_ps_
  std::map<std::string, double> dynamic_j_by_phase_;
  std::map<std::string, uint64_t> ps_by_phase_;
  uint64_t duration_ps_ = UINT64_MAX;  // known at summarize()
  uint64_t edge_window_ = 0;
  double edge_j_ = 0;
  double peak_dynamic_w_ = 0;
  uint64_t peak_window_ = 0;
};

}  // namespace ispsim::core
