// INT8 GEMM on AMX tiles (TDPBSSD), bit-exact with gemm_s8_grouped: the
// same exact int32 partial per (token, output row, group), scaled and rounded
// as the portable kernel does. It runs on the weights packed for the VNNI
// kernel (PackedS8: 16 rows, four columns per dword, which is the layout of an
// AMX B tile) and on the signed input bytes (TDPBSSD multiplies signed x
// signed, so no +128 bias). Details: kernels/int/README.md.
#pragma once

#include <cstdint>

#include "kernels/int/fixed_point.h"

namespace ispsim::integer {

struct PackedS8;

// kHardware: the CPU's tiles (only where model::isa_supported(Isa::kAmx) and
// amx_hardware_built()); kEmulated: the scalar emulation of amx_tiles.h, on
// any CPU (tests).
enum class TileBackend { kHardware, kEmulated };

// Whether the compiler could build the hardware backend (-mamx-tile -mamx-int8).
bool amx_hardware_built();

// Batches of fewer tokens go to the VNNI kernel at the amx level: below one
// full A tile (16 rows) part of every tile multiply works on padding. The
// break-even has not been measured (no AMX machine here).
constexpr int kAmxMinTokens = 16;

// Y[t][packed.rows] as gemm_s8_grouped for X[tokens][packed.cols] (values in
// [-127, 127]) and act_scale[tokens][packed.groups]; packed must not be empty.
// Threads (model::engine_threads()) split the output rows.
void gemm_s8_tiles(const PackedS8& packed, const int8_t* X, int tokens, const Dyadic* act_scale, int32_t* Y,
                   TileBackend backend);

}  // namespace ispsim::integer
