// Fixed-point helpers shared by the integer kernels: rounding shifts,
// saturation and dyadic numbers (mult * 2^-shift). Integer-only by design;
// this header is compiled under -mgeneral-regs-only with the kernels.
#pragma once

#include <cstdint>

namespace ispsim::integer {

// x / 2^shift rounded to nearest (ties towards +infinity); a negative shift
// multiplies by 2^-shift instead.
inline int64_t round_shift(int64_t x, int shift) {
  if (shift <= 0) return x * (int64_t{1} << -shift);
  if (shift >= 63) return 0;
  return (x + (int64_t{1} << (shift - 1))) >> shift;
}

// Same for a 128-bit product, used where a 64-bit intermediate could overflow.
inline int64_t round_shift128(__int128 x, int shift) {
  if (shift <= 0) return static_cast<int64_t>(x * (static_cast<__int128>(1) << -shift));
  if (shift >= 127) return 0;
  return static_cast<int64_t>((x + (static_cast<__int128>(1) << (shift - 1))) >> shift);
}

inline int64_t clamp64(int64_t x, int64_t lo, int64_t hi) { return x < lo ? lo : (x > hi ? hi : x); }
inline int32_t saturate_int32(int64_t x) { return static_cast<int32_t>(clamp64(x, INT32_MIN, INT32_MAX)); }
inline int16_t saturate_int16(int64_t x) { return static_cast<int16_t>(clamp64(x, -32767, 32767)); }
// INT8 values are kept symmetric in [-127, 127]: the AVX2 dot product relies on it.
inline int8_t saturate_int8(int64_t x) { return static_cast<int8_t>(clamp64(x, -127, 127)); }

inline int64_t abs64(int64_t x) { return x < 0 ? -x : x; }

// Number of bits needed to hold x (0 for 0): bit_length(1) = 1, bit_length(255) = 8.
inline int bit_length(uint64_t x) { return x == 0 ? 0 : 64 - __builtin_clzll(x); }

// Integer division rounded to nearest (ties away from zero); d > 0.
inline int64_t div_round(int64_t n, int64_t d) { return n >= 0 ? (n + d / 2) / d : -((-n + d / 2) / d); }

// Division by a divisor known in advance, as one multiply and a shift (the
// round-up method of Granlund & Montgomery, PLDI 1994, Theorem 4.2): with
// L = bit_length(d), k = bits + L and magic = ceil(2^k / d), magic·d lies in
// [2^k, 2^k + 2^L), so floor(a·magic / 2^k) = floor(a / d) exactly for every
// 0 <= a < 2^bits. magic <= 2^(bits+1) + 1, so bits <= 62.
struct InvariantDivisor {
  uint64_t magic = 0;
  int shift = 0;
};
inline InvariantDivisor invariant_divisor(uint64_t d, int bits) {
  const int k = bits + bit_length(d);
  const unsigned __int128 power = static_cast<unsigned __int128>(1) << k;
  return InvariantDivisor{static_cast<uint64_t>((power + d - 1) / d), k};
}
inline uint64_t divide(uint64_t a, const InvariantDivisor& by) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(a) * by.magic) >> by.shift);
}

// A dyadic number mult * 2^-shift: how the integer path represents every
// real-valued scale factor. mult is kept below 2^31.
struct Dyadic {
  int32_t mult = 0;
  int32_t shift = 0;
};

// x * d, rounded, as a 64-bit integer.
inline int64_t apply(const Dyadic& d, int64_t x) { return round_shift128(static_cast<__int128>(x) * d.mult, d.shift); }

}  // namespace ispsim::integer
