// The AMX tile state as the INT8 GEMM uses it: the 64-byte tile configuration
// and a scalar emulation of the four instructions the kernel needs. The same
// kernel (amx_gemm_kernel.h) runs on the emulation everywhere and on the real
// tiles (amx_tiles_hw.cc) where the CPU has AMX-INT8.
//
// Semantics follow the Intel 64 and IA-32 Architectures Software Developer's
// Manual, Vol. 2: LDTILECFG (the memory format and its #GP conditions),
// TILELOADD, TILESTORED, TILEZERO, and TDPBSSD ("Dot Product of
// Signed/Unsigned Bytes with Dword Accumulation", its Operation section:
// per output dword, four sign-extended int8 x int8 products added to the
// accumulator in 32-bit arithmetic), with the shape checks of exception class
// AMX-E4 (Vol. 2A, Section 2.10, "Intel AMX Instruction Exception Classes").
// Palette 1: eight tiles of at most 16 rows x 64 bytes.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <type_traits>

namespace ispsim::integer::amx {

constexpr int kTiles = 8, kMaxRows = 16, kMaxColsb = 64;

// The LDTILECFG memory operand: byte 0 palette, 1 start_row, 16 + 2t tile t's
// bytes per row (little-endian uint16), 48 + t its rows; every other byte is
// reserved and must be zero. Kept as raw bytes so that whoever loads it
// (ldtilecfg, the emulation) reads the same 64 bytes.
struct alignas(64) TileConfig {
  uint8_t bytes[64] = {};
  void set(int tile, int rows, int colsb) {
    bytes[16 + 2 * tile] = static_cast<uint8_t>(colsb & 0xFF);
    bytes[17 + 2 * tile] = static_cast<uint8_t>(colsb >> 8);
    bytes[48 + tile] = static_cast<uint8_t>(rows);
  }
  int rows(int tile) const { return bytes[48 + tile]; }
  int colsb(int tile) const { return bytes[16 + 2 * tile] | (bytes[17 + 2 * tile] << 8); }
};
static_assert(sizeof(TileConfig) == 64 && std::is_standard_layout_v<TileConfig>, "LDTILECFG reads 64 bytes");
static_assert(sizeof(TileConfig::bytes) == 64, "the inline-assembly operand must cover the whole configuration");

// The memory operand every ldtilecfg of this project passes: the whole 64-byte
// array. GCC 12's _tile_loadconfig declares a read of 8 bytes only
// (*(const void**)config), so the compiler may drop the stores of the rows and
// bytes per row, and the first tile instruction faults; with this operand the
// compiler must have stored all 64 bytes before the instruction.
#define ISPSIM_TILE_CONFIG_OPERAND(cfg) "m"((cfg).bytes)

// Copies `cfg` through an inline-assembly memory operand of the same form
// (rep movsb, no memory clobber): a test sees whether every byte was stored.
TileConfig copy_through_config_operand(int chunk_bytes);

// Tile registers of the GEMM's 2 x 2 blocking: C[i][j] += A[i] . B[j], A = 16
// tokens x `chunk` bytes of the input, B = chunk / 4 rows x 64 bytes of weights
// packed four columns per dword (16 output rows), C = 16 x 16 int32.
constexpr int kC00 = 0, kC01 = 1, kC10 = 2, kC11 = 3, kA0 = 4, kA1 = 5, kB0 = 6, kB1 = 7;
inline TileConfig gemm_tile_config(int chunk_bytes) {
  TileConfig cfg;
  cfg.bytes[0] = 1;  // palette 1
  for (int c : {kC00, kC01, kC10, kC11}) cfg.set(c, kMaxRows, kMaxColsb);
  for (int a : {kA0, kA1}) cfg.set(a, kMaxRows, chunk_bytes);
  for (int b : {kB0, kB1}) cfg.set(b, chunk_bytes / 4, kMaxColsb);
  return cfg;
}

// The scalar emulation: one tile state per thread, as the hardware keeps one
// per thread. Where the hardware faults (#GP, #UD), it throws std::logic_error.
struct EmulatedTiles {
  static void configure(const TileConfig& cfg);  // LDTILECFG (palette 0: TILERELEASE)
  static void release();                         // TILERELEASE: the INIT state, tiles zeroed
  static void zero_tile(int t);
  static void load_tile(int t, const void* base, int64_t stride);
  static void store_tile(int t, void* base, int64_t stride);
  static void dpbssd_tiles(int c, int a, int b);
  // The interface the kernel template calls (tile numbers as template
  // arguments, as the intrinsics need them).
  template <int T> static void zero() { zero_tile(T); }
  template <int T> static void load(const void* base, int64_t stride) { load_tile(T, base, stride); }
  template <int T> static void store(void* base, int64_t stride) { store_tile(T, base, stride); }
  template <int C, int A, int B> static void dpbssd() { dpbssd_tiles(C, A, B); }
};

}  // namespace ispsim::integer::amx
