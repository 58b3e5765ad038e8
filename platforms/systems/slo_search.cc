#include "platforms/systems/slo_search.h"

#include <stdexcept>

namespace ispsim::systems {

SloResult search_slo(double low, double high, unsigned steps, double slo_ns,
                     const std::function<double(double)>& probe) {
  if (!(low > 0 && high > low)) throw std::invalid_argument("search_slo: need 0 < low < high");
  SloResult result;
  const auto run = [&](double rate) {
    const double value = probe(rate);
    result.probes.push_back({rate, value, value <= slo_ns});
    return value <= slo_ns;
  };
  result.fails_at_low = !run(low);
  if (result.fails_at_low) {
    result.missed_rate_per_s = low;
    return result;
  }
  result.met_rate_per_s = low;
  result.meets_at_high = run(high);
  if (result.meets_at_high) {
    result.met_rate_per_s = high;
    return result;
  }
  result.missed_rate_per_s = high;
  for (unsigned i = 0; i < steps; ++i) {
    const double mid = 0.5 * (result.met_rate_per_s + result.missed_rate_per_s);
    (run(mid) ? result.met_rate_per_s : result.missed_rate_per_s) = mid;
  }
  return result;
}

}  // namespace ispsim::systems
