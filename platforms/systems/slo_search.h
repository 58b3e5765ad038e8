// The highest arrival rate at which a latency quantile stays within an SLO, by
// bisection: each probe serves the workload at one Poisson rate and reports the
// quantile. The same seed draws the same uniforms at every rate, so arrival
// times scale exactly with 1 / rate (common random numbers) and the quantile is
// close to monotone in the rate; the search assumes it is.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace ispsim::systems {

struct SloProbe {
  double rate_per_s = 0;
  double value_ns = 0;  // the quantile served at this rate
  bool meets = false;   // value_ns <= SLO
};

struct SloResult {
  // The highest rate that met the SLO and the lowest that missed it; the
  // answer lies in between. meets_at_high: even `high` met it (a lower bound
  // only); fails_at_low: even `low` missed it (an upper bound only).
  double met_rate_per_s = 0, missed_rate_per_s = 0;
  bool meets_at_high = false, fails_at_low = false;
  std::vector<SloProbe> probes;  // in the order run
};

// Probes `low` and `high`, then bisects `steps` times between the highest rate
// that met the SLO and the lowest that missed it. `probe(rate)` returns the
// quantile in ns. low > 0, high > low.
SloResult search_slo(double low, double high, unsigned steps, double slo_ns,
                     const std::function<double(double rate_per_s)>& probe);

}  // namespace ispsim::systems
