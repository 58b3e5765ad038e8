// The AMX GEMM kernel, written once over a tile interface (Tiles: the
// EmulatedTiles of amx_tiles.h or the HardwareTiles of amx_tiles_hw.cc) so that
// the blocking, the packed B tiles and the scaling are the same code on both.
// Internal to kernels/int (amx_gemm.cc, amx_tiles_hw.cc).
#pragma once

#include <cstdint>

#include "kernels/int/amx_tiles.h"
#include "kernels/int/gemv_int8.h"

namespace ispsim::integer::amx {

// The input as tile loads read it: rows padded with zeros to a multiple of 16
// tokens, columns to whole groups (stride bytes apart), so that every A tile
// is full and never reads past a row.
struct TileInput {
  const int8_t* data = nullptr;
  int64_t stride = 0;
  int tokens = 0;
};

// sums[t][r] += round(partial[t][r] · act[t].mult · wmult[r], act[t].shift + wshift[r])
// for t < tokens, r < 16 (rows ld_partial / ld_sums apart, act act_stride apart):
// the portable kernel's scaling of one group (scale_add_rows in amx_gemm.cc,
// scale_add_rows_avx512 in gemv_int8_avx512.cc).
using ScaleRowsFn = void (*)(const int32_t* partial, int ld_partial, int tokens, const Dyadic* act, int act_stride,
                             const int64_t* wmult, const int64_t* wshift, int64_t* sums, int ld_sums);

// Bytes along k of one tile multiply: the largest multiple of 4 up to 64 that
// divides the group, so that no multiply straddles two groups' scales.
inline int chunk_bytes(int group) {
  for (int kc = kMaxColsb; kc > 4; kc -= 4)
    if (group % kc == 0) return kc;
  return 4;
}

constexpr int kBlock = 2 * kMaxRows;  // tokens and output rows of one 2 x 2 block of C tiles

template <class Tiles, int NA, int NB>
inline void zero_accumulators() {
  Tiles::template zero<kC00>();
  if constexpr (NB == 2) Tiles::template zero<kC01>();
  if constexpr (NA == 2) Tiles::template zero<kC10>();
  if constexpr (NA == 2 && NB == 2) Tiles::template zero<kC11>();
}

// C[i][j] += A[i] · B[j] for one chunk: A rows are a_stride bytes apart, B[1]
// is the next block of 16 weight rows (block_bytes further).
template <class Tiles, int NA, int NB>
inline void multiply_chunk(const int8_t* a, int64_t a_stride, const int8_t* b, int64_t block_bytes) {
  Tiles::template load<kA0>(a, a_stride);
  if constexpr (NA == 2) Tiles::template load<kA1>(a + kMaxRows * a_stride, a_stride);
  Tiles::template load<kB0>(b, kMaxColsb);
  if constexpr (NB == 2) Tiles::template load<kB1>(b + block_bytes, kMaxColsb);
  Tiles::template dpbssd<kC00, kA0, kB0>();
  if constexpr (NB == 2) Tiles::template dpbssd<kC01, kA0, kB1>();
  if constexpr (NA == 2) Tiles::template dpbssd<kC10, kA1, kB0>();
  if constexpr (NA == 2 && NB == 2) Tiles::template dpbssd<kC11, kA1, kB1>();
}

// C[i][j] to partial[16i + t][16j + r], rows kBlock int32 apart.
template <class Tiles, int NA, int NB>
inline void store_accumulators(int32_t* partial) {
  constexpr int64_t ld = kBlock * sizeof(int32_t), lower = kMaxRows * kBlock;
  Tiles::template store<kC00>(partial, ld);
  if constexpr (NB == 2) Tiles::template store<kC01>(partial + kMaxRows, ld);
  if constexpr (NA == 2) Tiles::template store<kC10>(partial + lower, ld);
  if constexpr (NA == 2 && NB == 2) Tiles::template store<kC11>(partial + lower + kMaxRows, ld);
}

// Tokens [t0, t0 + 16·NA) × output rows [row0, row0 + 16·NB), every group:
// the group's exact int32 partials from the tiles, then its scaled sum.
template <class Tiles, int NA, int NB>
void tile_block(const PackedS8& pk, const TileInput& in, const Dyadic* act, int t0, int row0, int rows_valid,
                int32_t* Y, ScaleRowsFn scale) {
  const int kc = chunk_bytes(pk.group), block = row0 / kMaxRows;
  const int tokens = in.tokens - t0 < kMaxRows * NA ? in.tokens - t0 : kMaxRows * NA;
  const int64_t block_bytes = int64_t{pk.cols_padded} / 4 * kMaxColsb;
  const int8_t* a_rows = in.data + t0 * in.stride;
  const int8_t* b_block = pk.data.data() + block * block_bytes;
  alignas(64) int32_t partial[kBlock * kBlock];
  alignas(64) int64_t sums[kBlock * kBlock] = {};
  for (int g = 0; g < pk.groups; ++g) {
    zero_accumulators<Tiles, NA, NB>();
    for (int k0 = g * pk.group; k0 < (g + 1) * pk.group && k0 < pk.cols; k0 += kc)
      multiply_chunk<Tiles, NA, NB>(a_rows + k0, in.stride, b_block + k0 / 4 * kMaxColsb, block_bytes);
    store_accumulators<Tiles, NA, NB>(partial);
    for (int j = 0; j < NB; ++j) {
      const int64_t at = (int64_t{block + j} * pk.groups + g) * kMaxRows;
      scale(partial + kMaxRows * j, kBlock, tokens, act + int64_t{t0} * pk.groups + g, pk.groups, pk.wmult.data() + at,
            pk.wshift.data() + at, sums + kMaxRows * j, kBlock);
    }
  }
  for (int t = 0; t < tokens; ++t)
    for (int r = 0; r < rows_valid; ++r)
      Y[int64_t{t0 + t} * pk.rows + row0 + r] = saturate_int32(sums[t * kBlock + r]);
}

// Output rows [r0, r1) (r0 a multiple of 16) for every token, on this
// thread's tiles: configured once, released at the end.
template <class Tiles>
void gemm_rows_on_tiles(const PackedS8& pk, const TileInput& in, const Dyadic* act, int r0, int r1, int32_t* Y,
                        ScaleRowsFn scale) {
  Tiles::configure(gemm_tile_config(chunk_bytes(pk.group)));
  for (int row0 = r0; row0 < r1; row0 += kBlock) {
    const int rows = r1 - row0 < kBlock ? r1 - row0 : kBlock;
    for (int t0 = 0; t0 < in.tokens; t0 += kBlock) {
      const bool two_a = in.tokens - t0 > kMaxRows, two_b = rows > kMaxRows;
      if (two_a && two_b) tile_block<Tiles, 2, 2>(pk, in, act, t0, row0, rows, Y, scale);
      else if (two_a) tile_block<Tiles, 2, 1>(pk, in, act, t0, row0, rows, Y, scale);
      else if (two_b) tile_block<Tiles, 1, 2>(pk, in, act, t0, row0, rows, Y, scale);
      else tile_block<Tiles, 1, 1>(pk, in, act, t0, row0, rows, Y, scale);
    }
  }
  Tiles::release();
}

#if defined(ISPSIM_HAVE_AMX)
// gemm_rows_on_tiles on the CPU's tiles (amx_tiles_hw.cc).
void gemm_rows_on_hardware_tiles(const PackedS8& pk, const TileInput& in, const Dyadic* act, int r0, int r1,
                                 int32_t* Y, ScaleRowsFn scale);
#endif

}  // namespace ispsim::integer::amx
