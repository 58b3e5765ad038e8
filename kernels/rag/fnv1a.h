// FNV-1a, 64-bit (Fowler/Noll/Vo; offset basis 14695981039346656037, prime
// 1099511628211): the checksum of store tiles and the model fingerprint. Not
// cryptographic; it detects corruption and mismatched models, not tampering.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace ispsim::rag {

constexpr uint64_t kFnvOffsetBasis = 14695981039346656037ull;
constexpr uint64_t kFnvPrime = 1099511628211ull;

// Continues hash `h` over n bytes; start with kFnvOffsetBasis.
inline uint64_t fnv1a64(const void* data, size_t n, uint64_t h = kFnvOffsetBasis) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= kFnvPrime;
  }
  return h;
}

inline uint64_t fnv1a64(const std::string& s, uint64_t h = kFnvOffsetBasis) { return fnv1a64(s.data(), s.size(), h); }

// 16 lower-case hex digits.
std::string hex64(uint64_t value);

}  // namespace ispsim::rag
