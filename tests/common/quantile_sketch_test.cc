// QuantileSketch against exact quantiles of the same values: within its stated
// relative accuracy, exact count, sum, min and max, zeros.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "common/quantile_sketch.h"

namespace {

TEST(QuantileSketch, QuantilesWithinTheRelativeAccuracyOfTheExactOnes) {
  std::mt19937_64 engine(3);
  std::lognormal_distribution<double> spread(std::log(1e6), 1.5);  // ns: a millisecond, widely spread
  ispsim::QuantileSketch sketch(0.005);
  std::vector<double> values;
  double sum = 0;
  for (int i = 0; i < 100000; ++i) {
    values.push_back(spread(engine));
    sketch.add(values.back());
    sum += values.back();
  }
  std::sort(values.begin(), values.end());
  for (double q : {0.01, 0.5, 0.9, 0.95, 0.99, 0.999}) {
    const double exact = values[static_cast<size_t>(std::floor(q * (values.size() - 1)))];
    EXPECT_LE(std::abs(sketch.quantile(q) - exact), 0.005 * exact) << "q = " << q;
  }
  EXPECT_EQ(sketch.count(), 100000u);
  EXPECT_DOUBLE_EQ(sketch.sum(), sum);
  EXPECT_EQ(sketch.quantile(0), values.front());
  EXPECT_EQ(sketch.quantile(1), values.back());
  EXPECT_EQ(sketch.max(), values.back());
}

TEST(QuantileSketch, ZerosAndEmpty) {
  ispsim::QuantileSketch sketch;
  EXPECT_EQ(sketch.quantile(0.5), 0.0);
  for (int i = 0; i < 3; ++i) sketch.add(0);
  sketch.add(1000);
  sketch.add(1000);
  EXPECT_EQ(sketch.quantile(0.5), 0.0);  // rank 2 of 5
  EXPECT_NEAR(sketch.quantile(0.99), 1000, 5);  // rank 3
  EXPECT_EQ(sketch.mean(), 400.0);
  EXPECT_THROW(sketch.add(-1), std::invalid_argument);
}

}  // namespace
