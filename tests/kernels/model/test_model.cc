#include "tests/kernels/model/test_model.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include <unistd.h>

#include "tests/support/files.h"

namespace ispsim::model::testing {

namespace fs = std::filesystem;

RawTensor f32_tensor(const std::string& name, std::vector<int64_t> shape, const std::vector<float>& values) {
  RawTensor t{name, "F32", std::move(shape), std::string(values.size() * 4, '\0')};
  std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::string read_file(const std::string& path) { return ispsim::testing::read_text(path); }

void write_safetensors(const std::string& path, const std::vector<RawTensor>& tensors) {
  std::string header = "{\"__metadata__\":{\"format\":\"pt\"}";
  std::string data;
  for (const RawTensor& t : tensors) {
    header += ",\"" + t.name + "\":{\"dtype\":\"" + t.dtype + "\",\"shape\":[";
    for (size_t i = 0; i < t.shape.size(); ++i) header += (i ? "," : "") + std::to_string(t.shape[i]);
    header += "],\"data_offsets\":[" + std::to_string(data.size()) + "," + std::to_string(data.size() + t.bytes.size()) + "]}";
    data += t.bytes;
  }
  header += "}";
  while (header.size() % 8) header += ' ';  // the format pads the header to 8 bytes
  uint64_t n = header.size();
  std::string out(reinterpret_cast<const char*>(&n), 8);
  write_file(path, out + header + data);
}

void edit_safetensors_header(const std::string& path, const std::string& from, const std::string& to) {
  std::string bytes = read_file(path);
  uint64_t n;
  std::memcpy(&n, bytes.data(), 8);
  std::string header = bytes.substr(8, n);
  size_t at = header.find(from);
  if (at == std::string::npos) throw std::runtime_error("header of " + path + " has no '" + from + "'");
  header.replace(at, from.size(), to);
  uint64_t m = header.size();
  write_file(path, std::string(reinterpret_cast<const char*>(&m), 8) + header + bytes.substr(8 + n));
}

std::vector<RawTensor> tiny_tensors(const TinyModel& m) {
  std::mt19937 rng(m.seed);
  auto random = [&](const std::string& name, std::vector<int64_t> shape, float scale) {
    size_t n = 1;
    for (int64_t d : shape) n *= static_cast<size_t>(d);
    std::vector<float> v(n);
    // Uniform in [-scale, scale) from raw 32-bit draws (portable, unlike std distributions).
    for (float& x : v) x = scale * (static_cast<float>(rng() >> 8) / 8388608.0f - 1.0f);
    return f32_tensor(name, std::move(shape), v);
  };
  auto ones_ish = [&](const std::string& name, int64_t n) {
    RawTensor t = random(name, {n}, 0.2f);
    std::vector<float> v(n);
    std::memcpy(v.data(), t.bytes.data(), n * 4);
    for (float& x : v) x += 1.0f;
    return f32_tensor(name, {n}, v);
  };
  const int64_t h = m.hidden, f = m.ffn, v = m.vocab, hd = m.hidden / m.heads;
  const int64_t q = m.heads * hd, kv = (m.family == "opt" ? m.heads : m.kv_heads) * hd;
  std::vector<RawTensor> t;
  const float w = 0.3f;
  if (m.family == "opt") {
    const std::string p = "model.decoder.";
    t.push_back(random(p + "embed_tokens.weight", {v, h}, 1.0f));
    t.push_back(random(p + "embed_positions.weight", {m.max_positions + 2, h}, 0.5f));
    for (int i = 0; i < m.layers; ++i) {
      const std::string l = p + "layers." + std::to_string(i) + ".";
      for (const char* proj : {"q_proj", "k_proj", "v_proj", "out_proj"}) {
        t.push_back(random(l + "self_attn." + proj + ".weight", {h, h}, w));
        t.push_back(random(l + "self_attn." + proj + ".bias", {h}, 0.1f));
      }
      t.push_back(ones_ish(l + "self_attn_layer_norm.weight", h));
      t.push_back(random(l + "self_attn_layer_norm.bias", {h}, 0.1f));
      t.push_back(random(l + "fc1.weight", {f, h}, w));
      t.push_back(random(l + "fc1.bias", {f}, 0.1f));
      t.push_back(random(l + "fc2.weight", {h, f}, w));
      t.push_back(random(l + "fc2.bias", {h}, 0.1f));
      t.push_back(ones_ish(l + "final_layer_norm.weight", h));
      t.push_back(random(l + "final_layer_norm.bias", {h}, 0.1f));
    }
    t.push_back(ones_ish(p + "final_layer_norm.weight", h));
    t.push_back(random(p + "final_layer_norm.bias", {h}, 0.1f));
  } else {
    t.push_back(random("model.embed_tokens.weight", {v, h}, 1.0f));
    for (int i = 0; i < m.layers; ++i) {
      const std::string l = "model.layers." + std::to_string(i) + ".";
      t.push_back(ones_ish(l + "input_layernorm.weight", h));
      t.push_back(random(l + "self_attn.q_proj.weight", {q, h}, w));
      t.push_back(random(l + "self_attn.k_proj.weight", {kv, h}, w));
      t.push_back(random(l + "self_attn.v_proj.weight", {kv, h}, w));
      if (m.family == "qwen2") {
        t.push_back(random(l + "self_attn.q_proj.bias", {q}, 0.1f));
        t.push_back(random(l + "self_attn.k_proj.bias", {kv}, 0.1f));
        t.push_back(random(l + "self_attn.v_proj.bias", {kv}, 0.1f));
      }
      t.push_back(random(l + "self_attn.o_proj.weight", {h, q}, w));
      t.push_back(ones_ish(l + "post_attention_layernorm.weight", h));
      t.push_back(random(l + "mlp.gate_proj.weight", {f, h}, w));
      t.push_back(random(l + "mlp.up_proj.weight", {f, h}, w));
      t.push_back(random(l + "mlp.down_proj.weight", {h, f}, w));
    }
    t.push_back(ones_ish("model.norm.weight", h));
  }
  if (!m.tie) {
    RawTensor head = random("lm_head.weight", {v, h}, w);
    if (m.zero_lm_head) std::fill(head.bytes.begin(), head.bytes.end(), '\0');
    t.push_back(head);
  }
  return t;
}

std::string tiny_config_json(const TinyModel& m) {
  std::ostringstream s;
  const std::string tie = m.tie ? "true" : "false";
  if (m.family == "opt") {
    s << "{\"architectures\":[\"OPTForCausalLM\"],\"model_type\":\"opt\",\"vocab_size\":" << m.vocab
      << ",\"hidden_size\":" << m.hidden << ",\"ffn_dim\":" << m.ffn << ",\"num_hidden_layers\":" << m.layers
      << ",\"num_attention_heads\":" << m.heads << ",\"max_position_embeddings\":" << m.max_positions
      << ",\"word_embed_proj_dim\":" << m.hidden
      << ",\"do_layer_norm_before\":true,\"activation_function\":\"relu\",\"enable_bias\":true,"
         "\"tie_word_embeddings\":" << tie << ",\"bos_token_id\":2,\"eos_token_id\":2}";
  } else {
    s << "{\"architectures\":[\"" << (m.family == "qwen2" ? "Qwen2ForCausalLM" : "LlamaForCausalLM")
      << "\"],\"model_type\":\"" << m.family << "\",\"vocab_size\":" << m.vocab << ",\"hidden_size\":" << m.hidden
      << ",\"intermediate_size\":" << m.ffn << ",\"num_hidden_layers\":" << m.layers
      << ",\"num_attention_heads\":" << m.heads << ",\"num_key_value_heads\":" << m.kv_heads
      << ",\"max_position_embeddings\":" << m.max_positions
      << ",\"rms_norm_eps\":1e-05,\"rope_theta\":10000.0,\"hidden_act\":\"silu\",\"tie_word_embeddings\":" << tie
      << ",\"bos_token_id\":1,\"eos_token_id\":2,\"rope_scaling\":null,\"torch_dtype\":\"float32\"}";
  }
  return s.str();
}

namespace {
std::string json_escape(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') { out += '\\'; out += static_cast<char>(c); }
    else if (c < 0x20) { char buf[8]; std::snprintf(buf, sizeof buf, "\\u%04x", c); out += buf; }
    else out += static_cast<char>(c);
  }
  return out;
}
std::string byte_symbol(int b) {
  // GPT-2 byte-to-unicode map (independent re-statement for the test).
  int cp = b;
  bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
  if (!printable) {
    int n = 0;
    for (int i = 0; i < b; ++i)
      if (!((i >= 33 && i <= 126) || (i >= 161 && i <= 172) || (i >= 174 && i <= 255))) ++n;
    cp = 256 + n;
  }
  std::string s;
  if (cp < 0x80) s += static_cast<char>(cp);
  else { s += static_cast<char>(0xC0 | (cp >> 6)); s += static_cast<char>(0x80 | (cp & 0x3F)); }
  return s;
}
}  // namespace

std::string byte_level_tokenizer_json(const std::vector<std::pair<std::string, std::string>>& merges,
                                      bool array_merges, const std::string& pre_tokenizer) {
  std::string vocab, merge_list;
  int id = 0;
  for (int b = 0; b < 256; ++b) vocab += (b ? "," : "") + std::string("\"") + json_escape(byte_symbol(b)) + "\":" + std::to_string(id++);
  for (size_t i = 0; i < merges.size(); ++i) {
    const auto& [a, b] = merges[i];
    vocab += ",\"" + json_escape(a + b) + "\":" + std::to_string(id++);
    merge_list += (i ? "," : "");
    merge_list += array_merges ? "[\"" + json_escape(a) + "\",\"" + json_escape(b) + "\"]"
                               : "\"" + json_escape(a + " " + b) + "\"";
  }
  vocab += ",\"<|endoftext|>\":" + std::to_string(id);
  const std::string pre = pre_tokenizer.empty()
      ? R"({"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true})"
      : pre_tokenizer;
  return R"({"version":"1.0","truncation":null,"padding":null,"added_tokens":[{"id":)" + std::to_string(id) +
         R"(,"content":"<|endoftext|>","single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true}],)"
         R"("normalizer":null,"pre_tokenizer":)" + pre +
         R"(,"post_processor":null,"decoder":{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true,"use_regex":true},)"
         R"("model":{"type":"BPE","dropout":null,"unk_token":null,"continuing_subword_prefix":null,"end_of_word_suffix":null,"fuse_unk":false,"byte_fallback":false,"vocab":{)" +
         vocab + R"(},"merges":[)" + merge_list + "]}}";
}

std::string temp_dir(const std::string& name) {
  const fs::path dir = ispsim::testing::scratch_dir() / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

std::string make_tiny_model_dir(const std::string& name, const TinyModel& m) {
  std::string dir = temp_dir(name);
  write_file(dir + "/config.json", tiny_config_json(m));
  write_safetensors(dir + "/model.safetensors", tiny_tensors(m));
  write_file(dir + "/tokenizer.json",
             byte_level_tokenizer_json({{"\xC4\xA0", "t"}, {"h", "e"}, {"\xC4\xA0t", "he"}, {"i", "n"}, {"in", "g"}}));
  return dir;
}

}  // namespace ispsim::model::testing
