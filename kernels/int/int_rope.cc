#include "kernels/int/int_rope.h"

#include "kernels/int/fixed_point.h"

namespace ispsim::integer {

void int_rope(int32_t* x, int head_dim, const int32_t* cos_q30, const int32_t* sin_q30) {
  const int half = head_dim / 2;
  for (int i = 0; i < half; ++i) {
    int64_t a = x[i], b = x[i + half];
    x[i] = saturate_int32(round_shift(a * cos_q30[i] - b * sin_q30[i], 30));
    x[i + half] = saturate_int32(round_shift(b * cos_q30[i] + a * sin_q30[i], 30));
  }
}

}  // namespace ispsim::integer
