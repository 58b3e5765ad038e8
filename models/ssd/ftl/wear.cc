#include "models/ssd/ftl/wear.h"

#include <cmath>
#include <stdexcept>

namespace ispsim::ftl {

double lambert_w0(double x) {
  if (!(x >= -std::exp(-1.0) && x <= 0)) throw std::domain_error("lambert_w0: x outside [-1/e, 0]");
  // Start near the branch point, where w ~ -1 + sqrt(2 (1 + e x)), then Halley's iteration.
  double w = x > -0.25 ? x : -1 + std::sqrt(2 * (1 + std::exp(1.0) * x));
  for (int i = 0; i < 100; ++i) {
    const double e = std::exp(w), f = w * e - x;
    if (f == 0 || w == -1) break;
    const double step = f / (e * (w + 1) - (w + 2) * f / (2 * w + 2));
    w -= step;
    if (std::fabs(step) < 1e-15 * (1 + std::fabs(w))) break;
  }
  return w;
}

double greedy_waf_model(double spare_factor) {
  const double alpha = 1 / (1 - spare_factor);
  return alpha / (alpha + lambert_w0(-alpha * std::exp(-alpha)));
}

double log_spare_factor(const FtlConfig& config) {
  const double log_pages =
      double(config.geometry.physical_pages() - config.foreground_free_lines() * config.geometry.line_pages());
  return 1 - double(config.logical_pages()) / log_pages;
}

double lifetime_days(const FtlConfig& config, double waf, double host_bytes_per_day) {
  const double physical_bytes = double(config.geometry.physical_pages()) * config.geometry.page_bytes;
  return double(config.endurance_pe_cycles) * physical_bytes / (waf * host_bytes_per_day);
}

}  // namespace ispsim::ftl
