// The AMX GEMM on the CPU's tiles. This file alone is compiled with
// -mamx-tile -mamx-int8 (kernels/int/CMakeLists.txt); it runs only after
// model::isa_supported(Isa::kAmx), which includes Linux's per-process tile
// permission (arch_prctl ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA, requested
// by kernels/model/cpu_isa.cc).
#include "kernels/int/amx_gemm_kernel.h"

#if defined(ISPSIM_HAVE_AMX)
#include <immintrin.h>

namespace ispsim::integer::amx {
namespace {

// The intrinsics take the tile number as a literal (they paste it into the
// instruction's text), hence the cases.
#define ISPSIM_FOR_TILE(T, STMT)     \
  if constexpr (T == 0) STMT(0);     \
  else if constexpr (T == 1) STMT(1); \
  else if constexpr (T == 2) STMT(2); \
  else if constexpr (T == 3) STMT(3); \
  else if constexpr (T == 4) STMT(4); \
  else if constexpr (T == 5) STMT(5); \
  else if constexpr (T == 6) STMT(6); \
  else STMT(7)

struct HardwareTiles {
  static void configure(const TileConfig& cfg) {
    // Not _tile_loadconfig: see ISPSIM_TILE_CONFIG_OPERAND.
    __asm__ volatile("ldtilecfg %0" ::ISPSIM_TILE_CONFIG_OPERAND(cfg));
  }
  static void release() { _tile_release(); }
  template <int T> static void zero() {
#define ISPSIM_ZERO(n) _tile_zero(n)
    ISPSIM_FOR_TILE(T, ISPSIM_ZERO);
#undef ISPSIM_ZERO
  }
  template <int T> static void load(const void* base, int64_t stride) {
    // GCC 12's _tile_loadd declares no memory input either: the barrier makes
    // the compiler finish the stores of the staged input and packed weights.
    __asm__ volatile("" ::: "memory");
#define ISPSIM_LOAD(n) _tile_loadd(n, base, stride)
    ISPSIM_FOR_TILE(T, ISPSIM_LOAD);
#undef ISPSIM_LOAD
  }
  template <int T> static void store(void* base, int64_t stride) {
#define ISPSIM_STORE(n) _tile_stored(n, base, stride)
    ISPSIM_FOR_TILE(T, ISPSIM_STORE);
#undef ISPSIM_STORE
  }
  // Only the four products of the 2 x 2 blocking occur.
  template <int C, int A, int B> static void dpbssd() {
    static_assert(A == kA0 + C / 2 && B == kB0 + C % 2, "the operands of C[i][j] are A[i] and B[j]");
    if constexpr (C == kC00) _tile_dpbssd(0, 4, 6);
    else if constexpr (C == kC01) _tile_dpbssd(1, 4, 7);
    else if constexpr (C == kC10) _tile_dpbssd(2, 5, 6);
    else _tile_dpbssd(3, 5, 7);
  }
};
#undef ISPSIM_FOR_TILE
static_assert(kC00 == 0 && kC01 == 1 && kC10 == 2 && kC11 == 3 && kA0 == 4 && kA1 == 5 && kB0 == 6 && kB1 == 7,
              "the literal tile numbers above");

}  // namespace

void gemm_rows_on_hardware_tiles(const PackedS8& pk, const TileInput& in, const Dyadic* act, int r0, int r1,
                                 int32_t* Y, ScaleRowsFn scale) {
  gemm_rows_on_tiles<HardwareTiles>(pk, in, act, r0, r1, Y, scale);
}

}  // namespace ispsim::integer::amx
#endif  // ISPSIM_HAVE_AMX
