#include "common/crc32c.h"

#include <array>
#include <cstring>

namespace ispsim {
namespace {

constexpr uint32_t kPolynomial = 0x82F63B78u;  // reflected Castagnoli

std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ ((c & 1u) ? kPolynomial : 0u);
    table[i] = c;
  }
  return table;
}

uint32_t crc32c_portable(const unsigned char* p, size_t size, uint32_t state) {
  static const std::array<uint32_t, 256> table = make_table();
  for (size_t i = 0; i < size; ++i) state = table[(state ^ p[i]) & 0xFFu] ^ (state >> 8);
  return state;
}

#if defined(__x86_64__)
// The SSE4.2 crc32 instruction computes exactly this polynomial, 8 bytes at a time.
__attribute__((target("sse4.2"))) uint32_t crc32c_sse42(const unsigned char* p, size_t size, uint32_t state) {
  uint64_t s = state;
  for (; size >= 8; size -= 8, p += 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    s = __builtin_ia32_crc32di(s, word);
  }
  auto s32 = static_cast<uint32_t>(s);
  for (; size > 0; --size, ++p) s32 = __builtin_ia32_crc32qi(s32, *p);
  return s32;
}
#endif

}  // namespace

uint32_t crc32c(const void* data, size_t size, uint32_t crc) {
  const auto* p = static_cast<const unsigned char*>(data);
  const uint32_t state = ~crc;
#if defined(__x86_64__)
  static const bool have_sse42 = __builtin_cpu_supports("sse4.2");
  if (have_sse42) return ~crc32c_sse42(p, size, state);
#endif
  return ~crc32c_portable(p, size, state);
}

}  // namespace ispsim
