// Run-time instruction-set dispatch for the engine's kernels, as portable
// libraries do it: the build sets no -march; each SIMD kernel is compiled with
// a target attribute, and one of them is picked at run time from what the CPU
// and the operating system support (CPUID, XGETBV, and on Linux the AMX tile
// permission of arch_prctl).
//
// Levels are ordered; a level includes the ones below it:
//   scalar   portable C++ (the reference every other variant is tested against)
//   avx2     AVX2 + FMA (FP32), AVX2 maddubs (INT8)
//   avx512   AVX-512 F/BW/DQ/VL + VNNI (INT8 vpdpbusd), 512-bit FP32 FMA
//   amx      AVX-512 level plus AMX-INT8 tiles (the INT8 prefill GEMM on
//            tiles, kernels/int/amx_gemm.h; everything else as avx512)
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace ispsim::model {

enum class Isa { kScalar = 0, kAvx2 = 1, kAvx512 = 2, kAmx = 3 };

const char* isa_name(Isa isa);
inline std::ostream& operator<<(std::ostream& out, Isa isa) { return out << isa_name(isa); }
// "scalar", "avx2", "avx512", "amx", or "best"; throws BadInput naming `option` otherwise.
Isa parse_isa(const std::string& text, const std::string& option);

// The highest level this CPU and OS support (probed once).
Isa best_isa();
bool isa_supported(Isa isa);
// Why `isa` is not usable here (one line), or "" when it is.
std::string isa_unsupported_reason(Isa isa);
// Every supported level, scalar first.
std::vector<Isa> supported_isas();

// The level the kernels use now: best_isa() unless set. set_active_isa throws
// BadInput for a level the machine lacks. Not thread-safe against running kernels.
Isa active_isa();
void set_active_isa(Isa isa);

// Sets a level for its lifetime. Calibration pins the scalar level, so that a
// quantized model (and every KV store and trace made with it) is the same on
// every machine: FP32 rounding differs between levels.
class ScopedIsa {
 public:
  explicit ScopedIsa(Isa isa) : saved_(active_isa()) { set_active_isa(isa); }
  ~ScopedIsa() { set_active_isa(saved_); }
  ScopedIsa(const ScopedIsa&) = delete;
  ScopedIsa& operator=(const ScopedIsa&) = delete;

 private:
  Isa saved_;
};

}  // namespace ispsim::model
