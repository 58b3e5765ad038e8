// Paper 1's platforms as SystemC systems (reference/paper1-integer-dictionary-cim.md,
// Sec. 4): B1 (NPU + DDR5, dense FP16 KV), B2 (NPU + DDR5, dictionary KV),
// S1 (CIM-SSD, codes in controller SRAM) and S2 (CIM-SSD, codes in host DRAM,
// reconstruction on the CPU, synchronisation over PCIe). A platform runs the
// DECODE_ONLY (B1) or DECODE_ONLY_DICTIONARY (B2, S1, S2) program of a trace
// (traces/gen/decode_program.h) or, in a trace without it, the decode steps
// (PHASE_DECODE ops) of its FULL_PREFILL program: the functional engine's
// dictionary traces (`ispsim engine kv-trace`) and the shape generator's dense
// ones hold their decode there. Each op becomes steps on the devices
// (CimPlanner), simulated on SystemC resources and also timed with the paper's
// eq. (4); both latencies are reported, with the stage breakdown.
#pragma once

#include <string>
#include <vector>

#include "schema/platform_loader.h"
#include "platforms/systems/report.h"
#include "platforms/systems/run_options.h"
#include "traces/trace.pb.h"

namespace ispsim::systems {

// Whether `platform` is one of paper 1's decode systems (its program is
// DECODE_ONLY or DECODE_ONLY_DICTIONARY): `ispsim run` and `compare` send it here.
bool is_cim_platform(const schema::Platform& platform);

// Which ops of a trace a platform runs: its own program, or (paper 1's decode
// systems only, when the trace has no such program) the PHASE_DECODE ops of
// FULL_PREFILL. A trace with neither is BadInput(trace_path, ...).
struct ProgramSource {
  trace::Program program = trace::PROGRAM_UNSPECIFIED;
  bool decode_phase_only = false;
  std::string name() const;  // e.g. "DECODE_ONLY" or "FULL_PREFILL (decode steps)"
};
ProgramSource program_source(const schema::Platform& platform, const trace::Header& header,
                             const std::string& trace_path);

// The --set paths among `loaded.from_overrides` that this platform would
// ignore (parameters of components or choices its architecture does not use).
std::vector<std::string> ignored_settings(const schema::LoadedPlatform& loaded);

// Simulates the platform's program of the trace (once per process). A run whose
// storage does not fit (DRAM, flash, or S1's controller SRAM) is reported as
// out_of_memory with the reason and the capacity figure, not simulated.
// Throws BadInput for a trace without the platform's program or an op the
// architecture cannot run.
RunSummary run_cim_system(const schema::LoadedPlatform& platform, const std::string& trace_path,
                          const RunOptions& options);

}  // namespace ispsim::systems
