// `sum += x` repeated `times` times, bit for bit, without the loop: within one
// binade of the sum every addition of the same x rounds by the same step, so
// the additions up to the binade's end are one multiplication. Sums of
// identical charges (a pass's energy, tile after tile) stay exactly the
// tile-by-tile sums at a cost that does not grow with the tiles.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace ispsim {

namespace repeated_sum_detail {
constexpr uint64_t kHidden = uint64_t(1) << 52;
// A normal double as units x 2^exponent, units in [2^52, 2^53).
inline uint64_t units(double v, int* exponent) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  *exponent = int((bits >> 52) & 0x7ff) - 1075;
  return (bits & (kHidden - 1)) | kHidden;
}
inline double from_units(uint64_t units, int exponent) {
  const uint64_t bits = (uint64_t(exponent + 1075) << 52) | (units & (kHidden - 1));
  double v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}
}  // namespace repeated_sum_detail

inline double add_repeatedly(double sum, double x, uint64_t times) {
  using repeated_sum_detail::units;
  constexpr uint64_t kBinadeEnd = uint64_t(1) << 53;
  // A zero changes the sum once at most (a zero sum's sign), and a zero sum
  // is no normal number to step in units: one addition stands for all.
  if (x == 0) return times > 0 ? sum + x : sum;
  while (times > 0) {
    int sum_exp = 0, x_exp = 0;
    // Few additions, zero, negatives, extreme magnitudes, x not below the
    // sum's binade: one addition at a time.
    const bool plain = times < 8 || !(sum >= 0x1p-900 && sum <= 0x1p900) || !(x >= 0x1p-900 && x <= 0x1p900);
    const uint64_t k = plain ? 0 : units(sum, &sum_exp);  // the sum in its ulps
    const uint64_t m = plain ? 0 : units(x, &x_exp);
    if (plain || x_exp >= sum_exp) {
      sum += x;
      --times;
      continue;
    }
    const int shift = sum_exp - x_exp;
    if (shift > 54) return sum;  // x is below half an ulp: no addition changes the sum
    const uint64_t whole = m >> shift, rest = m & ((uint64_t(1) << shift) - 1), half = uint64_t(1) << (shift - 1);
    // A tie (rest == half) rounds to even, alternating with the parity: one at a time.
    const uint64_t step = rest == half ? 0 : whole + (rest > half ? 1 : 0);  // x rounded to ulps
    if (step == 0 && rest != half) return sum;  // below half an ulp
    // The exact result of an addition to k ulps is below k + whole + 1 ulps:
    // while that stays within the binade, every addition rounds by `step`.
    const uint64_t limit = kBinadeEnd - 2 - whole;
    const uint64_t steps = step == 0 || k > limit ? 0 : std::min<uint64_t>(times, (limit - k) / step + 1);
    if (steps == 0) {
      sum += x;
      --times;
      continue;
    }
    sum = repeated_sum_detail::from_units(k + steps * step, sum_exp);
    times -= steps;
  }
  return sum;
}

// A sum of values added one by one, kept as the sum so far and a value still
// to be added `times` times: repeats cost nothing until the value changes or
// the total is read, and the total has the bits of the additions one by one.
class RepeatedSum {
 public:
  void add(double x, uint64_t times = 1) {
    if (times_ > 0 && x != x_) settle();
    x_ = x;
    times_ += times;
  }
  double total() {
    settle();
    return sum_;
  }

 private:
  void settle() {
    sum_ = add_repeatedly(sum_, x_, times_);
    times_ = 0;
  }
  double sum_ = 0, x_ = 0;
  uint64_t times_ = 0;
};

}  // namespace ispsim
