#include "kernels/int/gemv_int8.h"

#include <cstddef>
#include <vector>

#include "kernels/int/gemv_int8_avx2.h"

namespace ispsim::integer {
namespace {
bool g_simd_enabled = simd_available();

void dot_groups_portable(const int8_t* w, const int8_t* x, int cols, int group, int32_t* partial) {
  for (int start = 0, g = 0; start < cols; start += group, ++g) {
    int end = start + group < cols ? start + group : cols;
    int32_t sum = 0;
    for (int k = start; k < end; ++k) sum += int32_t{w[k]} * x[k];
    partial[g] = sum;
  }
}

int32_t scaled_sum(const int32_t* partial, int groups, int group, const Dyadic* act_scale, const Dyadic* weight_scale) {
  int64_t sum = 0;
  if (group <= 256) {
    // |partial| <= 256 * 127^2 < 2^22, act mult < 2^15, weight mult < 2^24 (to_dyadic): the product fits 2^61.
    for (int g = 0; g < groups; ++g)
      sum += round_shift(int64_t{partial[g]} * act_scale[g].mult * weight_scale[g].mult,
                         act_scale[g].shift + weight_scale[g].shift);
  } else {
    for (int g = 0; g < groups; ++g) {
      __int128 product = static_cast<__int128>(partial[g]) * act_scale[g].mult * weight_scale[g].mult;
      sum += round_shift128(product, act_scale[g].shift + weight_scale[g].shift);
    }
  }
  return saturate_int32(sum);
}
}  // namespace

bool simd_available() { return avx2_supported(); }
void set_simd_enabled(bool enabled) { g_simd_enabled = enabled && simd_available(); }
bool simd_enabled() { return g_simd_enabled; }

void dot_s8_groups(const int8_t* w, const int8_t* x, int cols, int group, int32_t* partial) {
#if defined(ISPSIM_HAVE_AVX2)
  if (g_simd_enabled) return dot_groups_avx2(w, x, cols, group, partial);
#endif
  dot_groups_portable(w, x, cols, group, partial);
}

void gemv_s8(const int8_t* W, const int8_t* x, int rows, int cols, int32_t* y) {
  for (int r = 0; r < rows; ++r) dot_s8_groups(W + static_cast<int64_t>(r) * cols, x, cols, cols, &y[r]);
}

void gemv_s8_grouped(const int8_t* W, const int8_t* x, int rows, int cols, int group, const Dyadic* act_scale,
                     const Dyadic* weight_scale, int32_t* y) {
  gemm_s8_grouped(W, x, 1, rows, cols, group, act_scale, weight_scale, y);
}

void gemm_s8_grouped(const int8_t* W, const int8_t* X, int tokens, int rows, int cols, int group,
                     const Dyadic* act_scale, const Dyadic* weight_scale, int32_t* Y) {
  const int groups = (cols + group - 1) / group;
  std::vector<int32_t> partial(groups);
  // One weight row at a time: blocking four rows to share the loads of x was
  // measured faster in cache but 2-3x slower once the matrix streams from DRAM.
  int r = 0;
  for (; r < rows; ++r) {
    const int8_t* w_row = W + static_cast<int64_t>(r) * cols;
    for (int t = 0; t < tokens; ++t) {
      dot_s8_groups(w_row, X + static_cast<int64_t>(t) * cols, cols, group, partial.data());
      Y[static_cast<int64_t>(t) * rows + r] =
          scaled_sum(partial.data(), groups, group, act_scale + static_cast<int64_t>(t) * groups,
                     weight_scale + static_cast<int64_t>(r) * groups);
    }
  }
}

}  // namespace ispsim::integer
