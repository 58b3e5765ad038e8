// Random INT8 GEMM cases for the kernel tests (isa_variants_test.cc,
// amx_gemm_test.cc).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "kernels/int/fixed_point.h"
#include "kernels/int/gemv_int8.h"

namespace ispsim::integer {

inline std::vector<int8_t> random_int8(size_t n, std::mt19937& rng) {
  std::uniform_int_distribution<int> d(-127, 127);
  std::vector<int8_t> v(n);
  for (auto& x : v) x = static_cast<int8_t>(d(rng));
  return v;
}

struct GemmCase {
  int tokens, rows, cols, group;
  std::vector<int8_t> W, X;
  std::vector<Dyadic> act, wsc;
  int groups() const { return (cols + group - 1) / group; }
};

// Scales as the engine makes them (mult < 2^15 / 2^24), with a few shifts
// outside [1, 62] so the vector kernels' fallback lanes are exercised too.
inline GemmCase make_case(int tokens, int rows, int cols, int group, std::mt19937& rng) {
  GemmCase c{tokens, rows, cols, group, random_int8(static_cast<size_t>(rows) * cols, rng),
             random_int8(static_cast<size_t>(tokens) * cols, rng), {}, {}};
  c.W[0] = -127, c.X[0] = -127;
  std::uniform_int_distribution<int32_t> am(1, (1 << 15) - 1), wm(1, (1 << 24) - 1), sh(8, 30);
  c.act.resize(static_cast<size_t>(tokens) * c.groups());
  c.wsc.resize(static_cast<size_t>(rows) * c.groups());
  for (auto& d : c.act) d = Dyadic{am(rng), sh(rng)};
  for (auto& d : c.wsc) d = Dyadic{wm(rng), sh(rng)};
  if (c.wsc.size() > 3) c.wsc[1].shift = -3, c.wsc[2].shift = 70, c.wsc[3].shift = 0;
  return c;
}

inline std::vector<int32_t> run_gemm(const GemmCase& c, const PackedS8* packed) {
  std::vector<int32_t> Y(static_cast<size_t>(c.tokens) * c.rows, 0x5A5A5A5A);
  gemm_s8_grouped(c.W.data(), c.X.data(), c.tokens, c.rows, c.cols, c.group, c.act.data(), c.wsc.data(), Y.data(),
                  packed);
  return Y;
}

}  // namespace ispsim::integer
