#include "traces/gen/seeded_random.h"

#include <cmath>
#include <limits>

namespace ispsim::tracegen {

uint64_t SeededRandom::derive_seed(uint64_t seed, uint64_t stream) {
  // SplitMix64 (Steele, Lea, Flood 2014) applied to seed + stream * golden gamma.
  uint64_t z = seed + (stream + 1) * 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

uint64_t SeededRandom::uniform_int(uint64_t low, uint64_t high) {
  const uint64_t span = high - low;  // values - 1
  if (span == std::numeric_limits<uint64_t>::max()) return engine_();
  const uint64_t values = span + 1;
  // Largest multiple of `values` that fits: draws at or above it are rejected.
  const uint64_t limit = std::numeric_limits<uint64_t>::max() - std::numeric_limits<uint64_t>::max() % values;
  uint64_t draw = engine_();
  while (draw >= limit) draw = engine_();
  return low + draw % values;
}

double SeededRandom::uniform_unit() {
  return static_cast<double>(engine_() >> 11) * (1.0 / 9007199254740992.0);  // 2^53
}

double SeededRandom::standard_normal() {
  // 1 - u lies in (0, 1], so the logarithm is finite.
  const double u1 = 1.0 - uniform_unit();
  const double u2 = uniform_unit();
  const double two_pi = 6.283185307179586476925286766559;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(two_pi * u2);
}

}  // namespace ispsim::tracegen
