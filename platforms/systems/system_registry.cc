#include "platforms/systems/system_registry.h"

#include "common/error.h"
#include "platforms/systems/blend_system.h"
#include "platforms/systems/cim_system.h"

namespace ispsim::systems {
namespace {

bool runs_llm_inference(const schema::Platform& p) {
  return p.program() == schema::Platform::FULL_PREFILL || p.program() == schema::Platform::PRECOMPUTED_BLEND ||
         p.program() == schema::Platform::PRECOMPUTED_BLEND_FUSED;
}

// Paper 1's systems take --set only for parameters they use.
void check_cim_platform(const schema::LoadedPlatform& platform) {
  const std::vector<std::string> ignored = ignored_settings(platform);
  if (!ignored.empty())
    throw BadInput("--set " + ignored.front(), "platform '" + platform.platform.name() + "' does not use this parameter");
}

}  // namespace

const std::vector<SystemKind>& system_kinds() {
  static const std::vector<SystemKind> kinds = {
      {"llm_inference", runs_llm_inference, run_blend_system, check_blend_platform, false},  // MemLLM's study
      {"cim_decode", is_cim_platform, run_cim_system, check_cim_platform, true},  // paper 1's B1, B2, S1, S2
  };
  return kinds;
}

const SystemKind& system_for(const schema::LoadedPlatform& platform) {
  for (const SystemKind& kind : system_kinds())
    if (kind.runs(platform.platform)) return kind;
  throw BadInput(platform.file, "program " + schema::Platform::Program_Name(platform.platform.program()) +
                                    " is run by no system (FULL_PREFILL, PRECOMPUTED_BLEND, PRECOMPUTED_BLEND_FUSED, "
                                    "DECODE_ONLY, DECODE_ONLY_DICTIONARY; MICROBENCHMARK: `ispsim run` only)");
}

RunSummary run_system(const schema::LoadedPlatform& platform, const std::string& trace_path, const RunOptions& options) {
  return system_for(platform).run(platform, trace_path, options);
}

}  // namespace ispsim::systems
