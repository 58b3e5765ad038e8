#include "kernels/int/int_norm.h"

#include "kernels/int/fixed_point.h"
#include "kernels/int/gemv_int8_avx2.h"
#include "kernels/int/int_norm_simd.h"
#include "kernels/model/cpu_isa.h"

namespace ispsim::integer {

uint64_t isqrt(uint64_t n) {
  if (n < 2) return n;
  uint64_t x = uint64_t{1} << ((bit_length(n) + 1) / 2);  // >= sqrt(n)
  while (true) {
    uint64_t y = (x + n / x) / 2;  // Newton step; decreases monotonically to floor(sqrt(n))
    if (y >= x) return x;
    x = y;
  }
}

namespace {
constexpr int kNormFracBits = 24;  // x / rms is at most sqrt(n) <= 2^7, so Q24 fits 31 bits

// The vector kernels of the active level (int_norm_simd.h), or null at the
// scalar level; every level gives the scalar results bit for bit.
struct VectorKernels {
  SquareSums (*square_sums)(const int32_t*, int);
  void (*scale)(const int32_t*, int, int64_t, int, const int32_t*, int, const int32_t*, int32_t*);
  uint32_t (*max_square)(const int32_t*, int);
  uint32_t (*guarded_square_sum)(const int32_t*, int, int);
};

const VectorKernels* vector_kernels() {
#if defined(ISPSIM_HAVE_X86_SIMD)
  static constexpr VectorKernels kAvx512{square_sums_avx512, norm_scale_avx512, max_square_u32_avx512,
                                         guarded_square_sum_avx512};
  if (model::active_isa() >= model::Isa::kAvx512) return &kAvx512;
#endif
#if defined(ISPSIM_HAVE_AVX2)
  static constexpr VectorKernels kAvx2{square_sums_avx2, norm_scale_avx2, max_square_u32_avx2, guarded_square_sum_avx2};
  if (model::active_isa() >= model::Isa::kAvx2 && avx2_supported()) return &kAvx2;
#endif
  return nullptr;
}

SquareSums square_sums(const int32_t* v, int n) {
  if (const VectorKernels* k = vector_kernels()) return k->square_sums(v, n);
  SquareSums r;
  for (int i = 0; i < n; ++i) {
    r.sumsq += static_cast<unsigned __int128>(int64_t{v[i]} * v[i]);
    const uint64_t a = static_cast<uint64_t>(abs64(v[i]));
    r.max_abs = a > r.max_abs ? a : r.max_abs;
  }
  return r;
}

// out[i] = saturate_int32(round_shift(clamp_int32(round_shift(v[i] · mult, shift1)) · gamma[i], shift2) + beta[i])
// at a vector level, when the shifts are in [1, 62]; the caller guarantees
// |v[i] · mult| + 2^(shift1−1) < 2^63 for shift1 <= 32 (int_norm_simd.h).
// False: the caller runs its scalar loop.
bool norm_scale(const int32_t* v, int n, int64_t mult, int shift1, const NormWeights& w, int shift2, int32_t* out) {
  const VectorKernels* k = vector_kernels();
  if (!k || shift1 < 1 || shift1 > 62 || shift2 < 1 || shift2 > 62) return false;
  k->scale(v, n, mult, shift1, w.gamma, shift2, w.beta, out);
  return true;
}

// True when every v · reciprocal, |v| <= max_abs, rounds to int32 (and, for
// shifts of at most 32, stays within int64 on the way: norm_scale_* splits
// the product above), so that the 64-bit vector lanes compute what the scalar
// 128-bit products do.
bool fits_64bit_lanes(uint64_t max_abs, int64_t reciprocal, int shift) {
  if (shift < 1 || shift > 62) return false;
  const unsigned __int128 top = static_cast<unsigned __int128>(max_abs) * static_cast<uint64_t>(reciprocal);
  return (shift >= 33 || top + (uint64_t{1} << (shift - 1)) < (static_cast<unsigned __int128>(1) << 62)) &&
         (top >> shift) + 1 < (uint64_t{1} << 31) - 1;
}

int bit_length128(unsigned __int128 x) {
  uint64_t hi = static_cast<uint64_t>(x >> 64);
  return hi ? 64 + bit_length(hi) : bit_length(static_cast<uint64_t>(x));
}

// Shared tail of both norms. v[i] are the values in units of 2^-frac_bits / unit,
// sumsq their sum of squares; eps is added to the mean square. Writes
// v / rms * gamma (+ beta) with out_frac_bits.
void normalize(const int32_t* v, int n, int frac_bits, int64_t unit, const SquareSums& squares, const NormWeights& w,
               int32_t* out, int out_frac_bits) {
  const unsigned __int128 sumsq = squares.sumsq;
  // eps in units of v^2, kept in Q40 (eps * 2^40 * 2^(2 frac_bits) * unit^2 / 2^40).
  const unsigned __int128 eps_q40 = static_cast<unsigned __int128>(w.eps_q40) * static_cast<uint64_t>(unit * unit);
  const int eps_shift = 40 - 2 * frac_bits;  // eps in v^2 units = eps_q40 >> eps_shift
  const unsigned __int128 eps_units = eps_shift >= 0 ? eps_q40 >> eps_shift : eps_q40 << -eps_shift;
  // Scale the sum by an even power of two 2^s so that it holds ~61 bits: the
  // root then has ~30 significant bits, and eps is added at that finer scale.
  int s = 61 - bit_length128(sumsq + eps_units * static_cast<unsigned>(n));
  s -= s & 1;
  unsigned __int128 total = s >= 0 ? sumsq << s : sumsq >> -s;
  const int eps_total_shift = eps_shift - s;
  total += static_cast<unsigned __int128>(n) *
           (eps_total_shift >= 0 ? eps_q40 >> eps_total_shift : eps_q40 << -eps_total_shift);
  if (total == 0) {  // all-zero input and eps below resolution: the norm is zero
    for (int i = 0; i < n; ++i) out[i] = w.beta ? w.beta[i] : 0;
    return;
  }
  uint64_t mean_scaled = static_cast<uint64_t>(total / static_cast<unsigned>(n));  // < 2^62
  uint64_t root = isqrt(mean_scaled);  // rms * 2^(frac_bits + s/2) in v units
  if (root == 0) root = 1;
  int64_t reciprocal = static_cast<int64_t>((uint64_t{1} << 62) / root);  // the fixed-point 1/rms
  const int shift1 = 62 - s / 2 - kNormFracBits, shift2 = kNormFracBits + w.gamma_frac_bits - out_frac_bits;
  if (fits_64bit_lanes(squares.max_abs, reciprocal, shift1) && norm_scale(v, n, reciprocal, shift1, w, shift2, out))
    return;
  for (int i = 0; i < n; ++i) {
    int64_t normalized = round_shift128(static_cast<__int128>(v[i]) * reciprocal, shift1);
    int64_t scaled = round_shift128(static_cast<__int128>(normalized) * w.gamma[i], shift2);
    if (w.beta) scaled += w.beta[i];
    out[i] = saturate_int32(scaled);
  }
}
}  // namespace

void int_rmsnorm(const int32_t* x, int n, int frac_bits, const NormWeights& w, int32_t* out, int out_frac_bits) {
  normalize(x, n, frac_bits, 1, square_sums(x, n), w, out, out_frac_bits);
}

void int_layernorm(const int32_t* x, int n, int frac_bits, const NormWeights& w, int32_t* out, int out_frac_bits) {
  // Exact centring without a rounded mean: c = n * x - sum, in units of 2^-frac_bits / n.
  // |c| < 2 * 2^16 * n fits int32 for n <= 2^14; out doubles as scratch for c.
  int64_t sum = 0;
  for (int i = 0; i < n; ++i) sum += x[i];
  for (int i = 0; i < n; ++i) out[i] = static_cast<int32_t>(int64_t{x[i]} * n - sum);
  normalize(out, n, frac_bits, n, square_sums(out, n), w, out, out_frac_bits);
}

namespace {
// max (uint32) x², and Σ ((uint32) x² >> guard) in uint32, at the active level.
uint32_t max_square_u32(const int32_t* x, int n) {
  if (const VectorKernels* k = vector_kernels()) return k->max_square(x, n);
  uint32_t max_sq = 0;
  for (int i = 0; i < n; ++i) {
    const uint32_t sq = static_cast<uint32_t>(int64_t{x[i]} * x[i]);
    max_sq = sq > max_sq ? sq : max_sq;
  }
  return max_sq;
}

uint32_t guarded_square_sum(const int32_t* x, int n, int guard) {
  if (const VectorKernels* k = vector_kernels()) return k->guarded_square_sum(x, n, guard);
  uint32_t sum = 0;
  for (int i = 0; i < n; ++i) sum += static_cast<uint32_t>(int64_t{x[i]} * x[i]) >> guard;
  return sum;
}

// x / rms(x) · gamma (+ beta) with every register at most 32 bits wide; |x| < 2^16.
void normalize_reg32(const int32_t* x, int n, int frac_bits, const NormWeights& w, int32_t* out, int out_frac_bits) {
  const uint32_t max_sq = max_square_u32(x, n);
  int guard = bit_length(max_sq) + bit_length(static_cast<uint64_t>(n)) - 31;
  guard = guard < 0 ? 0 : guard + (guard & 1);
  const uint32_t sum = guarded_square_sum(x, n, guard);  // n · max_sq / 2^guard < 2^31
  // eps in units of 2^guard · 2^-2 frac_bits, like the mean.
  const int eps_shift = 40 - 2 * frac_bits + guard;
  const int64_t eps = round_shift(w.eps_q40, eps_shift);  // a left shift for fine formats (frac_bits > 20)
  const uint32_t mean = static_cast<uint32_t>(clamp64(int64_t{sum / static_cast<uint32_t>(n)} + eps, 0, INT32_MAX));
  if (mean == 0) {
    for (int i = 0; i < n; ++i) out[i] = w.beta ? w.beta[i] : 0;
    return;
  }
  int up = 30 - bit_length(mean);
  up -= up & 1;  // even, so that the root scales by 2^(up/2)
  const uint32_t scaled = up >= 0 ? mean << up : mean >> -up;
  const uint32_t root = static_cast<uint32_t>(isqrt(scaled));  // rms · 2^((up - guard)/2) in x units, >= 2^14
  const uint32_t reciprocal = static_cast<uint32_t>(((uint64_t{1} << 45) - 1) / root);  // < 2^31
  // x / rms in Q24 = x · reciprocal · 2^(24 - 45 + (up - guard)/2).
  const int shift = 21 - (up - guard) / 2, shift_out = kNormFracBits + w.gamma_frac_bits - out_frac_bits;
  if (norm_scale(x, n, reciprocal, shift, w, shift_out, out)) return;  // |x · reciprocal| < 2^62
  for (int i = 0; i < n; ++i) {
    const int64_t normalized = clamp64(round_shift(int64_t{x[i]} * reciprocal, shift), INT32_MIN, INT32_MAX);
    int64_t scaled_out = round_shift(normalized * w.gamma[i], shift_out);
    if (w.beta) scaled_out += w.beta[i];
    out[i] = saturate_int32(scaled_out);
  }
}
}  // namespace

void int_rmsnorm_reg32(const int32_t* x, int n, int frac_bits, const NormWeights& w, int32_t* out, int out_frac_bits) {
  normalize_reg32(x, n, frac_bits, w, out, out_frac_bits);
}

void int_layernorm_reg32(const int32_t* x, int n, int frac_bits, const NormWeights& w, int32_t* out,
                         int out_frac_bits) {
  int32_t sum = 0;  // |x| < 2^16, n <= 2^14
  for (int i = 0; i < n; ++i) sum += x[i];
  const int32_t mean = static_cast<int32_t>(div_round(sum, n));
  for (int i = 0; i < n; ++i) out[i] = x[i] - mean;  // out doubles as scratch for the centred row
  normalize_reg32(out, n, frac_bits, w, out, out_frac_bits);
}

}  // namespace ispsim::integer
