// The integer engine's causal attention in tiles of queries × keys, exact.
//
// FP32 flash attention rescales its running sum and output whenever the
// running max grows. The integer path cannot: i-exp of a score minus a new
// max is not a shift of i-exp minus the old one, and every probability is
// rounded once the row's sum is known. So the reductions are exact integers
// instead, in two sweeps over the key tiles: the first computes the int64
// scores and each row's running max and max |score| (which fix the token-wise
// requantization shift and the Softmax max); the second requantizes, takes
// i-exp and the exact int64 sum, and the probabilities follow. The result is
// bit for bit requantize_token + int_softmax on the whole row.
//
// Keys are kept tile-transposed: tile b of a KV head holds keys [16b, 16b + 16)
// as [head_dim][16], so a score tile is 16 keys in vector lanes with no
// horizontal sums, each key row loaded once for a tile of queries.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ispsim::integer {

constexpr int kKeyTile = 16;

// Index of element i of key t in a KV head's tile-transposed keys.
inline size_t key_tile_index(int t, int i, int head_dim) {
  return (static_cast<size_t>(t / kKeyTile) * head_dim + i) * kKeyTile + t % kKeyTile;
}

// A row's maxima over its first len scores: max |s| and max s.
struct ScoreMax {
  int64_t abs = 0;
  int64_t value = INT64_MIN;
};

// s[j][t] = q[j]·k[t] (exact int64, head_dim elements) for j < nq and every key
// of `tiles` key tiles (t < 16·tiles; rows lds >= 16·tiles apart), and each
// row's maxima over its keys t < len[j] (len[j] >= 1).
void score_tiles_s32(const int32_t* q, int ldq, int nq, const int32_t* key_tiles, int head_dim, int tiles,
                     const int* len, int64_t* s, int lds, ScoreMax* max);

// Softmax probabilities (Q30) of one row of n >= 1 scores with frac_bits
// fractional bits: requantize_token(s, n, bits) then int_softmax, fused, using
// the row's maxima from score_tiles_s32 (register_bits 32: int_softmax_reg32).
void scores_to_probs(const int64_t* s, int n, const ScoreMax& max, int bits, int frac_bits, int register_bits,
                     int32_t* probs);

}  // namespace ispsim::integer
