#include "traces/gen/model_presets.h"

#include <cctype>

#include "common/error.h"

namespace ispsim::tracegen {

namespace {

trace::ModelShape shape(trace::ArchitectureFamily family, const char* name, uint32_t layers, uint32_t hidden,
                        uint32_t heads, uint32_t kv_heads, uint32_t head_dim, uint32_t ffn_dim, uint32_t vocab) {
  trace::ModelShape m;
  m.set_family(family);
  m.set_name(name);
  m.set_layers(layers);
  m.set_hidden(hidden);
  m.set_heads(heads);
  m.set_kv_heads(kv_heads);
  m.set_head_dim(head_dim);
  m.set_ffn_dim(ffn_dim);
  m.set_vocab(vocab);
  m.set_weight_bits(16);
  m.set_kv_bits(16);
  m.set_activation_bits(16);
  return m;
}

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

// Shapes from each model's config.json on the Hugging Face Hub
// (num_hidden_layers, hidden_size, num_attention_heads, num_key_value_heads,
// head_dim = hidden_size / num_attention_heads unless given, intermediate_size
// or ffn_dim, vocab_size):
//   huggingface.co/HuggingFaceTB/SmolLM2-135M/blob/main/config.json  (30, 576, 9, 3, 64, 1536, 49152)
//   huggingface.co/HuggingFaceTB/SmolLM2-360M/blob/main/config.json  (32, 960, 15, 5, 64, 2560, 49152)
//   huggingface.co/HuggingFaceTB/SmolLM2-1.7B/blob/main/config.json  (24, 2048, 32, 32, 64, 8192, 49152)
//   huggingface.co/facebook/opt-350m/blob/main/config.json           (24, 1024, 16, MHA, 64, 4096, 50272)
//   huggingface.co/facebook/opt-1.3b/blob/main/config.json           (24, 2048, 32, MHA, 64, 8192, 50272)
//   huggingface.co/facebook/opt-2.7b/blob/main/config.json           (32, 2560, 32, MHA, 80, 10240, 50272)
//   huggingface.co/facebook/opt-6.7b/blob/main/config.json           (32, 4096, 32, MHA, 128, 16384, 50272)
//   huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json     (32, 4096, 32, 8, 128, 14336, 128256)
//   huggingface.co/Qwen/Qwen2.5-7B/blob/main/config.json             (28, 3584, 28, 4, 128, 18944, 152064)
// Checked again (issue 9) against config.json copies found with the search tool,
// all matching: SmolLM2-1.7B via huggingface.co/Sakalti/hamachi-1.7B and
// aloobun/Pruned-SmolLM2-1.4B (_name_or_path HuggingFaceTB/SmolLM2-1.7B; 24, 2048,
// 32, 32, head_dim 64, 8192 in the unpruned one, 49152, tied); OPT-2.7B via
// huggingface.co/facebook/opt-2.7b/blob/refs%2Fpr%2F7/config.json; OPT-6.7B via
// huggingface.co/titanbot/opt-6.7b-4bit-AWQ (snapshot a45aa65 of facebook/opt-6.7b);
// Llama-3.1-8B via huggingface.co/NbAiLab/nb-llama-3.1-8B (_name_or_path
// meta-llama/Llama-3.1-8B, tie_word_embeddings false); Qwen2.5-7B via
// huggingface.co/AmberYifan/Qwen2.5-7B-gen-dpo-10k (_name_or_path Qwen/Qwen2.5-7B,
// tie_word_embeddings false).
// Simplification: OPT-350M projects its 512-wide embeddings to 1024 (project_in)
// and back (project_out, word_embed_proj_dim = 512) and applies LayerNorm after
// each block (do_layer_norm_before = false); the trace models it like the other
// OPTs (two 512x1024 projections are < 0.2 % of its per-token FLOPs).
const std::vector<trace::ModelShape>& model_presets() {
  using trace::ARCHITECTURE_LLAMA;
  using trace::ARCHITECTURE_OPT;
  using trace::ARCHITECTURE_QWEN2;
  static const std::vector<trace::ModelShape> presets = {
      shape(ARCHITECTURE_LLAMA, "SmolLM2-135M", 30, 576, 9, 3, 64, 1536, 49152),
      shape(ARCHITECTURE_LLAMA, "SmolLM2-360M", 32, 960, 15, 5, 64, 2560, 49152),
      shape(ARCHITECTURE_LLAMA, "SmolLM2-1.7B", 24, 2048, 32, 32, 64, 8192, 49152),
      shape(ARCHITECTURE_OPT, "OPT-350M", 24, 1024, 16, 16, 64, 4096, 50272),
      shape(ARCHITECTURE_OPT, "OPT-1.3B", 24, 2048, 32, 32, 64, 8192, 50272),
      shape(ARCHITECTURE_OPT, "OPT-2.7B", 32, 2560, 32, 32, 80, 10240, 50272),
      shape(ARCHITECTURE_OPT, "OPT-6.7B", 32, 4096, 32, 32, 128, 16384, 50272),
      shape(ARCHITECTURE_LLAMA, "Llama-3.1-8B", 32, 4096, 32, 8, 128, 14336, 128256),
      shape(ARCHITECTURE_QWEN2, "Qwen2.5-7B", 28, 3584, 28, 4, 128, 18944, 152064),
  };
  return presets;
}

std::string model_preset_names() {
  std::string names;
  for (const trace::ModelShape& m : model_presets()) names += (names.empty() ? "" : ", ") + m.name();
  return names;
}

bool preset_ties_lm_head(const std::string& name) {
  const std::string preset = find_model_preset(name).name();
  return preset != "Llama-3.1-8B" && preset != "Qwen2.5-7B";
}

trace::ModelShape find_model_preset(const std::string& name, const std::string& where) {
  for (const trace::ModelShape& m : model_presets())
    if (lower(m.name()) == lower(name)) return m;
  throw BadInput(where, "unknown model '" + name + "' (known: " + model_preset_names() + ")");
}

}  // namespace ispsim::tracegen
