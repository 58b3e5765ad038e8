#include "traces/workload/zipf.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ispsim::workload {

ZipfPopularity::ZipfPopularity(double s, uint64_t max_ranks) : s_(s), prefix_(max_ranks + 1, 0.0) {
  for (uint64_t r = 1; r <= max_ranks; ++r) prefix_[r] = prefix_[r - 1] + std::pow(static_cast<double>(r), -s);
}

double ZipfPopularity::probability(uint64_t rank, uint64_t n) const {
  return std::pow(static_cast<double>(rank), -s_) / prefix_.at(n);
}

uint64_t ZipfPopularity::draw(uint64_t n, tracegen::SeededRandom& random) const {
  if (n == 0 || n >= prefix_.size()) throw std::logic_error("Zipf draw over a store outside the table");
  const double target = random.uniform_unit() * prefix_[n];
  // The first rank whose prefix sum exceeds the target.
  const auto it = std::upper_bound(prefix_.begin() + 1, prefix_.begin() + static_cast<std::ptrdiff_t>(n) + 1, target);
  return std::min<uint64_t>(static_cast<uint64_t>(it - prefix_.begin()), n);
}

uint64_t ZipfPopularity::walk_remaining(uint64_t n, const std::vector<uint64_t>& taken,
                                        tracegen::SeededRandom& random) const {
  double left = prefix_[n];
  for (uint64_t r : taken) left -= std::pow(static_cast<double>(r), -s_);
  double target = random.uniform_unit() * left;
  uint64_t last = 0;
  for (uint64_t r = 1; r <= n; ++r) {
    if (std::find(taken.begin(), taken.end(), r) != taken.end()) continue;
    last = r;
    target -= std::pow(static_cast<double>(r), -s_);
    if (target < 0) return r;
  }
  return last;  // rounding left the target a hair above the last weight
}

std::vector<uint64_t> ZipfPopularity::draw_distinct(uint64_t n, uint64_t k, tracegen::SeededRandom& random) const {
  if (k > n) throw std::logic_error("more distinct Zipf ranks than the store holds");
  constexpr int kRedraws = 64;
  std::vector<uint64_t> taken;
  taken.reserve(k);
  while (taken.size() < k) {
    uint64_t rank = 0;
    for (int attempt = 0; attempt < kRedraws && rank == 0; ++attempt) {
      const uint64_t r = draw(n, random);
      if (std::find(taken.begin(), taken.end(), r) == taken.end()) rank = r;
    }
    taken.push_back(rank != 0 ? rank : walk_remaining(n, taken, random));
  }
  std::sort(taken.begin(), taken.end());
  return taken;
}

}  // namespace ispsim::workload
