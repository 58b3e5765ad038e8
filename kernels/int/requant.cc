#include "kernels/int/requant.h"

#include "kernels/int/gemv_int8_avx2.h"
#include "kernels/int/gemv_int8_avx512.h"
#include "kernels/int/int_norm_simd.h"
#include "kernels/model/cpu_isa.h"

namespace ispsim::integer {

int requant_shift(int64_t max_abs, int bits) {
  // max_abs < 2^b, so shift = b - (bits - 1) is the smallest that fits, unless
  // rounding carries max_abs up to 2^(bits-1).
  const int64_t limit = (int64_t{1} << (bits - 1)) - 1;
  int shift = bit_length(static_cast<uint64_t>(max_abs)) - (bits - 1);
  while (round_shift(max_abs, shift) > limit) ++shift;
  return shift;
}

namespace {
template <typename T>
int requantize(const T* x, int n, int bits, int32_t* out) {
  int64_t max_abs = 0;
  for (int i = 0; i < n; ++i) max_abs = abs64(x[i]) > max_abs ? abs64(x[i]) : max_abs;
  const int64_t limit = (int64_t{1} << (bits - 1)) - 1;
  if (max_abs == 0) {
    for (int i = 0; i < n; ++i) out[i] = 0;
    return 0;
  }
  const int shift = requant_shift(max_abs, bits);
  for (int i = 0; i < n; ++i) out[i] = static_cast<int32_t>(clamp64(round_shift(x[i], shift), -limit, limit));
  return shift;
}
}  // namespace

int requantize_token(const int64_t* x, int n, int bits, int32_t* out) { return requantize(x, n, bits, out); }
int requantize_token(const int32_t* x, int n, int bits, int32_t* out) {
#if defined(ISPSIM_HAVE_X86_SIMD)
  if (model::active_isa() >= model::Isa::kAvx512 && bits <= 31) return requantize_token_avx512(x, n, bits, out);
#endif
#if defined(ISPSIM_HAVE_AVX2)
  if (model::active_isa() >= model::Isa::kAvx2 && avx2_supported() && bits <= 31)
    return requantize_token_avx2(x, n, bits, out);
#endif
  return requantize(x, n, bits, out);
}

Dyadic int8_scale_for_max(int64_t max_abs) {
  // max_abs in [2^(b-1), 2^b): with shift = 21 - b, mult = round(max_abs * 2^shift
  // / 127) lands in [8256, 16513], i.e. 13-14 significant bits.
  int shift = 21 - bit_length(static_cast<uint64_t>(max_abs));
  int64_t mult = shift >= 0 ? div_round(max_abs << shift, 127) : div_round(max_abs, int64_t{127} << -shift);
  Dyadic d;
  d.mult = static_cast<int32_t>(mult);
  d.shift = shift;
  return d;
}

void quantize_groups_int8(const int32_t* x, int n, int group, int8_t* q, Dyadic* scales) {
#if defined(ISPSIM_HAVE_X86_SIMD)
  if (model::active_isa() >= model::Isa::kAvx512) return quantize_groups_int8_avx512(x, n, group, q, scales);
#endif
  for (int start = 0, g = 0; start < n; start += group, ++g) {
    int end = start + group < n ? start + group : n;
    int64_t max_abs = 0;
    for (int i = start; i < end; ++i) max_abs = abs64(x[i]) > max_abs ? abs64(x[i]) : max_abs;
    if (max_abs == 0) {
      for (int i = start; i < end; ++i) q[i] = 0;
      scales[g] = Dyadic{};
      continue;
    }
    // div_round(x·127, max_abs) without a division per element: |x|·127 +
    // floor(max_abs/2) < 128·max_abs < 2^(L+7), L = bit_length(max_abs).
    const InvariantDivisor by_max = invariant_divisor(static_cast<uint64_t>(max_abs),
                                                      bit_length(static_cast<uint64_t>(max_abs)) + 7);
    const uint64_t half = static_cast<uint64_t>(max_abs / 2);
    for (int i = start; i < end; ++i) {
      const int64_t magnitude = static_cast<int64_t>(divide(static_cast<uint64_t>(abs64(x[i])) * 127 + half, by_max));
      q[i] = saturate_int8(x[i] < 0 ? -magnitude : magnitude);
    }
    scales[g] = int8_scale_for_max(max_abs);
  }
}

}  // namespace ispsim::integer
