// config.json → Config. Defaults are those of the Hugging Face transformers
// configuration classes (LlamaConfig, Qwen2Config, OPTConfig) for keys a
// checkpoint may omit; keys that decide the shape are required.
#include <boost/json.hpp>

#include <cmath>

#include "common/error.h"
#include "kernels/model/json_file.h"
#include "kernels/model/model.h"

namespace ispsim::model {

const char* family_name(Family family) {
  switch (family) {
    case Family::kLlama: return "llama";
    case Family::kQwen2: return "qwen2";
    case Family::kOpt: return "opt";
  }
  return "?";
}

namespace {

namespace json = boost::json;

// Reads typed fields of one JSON object, naming the file and field on error.
class Fields {
 public:
  Fields(const json::object& obj, std::string file) : obj_(obj), file_(std::move(file)) {}

  bool has(const char* key) const {
    auto* v = obj_.if_contains(key);
    return v && !v->is_null();
  }
  long long integer(const char* key) const {
    const json::value& v = require(key);
    if (v.is_int64()) return v.as_int64();
    if (v.is_uint64() && v.as_uint64() < (1ull << 62)) return static_cast<long long>(v.as_uint64());
    if (v.is_double() && v.as_double() == std::floor(v.as_double()) && std::fabs(v.as_double()) < 1e15)
      return static_cast<long long>(v.as_double());
    throw BadInput(file_, std::string("field '") + key + "': expected an integer");
  }
  long long integer(const char* key, long long fallback) const { return has(key) ? integer(key) : fallback; }
  double number(const char* key) const {
    const json::value& v = require(key);
    if (v.is_number()) return v.to_number<double>();
    throw BadInput(file_, std::string("field '") + key + "': expected a number");
  }
  double number(const char* key, double fallback) const { return has(key) ? number(key) : fallback; }
  bool boolean(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    const json::value& v = obj_.at(key);
    if (!v.is_bool()) throw BadInput(file_, std::string("field '") + key + "': expected true or false");
    return v.as_bool();
  }
  std::string string(const char* key, const std::string& fallback) const {
    if (!has(key)) return fallback;
    const json::value& v = obj_.at(key);
    if (!v.is_string()) throw BadInput(file_, std::string("field '") + key + "': expected a string");
    return std::string(v.as_string());
  }
  const json::value& require(const char* key) const {
    auto* v = obj_.if_contains(key);
    if (!v || v->is_null()) throw BadInput(file_, std::string("missing field '") + key + "'");
    return *v;
  }
  // A positive integer that fits an int (shapes).
  int positive(const char* key) const { return checked_positive(key, integer(key)); }
  int positive(const char* key, long long fallback) const { return checked_positive(key, integer(key, fallback)); }

 private:
  int checked_positive(const char* key, long long v) const {
    if (v <= 0 || v > (1ll << 30))
      throw BadInput(file_, std::string("field '") + key + "': " + std::to_string(v) + " is not a positive size");
    return static_cast<int>(v);
  }
  const json::object& obj_;
  std::string file_;
};


Family detect_family(const Fields& f, const std::string& file) {
  std::string type = f.string("model_type", "");
  if (type == "llama") return Family::kLlama;
  if (type == "qwen2") return Family::kQwen2;
  if (type == "opt") return Family::kOpt;
  if (type.empty()) throw BadInput(file, "missing field 'model_type'");
  throw BadInput(file, "field 'model_type': '" + type + "' is not supported (llama, qwen2, opt)");
}

void read_rope_scaling(const json::object& root, const std::string& file, Config& c) {
  auto* v = root.if_contains("rope_scaling");
  if (!v || v->is_null()) return;
  if (!v->is_object()) throw BadInput(file, "field 'rope_scaling': expected an object or null");
  Fields s(v->as_object(), file);
  // transformers accepts the older key "type" as well as "rope_type".
  std::string type = s.string("rope_type", s.string("type", ""));
  if (type == "default") return;
  if (type != "llama3")
    throw BadInput(file, "field 'rope_scaling.rope_type': '" + type + "' is not supported (llama3, default)");
  c.rope_llama3 = true;
  c.rope_factor = static_cast<float>(s.number("factor"));
  c.rope_low_freq_factor = static_cast<float>(s.number("low_freq_factor"));
  c.rope_high_freq_factor = static_cast<float>(s.number("high_freq_factor"));
  c.rope_original_max_positions = s.positive("original_max_position_embeddings");
  if (!(c.rope_factor > 0) || !(c.rope_low_freq_factor > 0) ||
      !(c.rope_high_freq_factor > c.rope_low_freq_factor))
    throw BadInput(file, "field 'rope_scaling': need factor > 0 and high_freq_factor > low_freq_factor > 0");
}

void read_llama_or_qwen2(const json::object& root, const Fields& f, const std::string& file, Config& c) {
  c.norm = NormKind::kRms;
  c.ffn = FfnKind::kSwiGlu;
  c.positions = PositionKind::kRope;
  c.hidden_size = f.positive("hidden_size");
  c.ffn_size = f.positive("intermediate_size");
  c.num_layers = f.positive("num_hidden_layers");
  c.num_heads = f.positive("num_attention_heads");
  c.num_kv_heads = f.positive("num_key_value_heads", c.num_heads);
  if (f.has("head_dim")) {
    c.head_dim = f.positive("head_dim");
  } else {
    if (c.hidden_size % c.num_heads != 0)
      throw BadInput(file, "field 'num_attention_heads': " + std::to_string(c.num_heads) +
                               " does not divide hidden_size " + std::to_string(c.hidden_size));
    c.head_dim = c.hidden_size / c.num_heads;
  }
  // Defaults: LlamaConfig max_position_embeddings 2048, Qwen2Config 32768; both rms_norm_eps 1e-6.
  c.max_positions = f.positive("max_position_embeddings", c.family == Family::kQwen2 ? 32768 : 2048);
  c.norm_eps = static_cast<float>(f.number("rms_norm_eps", 1e-6));
  c.rope_theta = static_cast<float>(f.number("rope_theta", 10000.0));
  if (!(c.rope_theta > 1.0f)) throw BadInput(file, "field 'rope_theta': must be > 1");
  c.tie_word_embeddings = f.boolean("tie_word_embeddings", false);
  std::string act = f.string("hidden_act", "silu");
  if (act != "silu") throw BadInput(file, "field 'hidden_act': '" + act + "' is not supported (silu)");
  if (c.family == Family::kQwen2) {
    c.qkv_bias = true;  // Qwen2Attention always has q/k/v biases and no o bias
    if (f.boolean("use_sliding_window", false))
      throw BadInput(file, "field 'use_sliding_window': sliding-window attention is not supported");
  } else {
    c.qkv_bias = c.o_bias = f.boolean("attention_bias", false);
    // mlp_bias would add a gate bias that LayerWeights has no slot for; no known checkpoint uses it.
    if (f.boolean("mlp_bias", false)) throw BadInput(file, "field 'mlp_bias': true is not supported");
  }
  read_rope_scaling(root, file, c);
}

void read_opt(const Fields& f, const std::string& file, Config& c) {
  c.norm = NormKind::kLayer;
  c.ffn = FfnKind::kRelu;
  c.positions = PositionKind::kLearned;
  c.hidden_size = f.positive("hidden_size");
  c.ffn_size = f.positive("ffn_dim");
  c.num_layers = f.positive("num_hidden_layers");
  c.num_heads = f.positive("num_attention_heads");
  c.num_kv_heads = c.num_heads;  // OPT is multi-head attention
  if (c.hidden_size % c.num_heads != 0)
    throw BadInput(file, "field 'num_attention_heads': " + std::to_string(c.num_heads) +
                             " does not divide hidden_size " + std::to_string(c.hidden_size));
  c.head_dim = c.hidden_size / c.num_heads;
  c.max_positions = f.positive("max_position_embeddings", 2048);  // OPTConfig default
  c.norm_eps = 1e-5f;  // nn.LayerNorm default; OPT does not configure it
  int proj = f.positive("word_embed_proj_dim", c.hidden_size);
  if (proj != c.hidden_size)
    throw BadInput(file, "field 'word_embed_proj_dim': " + std::to_string(proj) +
                             " differs from hidden_size (project_in/out is not supported)");
  std::string act = f.string("activation_function", "relu");
  if (act != "relu") throw BadInput(file, "field 'activation_function': '" + act + "' is not supported (relu)");
  if (!f.boolean("layer_norm_elementwise_affine", true))
    throw BadInput(file, "field 'layer_norm_elementwise_affine': false is not supported");
  bool bias = f.boolean("enable_bias", true);
  c.qkv_bias = c.o_bias = c.mlp_bias = bias;
  c.norm_before = f.boolean("do_layer_norm_before", true);
  c.final_norm = c.norm_before && !f.boolean("_remove_final_layer_norm", false);
  c.tie_word_embeddings = f.boolean("tie_word_embeddings", true);  // OPTConfig default
}

void read_special_ids(const json::object& root, const Fields& f, const std::string& file, Config& c) {
  auto check = [&](const char* key, long long id) {
    if (id < 0 || id >= c.vocab_size)
      throw BadInput(file, std::string("field '") + key + "': " + std::to_string(id) +
                               " is outside the vocabulary of " + std::to_string(c.vocab_size));
    return static_cast<int>(id);
  };
  if (f.has("bos_token_id")) c.bos_token_id = check("bos_token_id", f.integer("bos_token_id"));
  auto* eos = root.if_contains("eos_token_id");
  if (eos && eos->is_array()) {
    for (const json::value& v : eos->as_array()) {
      if (!v.is_int64()) throw BadInput(file, "field 'eos_token_id': expected integers");
      c.eos_token_ids.push_back(check("eos_token_id", v.as_int64()));
    }
  } else if (f.has("eos_token_id")) {
    c.eos_token_ids.push_back(check("eos_token_id", f.integer("eos_token_id")));
  }
}

}  // namespace

Config load_config(const std::string& dir) {
  const std::string file = dir + "/config.json";
  json::object root = read_json_object(file);
  Fields f(root, file);
  Config c;
  c.family = detect_family(f, file);
  if (root.contains("architectures")) {
    const json::value& a = root.at("architectures");
    if (a.is_array() && !a.as_array().empty() && a.as_array()[0].is_string())
      c.architecture = std::string(a.as_array()[0].as_string());
  }
  c.vocab_size = f.positive("vocab_size");
  if (c.family == Family::kOpt)
    read_opt(f, file, c);
  else
    read_llama_or_qwen2(root, f, file, c);

  // Sanity limits far above any real checkpoint, so a corrupt config cannot overflow
  // int index arithmetic or request absurd allocations before the weights are checked.
  constexpr long long kMaxWidth = 1 << 24, kMaxLayers = 4096;
  if (static_cast<long long>(c.num_heads) * c.head_dim > kMaxWidth || c.hidden_size > kMaxWidth ||
      c.ffn_size > kMaxWidth || c.vocab_size > kMaxWidth || c.max_positions > kMaxWidth)
    throw BadInput(file, "shape fields exceed 16M elements (hidden, FFN, heads x head_dim, vocab, positions)");
  if (c.num_layers > kMaxLayers) throw BadInput(file, "field 'num_hidden_layers': more than 4096 layers");
  if (c.num_heads % c.num_kv_heads != 0)
    throw BadInput(file, "field 'num_key_value_heads': " + std::to_string(c.num_kv_heads) +
                             " does not divide num_attention_heads " + std::to_string(c.num_heads));
  if (c.positions == PositionKind::kRope && c.head_dim % 2 != 0)
    throw BadInput(file, "head dimension " + std::to_string(c.head_dim) + " is odd; rotary embedding needs pairs");
  if (!(c.norm_eps > 0.0f) || !(c.norm_eps < 1.0f)) throw BadInput(file, "normalisation epsilon must be in (0, 1)");
  read_special_ids(root, f, file, c);
  return c;
}

}  // namespace ispsim::model
