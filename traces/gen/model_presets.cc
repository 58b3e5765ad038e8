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
//   huggingface.co/meta-llama/Llama-3.2-1B/blob/main/config.json     (16, 2048, 32, 8, 64, 8192, 128256, tied)
//   huggingface.co/meta-llama/Llama-3.2-3B/blob/main/config.json     (28, 3072, 24, 8, 128, 8192, 128256, tied)
//   huggingface.co/mistralai/Mistral-7B-v0.1/blob/main/config.json   (32, 4096, 32, 8, 128, 14336, 32000, untied;
//                                                                     the preset "Mistral-7B" is v0.1)
//   huggingface.co/Qwen/Qwen2.5-0.5B/blob/main/config.json           (24, 896, 14, 2, 64, 4864, 151936, tied)
//   huggingface.co/Qwen/Qwen2.5-1.5B/blob/main/config.json           (28, 1536, 12, 2, 128, 8960, 151936, tied)
// Checked again against config.json copies found with the search tool,
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
namespace {

struct Preset {
  trace::ModelShape shape;
  bool tied_lm_head;  // config.json tie_word_embeddings (OPT always ties)
};

const std::vector<Preset>& preset_table() {
  using trace::ARCHITECTURE_LLAMA;
  using trace::ARCHITECTURE_OPT;
  using trace::ARCHITECTURE_QWEN2;
  static const std::vector<Preset> presets = {
      {shape(ARCHITECTURE_LLAMA, "SmolLM2-135M", 30, 576, 9, 3, 64, 1536, 49152), true},
      {shape(ARCHITECTURE_LLAMA, "SmolLM2-360M", 32, 960, 15, 5, 64, 2560, 49152), true},
      {shape(ARCHITECTURE_LLAMA, "SmolLM2-1.7B", 24, 2048, 32, 32, 64, 8192, 49152), true},
      {shape(ARCHITECTURE_OPT, "OPT-350M", 24, 1024, 16, 16, 64, 4096, 50272), true},
      {shape(ARCHITECTURE_OPT, "OPT-1.3B", 24, 2048, 32, 32, 64, 8192, 50272), true},
      {shape(ARCHITECTURE_OPT, "OPT-2.7B", 32, 2560, 32, 32, 80, 10240, 50272), true},
      {shape(ARCHITECTURE_OPT, "OPT-6.7B", 32, 4096, 32, 32, 128, 16384, 50272), true},
      {shape(ARCHITECTURE_LLAMA, "Llama-3.2-1B", 16, 2048, 32, 8, 64, 8192, 128256), true},
      {shape(ARCHITECTURE_LLAMA, "Llama-3.2-3B", 28, 3072, 24, 8, 128, 8192, 128256), true},
      {shape(ARCHITECTURE_LLAMA, "Llama-3.1-8B", 32, 4096, 32, 8, 128, 14336, 128256), false},
      {shape(ARCHITECTURE_LLAMA, "Mistral-7B", 32, 4096, 32, 8, 128, 14336, 32000), false},
      {shape(ARCHITECTURE_QWEN2, "Qwen2.5-0.5B", 24, 896, 14, 2, 64, 4864, 151936), true},
      {shape(ARCHITECTURE_QWEN2, "Qwen2.5-1.5B", 28, 1536, 12, 2, 128, 8960, 151936), true},
      {shape(ARCHITECTURE_QWEN2, "Qwen2.5-7B", 28, 3584, 28, 4, 128, 18944, 152064), false},
  };
  return presets;
}

const Preset& find_preset(const std::string& name, const std::string& where) {
  for (const Preset& p : preset_table())
    if (lower(p.shape.name()) == lower(name)) return p;
  throw BadInput(where, "unknown model '" + name + "' (known: " + model_preset_names() + ")");
}

}  // namespace

const std::vector<trace::ModelShape>& model_presets() {
  static const std::vector<trace::ModelShape> shapes = [] {
    std::vector<trace::ModelShape> out;
    for (const Preset& p : preset_table()) out.push_back(p.shape);
    return out;
  }();
  return shapes;
}

std::string model_preset_names() {
  std::string names;
  for (const trace::ModelShape& m : model_presets()) names += (names.empty() ? "" : ", ") + m.name();
  return names;
}

bool preset_ties_lm_head(const std::string& name) { return find_preset(name, "--shape").tied_lm_head; }

trace::ModelShape find_model_preset(const std::string& name, const std::string& where) {
  return find_preset(name, where).shape;
}

}  // namespace ispsim::tracegen
