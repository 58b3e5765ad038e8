// A decoder-only language model as loaded from a Hugging Face checkpoint
// directory: the architecture (Config) and its weights converted to FP32.
//
// Supported families (SPEC §2): Llama (Llama-2/3 incl. Llama-3 RoPE scaling,
// SmolLM2), Qwen2 (q/k/v bias) and OPT (LayerNorm, ReLU, learned positions).
// Every matrix is stored row-major as in the checkpoint, i.e. [out, in], so a
// linear layer is y[o] = sum_i W[o*in + i] * x[i] (+ b[o]).
#pragma once

#include <string>
#include <vector>

namespace ispsim::model {

enum class Family { kLlama, kQwen2, kOpt };
enum class NormKind { kRms, kLayer };             // RMSNorm (Llama, Qwen2) or LayerNorm (OPT)
enum class FfnKind { kSwiGlu, kRelu };            // down(silu(gate x) * up x) or fc2(relu(fc1 x))
enum class PositionKind { kRope, kLearned };      // rotary (rotate_half pairing) or learned table

const char* family_name(Family family);

struct Config {
  Family family = Family::kLlama;
  std::string architecture;        // "LlamaForCausalLM", "Qwen2ForCausalLM", "OPTForCausalLM"
  NormKind norm = NormKind::kRms;
  FfnKind ffn = FfnKind::kSwiGlu;
  PositionKind positions = PositionKind::kRope;

  int vocab_size = 0;
  int hidden_size = 0;
  int ffn_size = 0;                // intermediate_size (Llama/Qwen2) or ffn_dim (OPT)
  int num_layers = 0;
  int num_heads = 0;
  int num_kv_heads = 0;            // == num_heads for MHA, fewer for GQA
  int head_dim = 0;                // hidden_size / num_heads unless config.json says otherwise
  int max_positions = 0;           // max_position_embeddings: the model's context in tokens
  float norm_eps = 1e-5f;          // rms_norm_eps (Llama/Qwen2) or LayerNorm eps (OPT: 1e-5)

  // Bias terms present in the checkpoint.
  bool qkv_bias = false;           // Qwen2: always; Llama: attention_bias; OPT: enable_bias
  bool o_bias = false;             // Llama: attention_bias; OPT: enable_bias
  bool mlp_bias = false;           // Llama: mlp_bias; OPT: enable_bias
  bool tie_word_embeddings = false;  // lm_head shares token_embedding

  // Rotary embedding (PositionKind::kRope). inv_freq[i] = rope_theta^(-2i/head_dim),
  // adjusted by the Llama-3 scaling rule when rope_llama3 is set.
  float rope_theta = 10000.0f;
  bool rope_llama3 = false;
  float rope_factor = 1.0f;
  float rope_low_freq_factor = 1.0f;
  float rope_high_freq_factor = 4.0f;
  int rope_original_max_positions = 8192;

  // OPT: learned position table has max_positions + kOptPositionOffset rows and
  // token at position p uses row p + 2 (HF OPTLearnedPositionalEmbedding).
  bool norm_before = true;         // do_layer_norm_before (pre-LN); false = post-LN
  bool final_norm = true;          // OPT post-LN models have no final LayerNorm

  int bos_token_id = -1;           // -1 when config.json has none
  std::vector<int> eos_token_ids;  // generation stops at any of them (Llama-3.1 lists several)

  int q_dim() const { return num_heads * head_dim; }
  int kv_dim() const { return num_kv_heads * head_dim; }
};

constexpr int kOptPositionOffset = 2;

struct LayerWeights {
  // Norm before attention (pre-LN) or after the residual add (OPT post-LN).
  std::vector<float> attn_norm;       // [hidden]
  std::vector<float> attn_norm_bias;  // [hidden], LayerNorm only
  std::vector<float> wq, wk, wv, wo;  // [q_dim, hidden], [kv_dim, hidden] x2, [hidden, q_dim]
  std::vector<float> bq, bk, bv, bo;  // empty when the config has no such bias
  std::vector<float> ffn_norm;        // [hidden]
  std::vector<float> ffn_norm_bias;   // [hidden], LayerNorm only
  std::vector<float> w_gate;          // [ffn, hidden], SwiGLU only
  std::vector<float> w_up;            // [ffn, hidden] (OPT fc1)
  std::vector<float> w_down;          // [hidden, ffn] (OPT fc2)
  std::vector<float> b_up, b_down;    // OPT fc1/fc2 biases; empty without mlp_bias
};

struct Weights {
  std::vector<float> token_embedding;     // [vocab, hidden]
  std::vector<float> position_embedding;  // [max_positions + 2, hidden], OPT only
  std::vector<LayerWeights> layers;
  std::vector<float> final_norm;          // [hidden] (empty for OPT post-LN)
  std::vector<float> final_norm_bias;     // [hidden], LayerNorm only
  std::vector<float> lm_head;             // [vocab, hidden]; empty when tied

  // The output projection: lm_head, or the token embedding when tied.
  const std::vector<float>& output_matrix() const {
    return lm_head.empty() ? token_embedding : lm_head;
  }
};

struct Model {
  Config config;
  Weights weights;
  std::string dir;  // checkpoint directory it was loaded from
};

// Parses <dir>/config.json; throws BadInput("<dir>/config.json", ...) naming the field.
Config load_config(const std::string& dir);

// Loads config.json plus model.safetensors (or the shards listed in
// model.safetensors.index.json), checking every tensor's presence and shape.
Model load_model(const std::string& dir);

}  // namespace ispsim::model
