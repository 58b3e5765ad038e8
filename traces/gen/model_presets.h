// Model presets of the shape-only trace generator: the published shapes of the
// models MemLLM and the issue evaluate, enough to size every op without weights.
// All presets are FP16 (weights, KV cache and activations 16 bits), as in the
// MemLLM evaluation (paper 2, Sec. VI-A: "OPT and SmolLM2 in FP16 precision").
#pragma once

#include <string>
#include <vector>

#include "traces/trace.pb.h"

namespace ispsim::tracegen {

// Every preset, in a fixed order (SmolLM2, OPT, Llama and Mistral, Qwen by size).
const std::vector<trace::ModelShape>& model_presets();

// The preset named `name`, case-insensitively (e.g. "smollm2-135m"). An unknown
// name is BadInput(where, ...) listing the known names.
trace::ModelShape find_model_preset(const std::string& name, const std::string& where = "--shape");

// The known names, comma separated (for errors and --help).
std::string model_preset_names();

// Whether the preset's LM head shares the embedding matrix (config.json
// tie_word_embeddings; OPT always ties): false for Llama-3.1-8B, Mistral-7B
// and Qwen2.5-7B, true for the others. Unknown names are BadInput like find_model_preset.
bool preset_ties_lm_head(const std::string& name);

}  // namespace ispsim::tracegen
