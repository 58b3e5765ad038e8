#include "kernels/int/int_attention.h"

#include "kernels/int/fixed_point.h"
#include "kernels/int/gemv_int8_avx2.h"
#include "kernels/int/gemv_int8_avx512.h"
#include "kernels/int/int_exp.h"
#include "kernels/int/requant.h"
#include "kernels/model/cpu_isa.h"

namespace ispsim::integer {
namespace {
using model::Isa;

void score_tiles_portable(const int32_t* q, int ldq, int nq, const int32_t* key_tiles, int head_dim, int tiles,
                          int64_t* s, int lds) {
  for (int j = 0; j < nq; ++j)
    for (int b = 0; b < tiles; ++b) {
      int64_t acc[kKeyTile] = {};
      const int32_t* tile = key_tiles + static_cast<size_t>(b) * head_dim * kKeyTile;
      for (int i = 0; i < head_dim; ++i) {
        const int64_t qi = q[static_cast<size_t>(j) * ldq + i];
        for (int c = 0; c < kKeyTile; ++c) acc[c] += qi * tile[i * kKeyTile + c];
      }
      for (int c = 0; c < kKeyTile; ++c) s[static_cast<size_t>(j) * lds + b * kKeyTile + c] = acc[c];
    }
}

ScoreMax row_max(const int64_t* s, int n) {
  ScoreMax m;
  for (int t = 0; t < n; ++t) {
    m.abs = abs64(s[t]) > m.abs ? abs64(s[t]) : m.abs;
    m.value = s[t] > m.value ? s[t] : m.value;
  }
  return m;
}
}  // namespace

void score_tiles_s32(const int32_t* q, int ldq, int nq, const int32_t* key_tiles, int head_dim, int tiles,
                     const int* len, int64_t* s, int lds, ScoreMax* max) {
#if defined(ISPSIM_HAVE_X86_SIMD)
  if (model::active_isa() >= Isa::kAvx512)
    return score_tiles_s32_avx512(q, ldq, nq, key_tiles, head_dim, tiles, len, s, lds, max);
#endif
#if defined(ISPSIM_HAVE_AVX2)
  if (model::active_isa() >= Isa::kAvx2 && avx2_supported()) {
    score_tiles_s32_avx2(q, ldq, nq, key_tiles, head_dim, tiles, s, lds);
  } else
#endif
  {
    score_tiles_portable(q, ldq, nq, key_tiles, head_dim, tiles, s, lds);
  }
  for (int j = 0; j < nq; ++j) max[j] = row_max(s + static_cast<size_t>(j) * lds, len[j]);
}

void scores_to_probs(const int64_t* s, int n, const ScoreMax& max, int bits, int frac_bits, int register_bits,
                     int32_t* probs) {
#if defined(ISPSIM_HAVE_X86_SIMD)
  if (model::active_isa() >= Isa::kAvx512 && register_bits == 64)
    return scores_to_probs_avx512(s, n, max.abs, max.value, bits, frac_bits, probs);
#endif
  // The reference: the two operators on the whole row (probs doubles as the requantized row).
  const int shift = requantize_token(s, n, bits, probs);
  if (register_bits == 32)
    int_softmax_reg32(probs, n, frac_bits - shift, probs);
  else
    int_softmax(probs, n, frac_bits - shift, probs, 30);
}

}  // namespace ispsim::integer
