#include "kernels/rag/fnv1a.h"

namespace ispsim::rag {

std::string hex64(uint64_t value) {
  static const char kDigits[] = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, value >>= 4) s[i] = kDigits[value & 15];
  return s;
}

}  // namespace ispsim::rag
