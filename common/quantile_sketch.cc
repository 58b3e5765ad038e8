#include "common/quantile_sketch.h"

#include <cmath>
#include <stdexcept>

namespace ispsim {

QuantileSketch::QuantileSketch(double relative_accuracy)
    : accuracy_(relative_accuracy),
      gamma_((1 + relative_accuracy) / (1 - relative_accuracy)),
      log_gamma_(std::log(gamma_)) {
  if (!(relative_accuracy > 0 && relative_accuracy < 1))
    throw std::invalid_argument("QuantileSketch: relative accuracy outside (0, 1)");
}

void QuantileSketch::add(double value) {
  if (!(value >= 0)) throw std::invalid_argument("QuantileSketch: negative or NaN value");
  min_ = count_ == 0 ? value : std::min(min_, value);
  max_ = count_ == 0 ? value : std::max(max_, value);
  ++count_;
  sum_ += value;
  if (value < kZeroBelow) ++zeros_;
  else ++buckets_[static_cast<int>(std::ceil(std::log(value) / log_gamma_))];
}

double QuantileSketch::quantile(double q) const {
  if (count_ == 0) return 0.0;
  if (q <= 0) return min_;
  if (q >= 1) return max_;
  const auto rank = static_cast<uint64_t>(std::floor(q * static_cast<double>(count_ - 1)));
  uint64_t seen = zeros_;
  if (rank < seen) return 0.0;
  for (const auto& [index, n] : buckets_) {
    seen += n;
    if (rank < seen) {
      const double estimate = 2 * std::pow(gamma_, index) / (gamma_ + 1);
      return std::min(std::max(estimate, min_), max_);  // never outside what was seen
    }
  }
  return max_;
}

}  // namespace ispsim
