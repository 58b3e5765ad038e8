// Chakra execution trace -> ispsim trace.
//
// A file written by chakra_export() is restored exactly. Any other Chakra file
// is read as one decoder LLM's inference (prefill, then decode steps): nodes
// are ordered by their dependencies, the operators ispsim models are mapped
// (chakra_foreign.h) and the others are counted, one report line per operator.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace ispsim::chakra {

struct ImportOptions {
  std::string shape;  // model preset of a foreign trace (traces/gen/model_presets.h)
};

struct ImportReport {
  bool restored = false;  // an ispsim export, restored exactly
  uint64_t nodes = 0;     // nodes read
  uint64_t ops = 0;       // ops written (a foreign attention adds its KV append)
  uint64_t prompt_tokens = 0, decode_steps = 0;
  std::map<std::string, uint64_t> mapped;       // ispsim op kind -> ops
  std::map<std::string, uint64_t> unsupported;  // "NODE_TYPE name" -> nodes not mapped
  // Text for the CLI: a summary line, then one line per unsupported operator.
  std::string format() const;
};

// Reads `chakra_path` and writes the ispsim trace `trace_path` (atomically).
// BadInput for a bad file, a foreign trace without `options.shape`, a trace
// whose attention does not fit the model, a dependency cycle or an unknown
// dependency.
ImportReport import_chakra(const std::string& chakra_path, const std::string& trace_path,
                           const ImportOptions& options);

}  // namespace ispsim::chakra
