// The LLM-inference system of the MemLLM platforms: host GPU + host DRAM
// staging, PCIe link with the NVMe path, SSD (controller, DRAM, internal bus,
// NAND, ISP accelerators, Flash-Coordinator), driven by the host runtime over
// the op DAG of the program the platform runs (FULL_PREFILL, PRECOMPUTED_BLEND
// or PRECOMPUTED_BLEND_FUSED).
#pragma once

#include <string>

#include "schema/platform_loader.h"
#include "platforms/systems/report.h"
#include "platforms/systems/run_options.h"

namespace ispsim::systems {

// Simulates the platform's program of the trace (call once per process: it
// elaborates SystemC and runs sc_start). Writes the statistics, waveform and
// timeline files that `options` asks for. Throws BadInput for a trace without
// the platform's program or an unusable combination.
RunSummary run_blend_system(const schema::LoadedPlatform& platform, const std::string& trace_path,
                            const RunOptions& options);
// What the system refuses in the platform itself, before any trace: placements
// it cannot run, an ISP accelerator it does not have or cannot configure.
void check_blend_platform(const schema::LoadedPlatform& platform);

}  // namespace ispsim::systems
