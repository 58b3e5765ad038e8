// Checkpoint tensors → Weights, with the Hugging Face tensor names of each family.
#include "common/error.h"
#include "kernels/model/checkpoint.h"
#include "kernels/model/model.h"

namespace ispsim::model {

namespace {

using Shape = std::vector<int64_t>;

void load_llama_layer(const Checkpoint& ck, const Config& c, int i, LayerWeights& L) {
  const std::string p = "model.layers." + std::to_string(i) + ".";
  const int64_t h = c.hidden_size, q = c.q_dim(), kv = c.kv_dim(), f = c.ffn_size;
  L.attn_norm = ck.load(p + "input_layernorm.weight", {h});
  L.wq = ck.load(p + "self_attn.q_proj.weight", {q, h});
  L.wk = ck.load(p + "self_attn.k_proj.weight", {kv, h});
  L.wv = ck.load(p + "self_attn.v_proj.weight", {kv, h});
  L.wo = ck.load(p + "self_attn.o_proj.weight", {h, q});
  if (c.qkv_bias) {
    L.bq = ck.load(p + "self_attn.q_proj.bias", {q});
    L.bk = ck.load(p + "self_attn.k_proj.bias", {kv});
    L.bv = ck.load(p + "self_attn.v_proj.bias", {kv});
  }
  if (c.o_bias) L.bo = ck.load(p + "self_attn.o_proj.bias", {h});
  L.ffn_norm = ck.load(p + "post_attention_layernorm.weight", {h});
  L.w_gate = ck.load(p + "mlp.gate_proj.weight", {f, h});
  L.w_up = ck.load(p + "mlp.up_proj.weight", {f, h});
  L.w_down = ck.load(p + "mlp.down_proj.weight", {h, f});
}

void load_opt_layer(const Checkpoint& ck, const Config& c, const std::string& prefix, int i, LayerWeights& L) {
  const std::string p = prefix + "layers." + std::to_string(i) + ".";
  const int64_t h = c.hidden_size, f = c.ffn_size;
  L.attn_norm = ck.load(p + "self_attn_layer_norm.weight", {h});
  L.attn_norm_bias = ck.load(p + "self_attn_layer_norm.bias", {h});
  L.wq = ck.load(p + "self_attn.q_proj.weight", {h, h});
  L.wk = ck.load(p + "self_attn.k_proj.weight", {h, h});
  L.wv = ck.load(p + "self_attn.v_proj.weight", {h, h});
  L.wo = ck.load(p + "self_attn.out_proj.weight", {h, h});
  if (c.qkv_bias) {
    L.bq = ck.load(p + "self_attn.q_proj.bias", {h});
    L.bk = ck.load(p + "self_attn.k_proj.bias", {h});
    L.bv = ck.load(p + "self_attn.v_proj.bias", {h});
    L.bo = ck.load(p + "self_attn.out_proj.bias", {h});
  }
  L.ffn_norm = ck.load(p + "final_layer_norm.weight", {h});
  L.ffn_norm_bias = ck.load(p + "final_layer_norm.bias", {h});
  L.w_up = ck.load(p + "fc1.weight", {f, h});
  L.w_down = ck.load(p + "fc2.weight", {h, f});
  if (c.mlp_bias) {
    L.b_up = ck.load(p + "fc1.bias", {f});
    L.b_down = ck.load(p + "fc2.bias", {h});
  }
}

}  // namespace

Model load_model(const std::string& dir) {
  Model m;
  m.dir = dir;
  m.config = load_config(dir);
  const Config& c = m.config;
  Checkpoint ck(dir);
  Weights& w = m.weights;
  const int64_t h = c.hidden_size, v = c.vocab_size;

  if (c.family == Family::kOpt) {
    // Hub OPT checkpoints exist both with and without the "model." prefix.
    const std::string prefix = ck.contains("decoder.embed_tokens.weight") ? "decoder." : "model.decoder.";
    w.token_embedding = ck.load(prefix + "embed_tokens.weight", {v, h});
    w.position_embedding = ck.load(prefix + "embed_positions.weight", {c.max_positions + kOptPositionOffset, h});
    for (int i = 0; i < c.num_layers; ++i) load_opt_layer(ck, c, prefix, i, w.layers.emplace_back());
    if (c.final_norm) {
      w.final_norm = ck.load(prefix + "final_layer_norm.weight", {h});
      w.final_norm_bias = ck.load(prefix + "final_layer_norm.bias", {h});
    }
  } else {
    w.token_embedding = ck.load("model.embed_tokens.weight", {v, h});
    for (int i = 0; i < c.num_layers; ++i) load_llama_layer(ck, c, i, w.layers.emplace_back());
    w.final_norm = ck.load("model.norm.weight", {h});
  }
  // A tied checkpoint may still carry a copy of lm_head.weight; the embedding wins, as in transformers.
  if (!c.tie_word_embeddings) w.lm_head = ck.load("lm_head.weight", {v, h});
  return m;
}

}  // namespace ispsim::model
