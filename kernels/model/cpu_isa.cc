#include "kernels/model/cpu_isa.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif
#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "common/error.h"

namespace ispsim::model {
namespace {

struct Features {
  bool avx2 = false, avx512 = false, amx = false;
  std::string avx2_reason, avx512_reason, amx_reason;
};

#if defined(__x86_64__)
// XCR0: which register states the OS saves on context switches.
unsigned long long read_xcr0() {
  unsigned eax = 0, edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<unsigned long long>(edx) << 32) | eax;
}

// Linux keeps AMX tile data disabled per process until it is requested; the
// permission then holds for every thread of the process (values from the
// kernel's arch/x86/include/uapi/asm/prctl.h and fpu/xstate.h).
bool request_amx_permission() {
#if defined(__linux__)
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
}

Features probe() {
  Features f;
  unsigned a = 0, b = 0, c = 0, d = 0;
  __cpuid(1, a, b, c, d);
  const bool osxsave = c & (1u << 27), fma = c & (1u << 12);
  __cpuid_count(7, 0, a, b, c, d);
  const unsigned ebx7 = b, ecx7 = c, edx7 = d;
  const unsigned long long xcr0 = osxsave ? read_xcr0() : 0;
  const bool ymm_state = (xcr0 & 0x6) == 0x6, zmm_state = (xcr0 & 0xE6) == 0xE6;
  const bool amx_state = (xcr0 & 0x60000) == 0x60000;
  const bool avx2 = ebx7 & (1u << 5);
  const bool avx512 = (ebx7 & (1u << 16)) && (ebx7 & (1u << 17)) && (ebx7 & (1u << 30)) && (ebx7 & (1u << 31)) &&
                      (ecx7 & (1u << 11));  // F, DQ, BW, VL, VNNI
  const bool amx = (edx7 & (1u << 24)) && (edx7 & (1u << 25));  // AMX-TILE, AMX-INT8
  f.avx2 = avx2 && fma && ymm_state;
  if (!f.avx2) f.avx2_reason = !(avx2 && fma) ? "the CPU lacks AVX2 or FMA" : "the OS does not enable AVX state (XCR0)";
  f.avx512 = f.avx2 && avx512 && zmm_state;
  if (!f.avx512)
    f.avx512_reason = !f.avx2 ? f.avx2_reason
                      : !avx512 ? "the CPU lacks AVX-512 F/DQ/BW/VL/VNNI"
                                : "the OS does not enable the AVX-512 state (XCR0)";
  f.amx = f.avx512 && amx && amx_state && request_amx_permission();
  if (!f.amx)
    f.amx_reason = !f.avx512 ? f.avx512_reason
                   : !amx   ? "the CPU lacks AMX-TILE/AMX-INT8"
                   : !amx_state ? "the OS does not enable the AMX tile state (XCR0)"
                                : "the OS refused the AMX tile permission (arch_prctl)";
  return f;
}
#else
Features probe() {
  Features f;
  f.avx2_reason = f.avx512_reason = f.amx_reason = "not an x86-64 build";
  return f;
}
#endif

const Features& features() {
  static const Features f = probe();
  return f;
}

Isa& active() {
  static Isa isa = best_isa();
  return isa;
}

}  // namespace

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return "scalar";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
    case Isa::kAmx: return "amx";
  }
  return "?";
}

Isa parse_isa(const std::string& text, const std::string& option) {
  if (text == "best") return best_isa();
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kAmx})
    if (text == isa_name(isa)) return isa;
  throw BadInput(option, "unknown instruction set '" + text + "' (scalar, avx2, avx512, amx, best)");
}

std::string isa_unsupported_reason(Isa isa) {
  const Features& f = features();
  switch (isa) {
    case Isa::kScalar: return "";
    case Isa::kAvx2: return f.avx2_reason;
    case Isa::kAvx512: return f.avx512_reason;
    case Isa::kAmx: return f.amx_reason;
  }
  return "unknown level";
}

bool isa_supported(Isa isa) { return isa_unsupported_reason(isa).empty(); }

Isa best_isa() {
  for (Isa isa : {Isa::kAmx, Isa::kAvx512, Isa::kAvx2})
    if (isa_supported(isa)) return isa;
  return Isa::kScalar;
}

std::vector<Isa> supported_isas() {
  std::vector<Isa> out;
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512, Isa::kAmx})
    if (isa_supported(isa)) out.push_back(isa);
  return out;
}

Isa active_isa() { return active(); }

void set_active_isa(Isa isa) {
  if (!isa_supported(isa))
    throw BadInput("--isa", std::string(isa_name(isa)) + " is not usable on this machine: " + isa_unsupported_reason(isa));
  active() = isa;
}

}  // namespace ispsim::model
