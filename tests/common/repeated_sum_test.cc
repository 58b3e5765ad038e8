// add_repeatedly() against the loop it replaces, bit for bit: random sums and
// charges over many binades, ties (a charge of exactly half a unit, whose
// rounding alternates), charges below half a unit and above the sum, and
// counts that cross binade boundaries.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>

#include "common/repeated_sum.h"

namespace ispsim {
namespace {

double loop(double sum, double x, uint64_t times) {
  for (uint64_t i = 0; i < times; ++i) sum += x;
  return sum;
}

uint64_t bits(double v) {
  uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

void expect_same(double sum, double x, uint64_t times) {
  EXPECT_EQ(bits(add_repeatedly(sum, x, times)), bits(loop(sum, x, times)))
      << std::hexfloat << "sum " << sum << " x " << x << " times " << times;
}

TEST(RepeatedSum, EqualsTheLoopOnRandomSumsAndCharges) {
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  std::uniform_int_distribution<int> exponent(-30, 30);
  std::uniform_int_distribution<uint64_t> count(0, 200000);
  for (int i = 0; i < 3000; ++i) {
    const double x = std::ldexp(mantissa(random), exponent(random));
    const double sum = i % 5 == 0 ? 0.0 : std::ldexp(mantissa(random), exponent(random));
    expect_same(sum, x, count(random) >> (i % 12));
  }
}

TEST(RepeatedSum, EqualsTheLoopOnTiesTinyChargesAndBinadeCrossings) {
  const double unit = std::ldexp(1.0, -52);  // ulp of sums in [1, 2)
  for (uint64_t times : {1u, 2u, 3u, 7u, 1000u, 100000u}) {
    expect_same(1.0, unit / 2, times);             // a tie: rounds to even, every time
    expect_same(1.0 + unit, unit / 2, times);      // a tie from an odd sum
    expect_same(1.0, 1.5 * unit, times);           // a tie above one unit: alternating steps
    expect_same(1.0, unit / 4, times);             // vanishes
    expect_same(1.0, 0.75 * unit, times);          // rounds up to one unit
    expect_same(2.0 - 3 * unit, unit, times);      // crosses into [2, 4) at once
    expect_same(1.0, 0.1, times);                  // many binades
    expect_same(0.1, 12345.678, times);            // the charge dwarfs the sum
    expect_same(0.0, 0.3, times);
    expect_same(-1.0, 0.3, times);                 // negative sums: the loop itself
    expect_same(5.0, -0.25, times);
    for (double zero : {0.0, -0.0})  // zero charges, on zero sums of either sign too
      for (double sum : {0.0, -0.0, 1.5, -2.0}) expect_same(sum, zero, times);
  }
}

// Sums a few units below a power of two, charges of a few units and a
// fraction: the last additions of a binade round on the next binade's grid.
TEST(RepeatedSum, EqualsTheLoopAtTheEndOfABinade) {
  const double unit = std::ldexp(1.0, -52);
  for (int below = 1; below <= 9; ++below)
    for (int whole = 0; whole <= 4; ++whole)
      for (double fraction : {0.1, 0.3, 0.6, 0.9})
        for (uint64_t times = 1; times <= 12; ++times) expect_same(2.0 - below * unit, (whole + fraction) * unit, times);
}

// Values in runs of repeats, added one by one and through RepeatedSum
// (several runs of one value in a row, totals read in between): the same bits.
TEST(RepeatedSum, ASumOfRunsEqualsTheAdditionsOneByOne) {
  std::mt19937_64 random(11);
  std::uniform_real_distribution<double> value(0.0, 3000.0);
  std::uniform_int_distribution<uint64_t> repeats(1, 300);
  double plain = 0;
  RepeatedSum sum;
  double x = value(random);
  for (int run = 0; run < 2000; ++run) {
    if (run % 3 != 0) x = value(random);  // every third run repeats the value before
    const uint64_t n = repeats(random);
    for (uint64_t i = 0; i < n; ++i) plain += x;
    sum.add(x, n);
    if (run % 250 == 0) {
      ASSERT_EQ(bits(sum.total()), bits(plain)) << run;
    }
  }
  EXPECT_EQ(bits(sum.total()), bits(plain));
}

}  // namespace
}  // namespace ispsim
