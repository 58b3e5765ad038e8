// Zipf popularity over a store of n documents: rank r (1 = most popular) is
// drawn with probability r^-s / H(n, s), H(n, s) = sum_{i=1..n} i^-s. The
// prefix sums H(r, s) do not depend on n, so one table serves a store that
// grows; memory is 8 bytes per rank.
#pragma once

#include <cstdint>
#include <vector>

#include "traces/gen/seeded_random.h"

namespace ispsim::workload {

class ZipfPopularity {
 public:
  // Ranks 1..max_ranks with exponent s >= 0.
  ZipfPopularity(double s, uint64_t max_ranks);

  // P(rank) among n ranks, the closed form above.
  double probability(uint64_t rank, uint64_t n) const;
  // One rank of 1..n.
  uint64_t draw(uint64_t n, tracegen::SeededRandom& random) const;
  // k distinct ranks of 1..n in increasing order: each next rank is drawn from
  // the ranks not yet taken in proportion to their weights (duplicates are
  // redrawn; after 64 duplicates in a row the remaining weights are walked,
  // which draws from the same distribution).
  std::vector<uint64_t> draw_distinct(uint64_t n, uint64_t k, tracegen::SeededRandom& random) const;

 private:
  uint64_t walk_remaining(uint64_t n, const std::vector<uint64_t>& taken, tracegen::SeededRandom& random) const;

  double s_;
  std::vector<double> prefix_;  // prefix_[r] = H(r, s); prefix_[0] = 0
};

}  // namespace ispsim::workload
