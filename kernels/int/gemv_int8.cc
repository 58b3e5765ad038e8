#include "kernels/int/gemv_int8.h"

#include <cstddef>
#include <vector>

#include "kernels/int/amx_gemm.h"
#include "kernels/int/gemv_int8_avx2.h"
#include "kernels/int/gemv_int8_avx512.h"
#include "kernels/model/cpu_isa.h"
#include "kernels/model/parallel.h"

namespace ispsim::integer {
namespace {
using model::Isa;

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

bool simd_available() { return avx2_supported() && model::isa_supported(Isa::kAvx2); }
void set_simd_enabled(bool enabled) { model::set_active_isa(enabled ? model::best_isa() : Isa::kScalar); }
bool simd_enabled() { return model::active_isa() != Isa::kScalar; }

void dot_s8_groups(const int8_t* w, const int8_t* x, int cols, int group, int32_t* partial) {
#if defined(ISPSIM_HAVE_AVX2)
  if (model::active_isa() >= Isa::kAvx2 && avx2_supported()) return dot_groups_avx2(w, x, cols, group, partial);
#endif
  dot_groups_portable(w, x, cols, group, partial);
}

int64_t dot_s32(const int32_t* a, const int32_t* b, int n) {
#if defined(ISPSIM_HAVE_X86_SIMD)
  if (model::active_isa() >= Isa::kAvx512) return dot_s32_avx512(a, b, n);
#endif
#if defined(ISPSIM_HAVE_AVX2)
  if (model::active_isa() >= Isa::kAvx2 && avx2_supported()) return dot_s32_avx2(a, b, n);
#endif
  int64_t sum = 0;
  for (int i = 0; i < n; ++i) sum += int64_t{a[i]} * b[i];
  return sum;
}

void axpy_s32(int64_t p, const int32_t* v, int n, int64_t* acc) {
#if defined(ISPSIM_HAVE_X86_SIMD)
  if (model::active_isa() >= Isa::kAvx512) return axpy_s32_avx512(p, v, n, acc);
#endif
#if defined(ISPSIM_HAVE_AVX2)
  if (model::active_isa() >= Isa::kAvx2 && avx2_supported()) return axpy_s32_avx2(p, v, n, acc);
#endif
  for (int i = 0; i < n; ++i) acc[i] += p * v[i];
}

void weighted_sum_s32(const int32_t* p, int ldp, int nq, const int32_t* v, int ldv, int nk, int n, int64_t* acc,
                      int ldacc) {
#if defined(ISPSIM_HAVE_X86_SIMD)
  if (model::active_isa() >= Isa::kAvx512) return weighted_sum_s32_avx512(p, ldp, nq, v, ldv, nk, n, acc, ldacc);
#endif
  for (int j = 0; j < nq; ++j) {
    int64_t* out = acc + static_cast<int64_t>(j) * ldacc;
    for (int i = 0; i < n; ++i) out[i] = 0;
    for (int t = 0; t < nk; ++t) axpy_s32(p[static_cast<int64_t>(j) * ldp + t], v + static_cast<int64_t>(t) * ldv, n, out);
  }
}

PackedS8 pack_s8(const int8_t* W, int rows, int cols, int group, const Dyadic* weight_scale) {
  if (!model::isa_supported(Isa::kAvx512)) return PackedS8{};
  return pack_s8_any_cpu(W, rows, cols, group, weight_scale);
}

PackedS8 pack_s8_any_cpu(const int8_t* W, int rows, int cols, int group, const Dyadic* weight_scale) {
  PackedS8 p;
  if (group % 4 != 0 || group > 256 || rows <= 0 || cols <= 0) return p;
  p.rows = rows, p.cols = cols, p.group = group, p.groups = (cols + group - 1) / group;
  p.cols_padded = (cols + 3) / 4 * 4;
  const int blocks = (rows + 15) / 16, kq = p.cols_padded / 4;
  // Zeros past the last block: a tile load of the last group's last chunk
  // reads up to groups · group columns (amx_gemm_kernel.h).
  const int tail_quads = p.groups * group / 4 - kq;
  p.data.assign((static_cast<size_t>(blocks) * kq + tail_quads) * 64, 0);
  p.wsum128.assign(static_cast<size_t>(blocks) * p.groups * 16, 0);
  p.wmult.assign(p.wsum128.size(), 0);
  p.wshift.assign(p.wsum128.size(), 1);
  for (int r = 0; r < rows; ++r) {
    const int b = r / 16, lane = r % 16;
    const int8_t* row = W + static_cast<int64_t>(r) * cols;
    for (int k = 0; k < cols; ++k)
      p.data[(static_cast<size_t>(b) * kq + k / 4) * 64 + lane * 4 + k % 4] = row[k];
    for (int g = 0; g < p.groups; ++g) {
      int32_t sum = 0;
      for (int k = g * group; k < cols && k < (g + 1) * group; ++k) sum += row[k];
      const size_t at = (static_cast<size_t>(b) * p.groups + g) * 16 + lane;
      p.wsum128[at] = 128 * sum;
      p.wmult[at] = weight_scale[static_cast<int64_t>(r) * p.groups + g].mult;
      p.wshift[at] = weight_scale[static_cast<int64_t>(r) * p.groups + g].shift;
    }
  }
  return p;
}

void gemv_s8(const int8_t* W, const int8_t* x, int rows, int cols, int32_t* y) {
  for (int r = 0; r < rows; ++r) dot_s8_groups(W + static_cast<int64_t>(r) * cols, x, cols, cols, &y[r]);
}

void gemv_s8_grouped(const int8_t* W, const int8_t* x, int rows, int cols, int group, const Dyadic* act_scale,
                     const Dyadic* weight_scale, int32_t* y) {
  gemm_s8_grouped(W, x, 1, rows, cols, group, act_scale, weight_scale, y);
}

namespace {
// Rows [r0, r1) on the row-major weights: one weight row at a time against
// every token (blocking four rows to share the loads of x was measured faster
// in cache but 2-3x slower once the matrix streams from DRAM).
void gemm_rows(const int8_t* W, const int8_t* X, int tokens, int rows, int cols, int group, const Dyadic* act_scale,
               const Dyadic* weight_scale, int32_t* Y, int r0, int r1) {
  const int groups = (cols + group - 1) / group;
  std::vector<int32_t> partial(groups);
  for (int r = r0; r < r1; ++r) {
    const int8_t* w_row = W + static_cast<int64_t>(r) * cols;
    for (int t = 0; t < tokens; ++t) {
      dot_s8_groups(w_row, X + static_cast<int64_t>(t) * cols, cols, group, partial.data());
      Y[static_cast<int64_t>(t) * rows + r] =
          scaled_sum(partial.data(), groups, group, act_scale + static_cast<int64_t>(t) * groups,
                     weight_scale + static_cast<int64_t>(r) * groups);
    }
  }
}

thread_local std::vector<uint8_t> t_biased;  // X + 128 for the VNNI kernel (reused between calls)
}  // namespace

void gemm_s8_grouped(const int8_t* W, const int8_t* X, int tokens, int rows, int cols, int group,
                     const Dyadic* act_scale, const Dyadic* weight_scale, int32_t* Y, const PackedS8* packed) {
  if (packed && !packed->empty() && tokens >= kAmxMinTokens && model::active_isa() >= Isa::kAmx && amx_hardware_built())
    return gemm_s8_tiles(*packed, X, tokens, act_scale, Y, TileBackend::kHardware);
#if defined(ISPSIM_HAVE_X86_SIMD)
  if (packed && !packed->empty() && model::active_isa() >= Isa::kAvx512) {
    const int stride = packed->cols_padded;
    t_biased.assign(static_cast<size_t>(tokens) * stride, 0x80);
    for (int t = 0; t < tokens; ++t)
      for (int k = 0; k < cols; ++k)
        t_biased[static_cast<size_t>(t) * stride + k] = static_cast<uint8_t>(X[static_cast<int64_t>(t) * cols + k] ^ 0x80);
    const uint8_t* xb = t_biased.data();
    model::parallel_for(rows, 16, [&](int r0, int r1) { gemm_s8_packed_avx512(*packed, xb, tokens, act_scale, r0, r1, Y); });
    return;
  }
#endif
  model::parallel_for(rows, 16, [&](int r0, int r1) {
    gemm_rows(W, X, tokens, rows, cols, group, act_scale, weight_scale, Y, r0, r1);
  });
}

}  // namespace ispsim::integer
