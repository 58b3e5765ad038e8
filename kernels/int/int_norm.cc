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

}  // namespace ispsim::integer
