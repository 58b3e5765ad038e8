#include "kernels/int/amx_gemm.h"

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/int/amx_gemm_kernel.h"
#include "kernels/int/amx_tiles.h"
#include "kernels/int/gemv_int8.h"
#include "kernels/int/gemv_int8_avx512.h"
#include "kernels/model/cpu_isa.h"
#include "kernels/model/parallel.h"

namespace ispsim::integer {
namespace amx {
namespace {

struct TileState {
  bool configured = false;
  int rows[kTiles] = {}, colsb[kTiles] = {};
  uint8_t data[kTiles][kMaxRows][kMaxColsb] = {};
};
thread_local TileState t_tiles;

[[noreturn]] void fault(const std::string& what) { throw std::logic_error("AMX tile emulation: " + what); }

void check_tile(int t, const char* instruction) {
  if (t < 0 || t >= kTiles) fault(std::string(instruction) + " names tile " + std::to_string(t));
  if (!t_tiles.configured || t_tiles.rows[t] == 0)
    fault(std::string(instruction) + " on unconfigured tile " + std::to_string(t));
}

bool reserved_bytes_zero(const uint8_t* b) {
  for (int i = 2; i < 64; ++i) {
    const bool field = (i >= 16 && i < 16 + 2 * kTiles) || (i >= 48 && i < 48 + kTiles);
    if (!field && b[i] != 0) return false;
  }
  return true;
}

int32_t read_dword(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return static_cast<int32_t>(v);
}
void write_dword(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

}  // namespace

void EmulatedTiles::configure(const TileConfig& cfg) {
  const uint8_t* b = cfg.bytes;
  if (b[0] == 0) return release();
  if (b[0] != 1) fault("LDTILECFG palette " + std::to_string(b[0]) + " (palette 1 is the only one)");
  if (b[1] != 0) fault("LDTILECFG start_row " + std::to_string(b[1]) + " (restarts are not emulated)");
  if (!reserved_bytes_zero(b)) fault("LDTILECFG with a reserved byte set");
  TileState s;
  for (int t = 0; t < kTiles; ++t) {
    s.rows[t] = cfg.rows(t), s.colsb[t] = cfg.colsb(t);
    if (s.rows[t] > kMaxRows || s.colsb[t] > kMaxColsb || (s.rows[t] == 0) != (s.colsb[t] == 0))
      fault("LDTILECFG tile " + std::to_string(t) + ": " + std::to_string(s.rows[t]) + " rows x " +
            std::to_string(s.colsb[t]) + " bytes");
  }
  s.configured = true;
  t_tiles = s;
}

void EmulatedTiles::release() { t_tiles = TileState{}; }

void EmulatedTiles::zero_tile(int t) {
  check_tile(t, "TILEZERO");
  std::memset(t_tiles.data[t], 0, sizeof t_tiles.data[t]);
}

// Rows past `rows` and bytes past `colsb` of a loaded row are zeroed.
void EmulatedTiles::load_tile(int t, const void* base, int64_t stride) {
  check_tile(t, "TILELOADD");
  std::memset(t_tiles.data[t], 0, sizeof t_tiles.data[t]);
  for (int r = 0; r < t_tiles.rows[t]; ++r)
    std::memcpy(t_tiles.data[t][r], static_cast<const uint8_t*>(base) + r * stride, t_tiles.colsb[t]);
}

void EmulatedTiles::store_tile(int t, void* base, int64_t stride) {
  check_tile(t, "TILESTORED");
  for (int r = 0; r < t_tiles.rows[t]; ++r)
    std::memcpy(static_cast<uint8_t*>(base) + r * stride, t_tiles.data[t][r], t_tiles.colsb[t]);
}

// TDPBSSD: c.row[m].dword[n] += Σ_k Σ_{i<4} sext(a.row[m].byte[4k+i]) · sext(b.row[k].byte[4n+i]),
// in 32-bit wrap-around arithmetic; the rest of each row and the rows past c's are zeroed.
void EmulatedTiles::dpbssd_tiles(int c, int a, int b) {
  check_tile(c, "TDPBSSD"), check_tile(a, "TDPBSSD"), check_tile(b, "TDPBSSD");
  const TileState& s = t_tiles;
  if (c == a || c == b || a == b) fault("TDPBSSD with a tile used twice");
  if (s.colsb[c] % 4 || s.colsb[a] % 4 || s.colsb[b] % 4 || s.rows[c] != s.rows[a] || s.colsb[a] != 4 * s.rows[b] ||
      s.colsb[c] != s.colsb[b])
    fault("TDPBSSD on tiles of mismatched shapes");
  uint8_t out[kMaxRows][kMaxColsb] = {};
  for (int m = 0; m < s.rows[c]; ++m)
    for (int n = 0; n < s.colsb[c] / 4; ++n) {
      uint32_t acc = static_cast<uint32_t>(read_dword(&s.data[c][m][4 * n]));
      for (int k = 0; k < s.colsb[a] / 4; ++k)
        for (int i = 0; i < 4; ++i)
          acc += static_cast<uint32_t>(int32_t{static_cast<int8_t>(s.data[a][m][4 * k + i])} *
                                       int32_t{static_cast<int8_t>(s.data[b][k][4 * n + i])});
      write_dword(&out[m][4 * n], acc);
    }
  std::memcpy(t_tiles.data[c], out, sizeof out);
}

TileConfig copy_through_config_operand(int chunk_bytes) {
  const TileConfig cfg = gemm_tile_config(chunk_bytes);
  TileConfig out;
#if defined(__x86_64__)
  // No memory clobber: only the declared operand tells the compiler what the
  // instruction reads, as for ldtilecfg.
  __asm__ volatile("lea %1, %%rsi\n\tlea %0, %%rdi\n\tmov $64, %%ecx\n\trep movsb"
                   : "=m"(out.bytes)
                   : ISPSIM_TILE_CONFIG_OPERAND(cfg)
                   : "rsi", "rdi", "rcx");
#else
  out = cfg;
#endif
  return out;
}

namespace {
void scale_add_rows(const int32_t* partial, int ld_partial, int tokens, const Dyadic* act, int act_stride,
                    const int64_t* wmult, const int64_t* wshift, int64_t* sums, int ld_sums) {
  for (int t = 0; t < tokens; ++t) {
    const Dyadic& a = act[static_cast<int64_t>(t) * act_stride];
    for (int r = 0; r < kMaxRows; ++r)
      sums[t * ld_sums + r] += round_shift(int64_t{partial[t * ld_partial + r]} * a.mult * wmult[r],
                                           a.shift + static_cast<int>(wshift[r]));
  }
}

thread_local std::vector<int8_t> t_input;  // the staged input (reused between calls)
}  // namespace
}  // namespace amx

bool amx_hardware_built() {
#if defined(ISPSIM_HAVE_AMX)
  return true;
#else
  return false;
#endif
}

void gemm_s8_tiles(const PackedS8& pk, const int8_t* X, int tokens, const Dyadic* act_scale, int32_t* Y,
                   TileBackend backend) {
  using model::Isa;
  if (pk.empty()) throw std::logic_error("gemm_s8_tiles: the weights are not packed");
  if (backend == TileBackend::kHardware && !(amx_hardware_built() && model::isa_supported(Isa::kAmx)))
    throw std::logic_error("gemm_s8_tiles: no AMX tiles here: " + model::isa_unsupported_reason(Isa::kAmx));
  if (tokens <= 0) return;
  const int64_t stride = int64_t{pk.groups} * pk.group;
  amx::t_input.assign(static_cast<size_t>((tokens + amx::kMaxRows - 1) / amx::kMaxRows * amx::kMaxRows * stride), 0);
  for (int t = 0; t < tokens; ++t) std::memcpy(amx::t_input.data() + t * stride, X + int64_t{t} * pk.cols, pk.cols);
  const amx::TileInput in{amx::t_input.data(), stride, tokens};
  amx::ScaleRowsFn scale = amx::scale_add_rows;
#if defined(ISPSIM_HAVE_X86_SIMD)
  if (model::active_isa() >= Isa::kAvx512) scale = scale_add_rows_avx512;
#endif
  model::parallel_for(pk.rows, amx::kMaxRows, [&](int r0, int r1) {
#if defined(ISPSIM_HAVE_AMX)
    if (backend == TileBackend::kHardware) return amx::gemm_rows_on_hardware_tiles(pk, in, act_scale, r0, r1, Y, scale);
#endif
    amx::gemm_rows_on_tiles<amx::EmulatedTiles>(pk, in, act_scale, r0, r1, Y, scale);
  });
}

}  // namespace ispsim::integer
