// Energy bookkeeping of one simulation. Every component records its dynamic
// energy as it works (joules spent uniformly over a time interval) and declares
// its static (leakage + idle) power once; the summary adds them up per
// component and per phase and derives average and peak power.
//
// Peak power is the largest mean power over any window of `window_ps` aligned
// to multiples of the window (default 1 us): a burst shorter than the window is
// averaged over it, which is how a power meter or a thermal budget sees it.
// Phases are time intervals given by the runtime; energy spent outside every
// phase is reported under "other". Static energy = static power x simulated time.
//
// No SystemC: components pass their own time stamps (picoseconds).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ispsim::core {

class EnergyLedger {
 public:
  // Dynamic energy `joules` (>= 0) spent uniformly over [start_ps, end_ps]
  // (an instant when they are equal). Negative energy or a reversed interval
  // throws std::logic_error (a programming error).
  void add(const std::string& component, double joules, uint64_t start_ps, uint64_t end_ps);
  // Static power of `component` in watts, for the whole simulated time; a second
  // declaration of the same component adds to the first.
  void add_static_power(const std::string& component, double watts);

  struct PhaseInterval {
    std::string name;
    uint64_t start_ps, end_ps;
  };
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
  // Summarises [0, duration_ps]. Phases may not overlap or be reversed
  // (std::logic_error); static energy is shared among phases by their duration.
  // A zero duration gives zero average and peak power.
  Summary summarize(uint64_t duration_ps, const std::vector<PhaseInterval>& phases,
                    uint64_t window_ps = 1000000) const;

  double static_power_w() const;

 private:
  void peak_power(uint64_t duration_ps, uint64_t window_ps, double static_w, Summary& s) const;
  struct Record {
    uint32_t component;
    double joules;
    uint64_t start_ps, end_ps;
  };
  std::map<std::string, uint32_t> ids_;
  std::vector<std::string> names_;
  std::vector<Record> records_;
  std::map<std::string, double> static_w_;
};

}  // namespace ispsim::core
