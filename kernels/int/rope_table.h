// Fixed-point RoPE tables, built once at model load. This is float code (cos,
// sin) and deliberately lives outside the integer kernels; the integer path
// only reads the finished Q30 tables.
#pragma once

#include <cstdint>
#include <vector>

namespace ispsim::integer {

struct RopeTable {
  int half_dim = 0;
  int positions = 0;
  std::vector<int32_t> cos_q30;  // [positions][half_dim]
  std::vector<int32_t> sin_q30;  // [positions][half_dim]
  const int32_t* cos_row(int position) const { return cos_q30.data() + static_cast<int64_t>(position) * half_dim; }
  const int32_t* sin_row(int position) const { return sin_q30.data() + static_cast<int64_t>(position) * half_dim; }
};

// Angles position * inv_freq[i] for i < inv_freq.size() (= head_dim/2); the
// inverse frequencies come from the model config (incl. any RoPE scaling).
RopeTable build_rope_table(const std::vector<double>& inv_freq, int positions);

}  // namespace ispsim::integer
