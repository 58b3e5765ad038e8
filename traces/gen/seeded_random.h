// Seeded random draws that give the same numbers on every platform and standard
// library. std::mt19937_64 is fully specified by the C++ standard, but the
// std:: distributions are not (libstdc++ and libc++ turn the same engine output
// into different values), so the few distributions the generator needs are
// written here: unbiased integers by rejection, doubles from the top 53 bits,
// normals by Box-Muller. Integers and uniforms are exact everywhere; normals use
// libm's log and cos, which other C libraries may round differently in the last
// bit (that could move a rounded token count by one in rare cases).
#pragma once

#include <cstdint>
#include <random>

namespace ispsim::tracegen {

class SeededRandom {
 public:
  explicit SeededRandom(uint64_t seed) : engine_(seed) {}

  // A seed for an independent stream `stream` of `seed` (SplitMix64 finalizer),
  // so that e.g. the mask draws do not shift when a length is given explicitly.
  static uint64_t derive_seed(uint64_t seed, uint64_t stream);

  // Uniform integer in [low, high] (inclusive), low <= high; rejection
  // sampling, so no modulo bias.
  uint64_t uniform_int(uint64_t low, uint64_t high);
  // Uniform double in [0, 1): the engine's top 53 bits / 2^53.
  double uniform_unit();
  // Standard normal N(0, 1) by the Box-Muller transform (one value per two
  // uniforms; the second value is dropped to keep the stream position simple).
  double standard_normal();

 private:
  std::mt19937_64 engine_;
};

}  // namespace ispsim::tracegen
