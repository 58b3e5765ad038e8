// RAG commands on the functional engine that build on kernels/rag/trace:
//   ispsim engine blend-quality   blended vs full prefill at several ratios
//   ispsim trace gen --engine     a trace of one request with the engine's real HKVD masks
// Dispatched from cmd_engine.cc and cmd_trace.cc; each takes the arguments
// after its subcommand name and returns the exit code (BadInput → main → 2).
#pragma once

#include "tools/ispsim/cli.h"

namespace ispsim::cli {

int engine_blend_quality(const Args& args);
int trace_gen_engine(const Args& args);

}  // namespace ispsim::cli
