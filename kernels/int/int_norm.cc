#include "kernels/int/int_norm.h"

#include "kernels/int/fixed_point.h"

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

int bit_length128(unsigned __int128 x) {
  uint64_t hi = static_cast<uint64_t>(x >> 64);
  return hi ? 64 + bit_length(hi) : bit_length(static_cast<uint64_t>(x));
}

// Shared tail of both norms. v[i] are the values in units of 2^-frac_bits / unit,
// sumsq their sum of squares; eps is added to the mean square. Writes
// v / rms * gamma (+ beta) with out_frac_bits.
void normalize(const int32_t* v, int n, int frac_bits, int64_t unit, unsigned __int128 sumsq, const NormWeights& w,
               int32_t* out, int out_frac_bits) {
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
  for (int i = 0; i < n; ++i) {
    int64_t normalized = round_shift128(static_cast<__int128>(v[i]) * reciprocal, 62 - s / 2 - kNormFracBits);
    int64_t scaled =
        round_shift128(static_cast<__int128>(normalized) * w.gamma[i], kNormFracBits + w.gamma_frac_bits - out_frac_bits);
    if (w.beta) scaled += w.beta[i];
    out[i] = saturate_int32(scaled);
  }
}
}  // namespace

void int_rmsnorm(const int32_t* x, int n, int frac_bits, const NormWeights& w, int32_t* out, int out_frac_bits) {
  int64_t sumsq = 0;
  for (int i = 0; i < n; ++i) sumsq += int64_t{x[i]} * x[i];
  normalize(x, n, frac_bits, 1, static_cast<unsigned __int128>(sumsq), w, out, out_frac_bits);
}

void int_layernorm(const int32_t* x, int n, int frac_bits, const NormWeights& w, int32_t* out, int out_frac_bits) {
  // Exact centring without a rounded mean: c = n * x - sum, in units of 2^-frac_bits / n.
  // |c| < 2 * 2^16 * n fits int32 for n <= 2^14; out doubles as scratch for c.
  int64_t sum = 0;
  for (int i = 0; i < n; ++i) sum += x[i];
  unsigned __int128 sumsq = 0;
  for (int i = 0; i < n; ++i) {
    int64_t c = int64_t{x[i]} * n - sum;
    out[i] = static_cast<int32_t>(c);
    sumsq += static_cast<unsigned __int128>(c * c);
  }
  normalize(out, n, frac_bits, n, sumsq, w, out, out_frac_bits);
}

namespace {
// x / rms(x) · gamma (+ beta) with every register at most 32 bits wide; |x| < 2^16.
void normalize_reg32(const int32_t* x, int n, int frac_bits, const NormWeights& w, int32_t* out, int out_frac_bits) {
  uint32_t max_sq = 0;
  for (int i = 0; i < n; ++i) {
    const uint32_t sq = static_cast<uint32_t>(int64_t{x[i]} * x[i]);
    max_sq = sq > max_sq ? sq : max_sq;
  }
  int guard = bit_length(max_sq) + bit_length(static_cast<uint64_t>(n)) - 31;
  guard = guard < 0 ? 0 : guard + (guard & 1);
  uint32_t sum = 0;  // n · max_sq / 2^guard < 2^31
  for (int i = 0; i < n; ++i) sum += static_cast<uint32_t>(int64_t{x[i]} * x[i]) >> guard;
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
  const int shift = 21 - (up - guard) / 2;
  for (int i = 0; i < n; ++i) {
    const int64_t normalized = clamp64(round_shift(int64_t{x[i]} * reciprocal, shift), INT32_MIN, INT32_MAX);
    int64_t scaled_out = round_shift(normalized * w.gamma[i], kNormFracBits + w.gamma_frac_bits - out_frac_bits);
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
