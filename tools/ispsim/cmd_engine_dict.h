// Dictionary KV compression on the functional engine (kernels/dict):
//   ispsim engine dict-train   learn the per-layer K/V dictionaries of a model
//   ispsim engine kv-quality   quality and compression of the compressed KV cache
//   ispsim engine kv-trace     a decode trace with dictionary ops, as the engine ran it
// Dispatched from cmd_engine.cc; each takes the arguments after its subcommand
// name and returns the exit code (BadInput → main → 2).
#pragma once

#include "tools/ispsim/cli.h"

namespace ispsim::cli {

int engine_dict_train(const Args& args);
int engine_kv_quality(const Args& args);
int engine_kv_trace(const Args& args);

}  // namespace ispsim::cli
