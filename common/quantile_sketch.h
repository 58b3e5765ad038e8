// Quantiles of a stream in bounded memory: a DDSketch (Masson, Rim, Lee,
// "DDSketch: A Fast and Fully-Mergeable Quantile Sketch with Relative-Error
// Guarantees", VLDB 2019). Values x > 0 fall into logarithmic buckets
// i = ceil(log_g(x)), g = (1 + a) / (1 - a); a bucket answers with
// 2 g^i / (g + 1), which is within relative error a of every value in it. So
// quantile(q) is within relative error a of the exact q-quantile (the value of
// rank floor(q (n - 1)) in sorted order). Values below kZeroBelow count as 0.
// Memory: one counter per occupied bucket, at most log(max / min) / log(g);
// 1 ns to 10^6 s at a = 0.5 % is under 3,500 buckets. Count, sum, min and max
// are exact.
#pragma once

#include <cstdint>
#include <map>

namespace ispsim {

class QuantileSketch {
 public:
  static constexpr double kZeroBelow = 1e-9;
  explicit QuantileSketch(double relative_accuracy = 0.005);

  void add(double value);
  uint64_t count() const { return count_; }
  double sum() const { return sum_; }
  double mean() const { return count_ ? sum_ / static_cast<double>(count_) : 0.0; }
  double min() const { return min_; }
  double max() const { return max_; }
  double relative_accuracy() const { return accuracy_; }
  // The q-quantile, 0 <= q <= 1, within the relative accuracy; 0 when empty.
  // q = 0 and q = 1 give the exact min and max.
  double quantile(double q) const;

 private:
  double accuracy_, gamma_, log_gamma_;
  std::map<int, uint64_t> buckets_;
  uint64_t zeros_ = 0, count_ = 0;
  double sum_ = 0, min_ = 0, max_ = 0;
};

}  // namespace ispsim
