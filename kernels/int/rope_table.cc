#include "kernels/int/rope_table.h"

#include <cmath>

namespace ispsim::integer {

RopeTable build_rope_table(const std::vector<double>& inv_freq, int positions) {
  RopeTable t;
  t.half_dim = static_cast<int>(inv_freq.size());
  t.positions = positions;
  t.cos_q30.resize(static_cast<size_t>(positions) * t.half_dim);
  t.sin_q30.resize(t.cos_q30.size());
  const double one = 1073741824.0;  // 2^30
  for (int p = 0; p < positions; ++p)
    for (int i = 0; i < t.half_dim; ++i) {
      double angle = p * inv_freq[i];
      t.cos_q30[static_cast<size_t>(p) * t.half_dim + i] = static_cast<int32_t>(std::lround(std::cos(angle) * one));
      t.sin_q30[static_cast<size_t>(p) * t.half_dim + i] = static_cast<int32_t>(std::lround(std::sin(angle) * one));
    }
  return t;
}

}  // namespace ispsim::integer
