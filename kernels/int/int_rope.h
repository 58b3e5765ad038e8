// Integer rotary position embedding from fixed-point cos/sin tables.
//
// Half rotation (the Hugging Face Llama/Qwen layout): element i pairs with
// element i + head_dim/2. Tables hold cos and sin of position * inv_freq[i]
// as Q30 integers, [position][head_dim/2]; rope_table.h builds them at load.
#pragma once

#include <cstdint>

namespace ispsim::integer {

// Rotates one head vector x[head_dim] in place for the position whose table
// rows are cos_q30/sin_q30 (head_dim/2 entries each). Scale is unchanged.
void int_rope(int32_t* x, int head_dim, const int32_t* cos_q30, const int32_t* sin_q30);

}  // namespace ispsim::integer
