// Helpers that write small, valid checkpoint directories (config.json,
// model.safetensors, tokenizer.json) so tests can check the loader, the forward
// pass and the CLI, and derive broken files from valid ones.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ispsim::model::testing {

struct RawTensor {
  std::string name;
  std::string dtype;  // "F32", "F16", "BF16", "I32", ...
  std::vector<int64_t> shape;
  std::string bytes;  // little-endian payload
};

RawTensor f32_tensor(const std::string& name, std::vector<int64_t> shape, const std::vector<float>& values);

// Writes a safetensors file: 8-byte header length, JSON header, data in order.
void write_safetensors(const std::string& path, const std::vector<RawTensor>& tensors);
std::string read_file(const std::string& path);
// Replaces the first `from` in the JSON header of a safetensors file with `to`
// (fixing the header length), leaving the data section as it was.
void edit_safetensors_header(const std::string& path, const std::string& from, const std::string& to);
void write_file(const std::string& path, const std::string& bytes);

struct TinyModel {
  std::string family = "llama";  // llama, qwen2, opt
  int vocab = 300;
  int hidden = 32;
  int ffn = 48;
  int layers = 2;
  int heads = 4;
  int kv_heads = 2;
  int max_positions = 64;
  bool tie = false;
  bool zero_lm_head = false;  // logits all 0 -> perplexity exactly = vocab
  uint32_t seed = 1;
};

// The HF tensor list of a tiny random model (deterministic for a seed).
std::vector<RawTensor> tiny_tensors(const TinyModel& m);
std::string tiny_config_json(const TinyModel& m);
// tokenizer.json: 256 byte symbols (id = byte value) plus `merges` as "a b"
// strings (or [a, b] arrays), each merged symbol getting the next id.
std::string byte_level_tokenizer_json(const std::vector<std::pair<std::string, std::string>>& merges,
                                      bool array_merges = false, const std::string& pre_tokenizer = "");
// A fresh directory under the test temp dir with all three files.
std::string make_tiny_model_dir(const std::string& name, const TinyModel& m);
std::string temp_dir(const std::string& name);

}  // namespace ispsim::model::testing
