// The safetensors reader and the checkpoint/config loaders on valid files and
// on broken files derived from them; every defect is one BadInput naming the
// file and the tensor or field.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <filesystem>

#include "common/error.h"
#include "kernels/model/model.h"
#include "kernels/model/safetensors.h"
#include "tests/kernels/model/test_model.h"

namespace ispsim::model {
namespace {

using namespace testing;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const BadInput& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ModelSafetensors, ReadsF32F16Bf16AndIntegers) {
  std::string dir = temp_dir("st_valid");
  RawTensor half{"h", "F16", {3}, std::string("\x00\x3C\x00\xC0\x01\x00", 6)};
  RawTensor bf{"b", "BF16", {2}, std::string("\x80\x3F\xA0\xC0", 4)};
  RawTensor ids{"ids", "I32", {2}, std::string("\x05\x00\x00\x00\xFF\xFF\xFF\xFF", 8)};
  write_safetensors(dir + "/x.safetensors", {f32_tensor("f", {2, 2}, {1, 2, 3, 4}), half, bf, ids});
  SafetensorsFile f(dir + "/x.safetensors");
  EXPECT_EQ(f.tensors().size(), 4u);
  EXPECT_EQ(f.read_f32("f"), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(f.read_f32("h"), (std::vector<float>{1.0f, -2.0f, std::ldexp(1.0f, -24)}));
  EXPECT_EQ(f.read_f32("b"), (std::vector<float>{1.0f, -5.0f}));
  EXPECT_EQ(f.read_i64("ids"), (std::vector<int64_t>{5, -1}));
  EXPECT_EQ(f.find("ids")->shape, (std::vector<int64_t>{2}));
  EXPECT_NE(error_of([&] { f.read_f32("ids"); }).find("tensor 'ids': dtype I32 is not a float type"), std::string::npos);
}

// A valid two-tensor file whose header text we then edit.
std::string valid_file(const std::string& dir) {
  std::string path = dir + "/m.safetensors";
  write_safetensors(path, {f32_tensor("a", {2, 3}, {1, 2, 3, 4, 5, 6}), f32_tensor("b", {2}, {7, 8})});
  return path;
}

std::string with_header(const std::string& path, const std::string& from, const std::string& to) {
  edit_safetensors_header(path, from, to);
  return path;
}

TEST(ModelSafetensors, RefusesNonFiniteFloatsNamingTheTensor) {
  std::string dir = temp_dir("st_nonfinite");
  RawTensor half_inf{"h", "F16", {2}, std::string("\x00\x3C\x00\x7C", 4)};  // 1, +inf
  write_safetensors(dir + "/x.safetensors", {f32_tensor("f", {3}, {1, std::nanf(""), 3}), half_inf});
  SafetensorsFile f(dir + "/x.safetensors");
  EXPECT_NE(error_of([&] { f.read_f32("f"); }).find("x.safetensors: tensor 'f': element 1 is NaN"), std::string::npos);
  EXPECT_NE(error_of([&] { f.read_f32("h"); }).find("tensor 'h': element 1 is infinite"), std::string::npos);
}

TEST(ModelSafetensors, RejectsTruncatedFiles) {
  std::string dir = temp_dir("st_trunc");
  std::string path = valid_file(dir);
  std::string bytes = read_file(path);
  write_file(path, bytes.substr(0, 5));
  EXPECT_EQ(error_of([&] { SafetensorsFile f(path); }),
            path + ": truncated: 5 bytes, shorter than the 8-byte header length");
  write_file(path, bytes.substr(0, bytes.size() - 4));  // last tensor cut short
  EXPECT_EQ(error_of([&] { SafetensorsFile f(path); }),
            path + ": tensor 'b': data_offsets [24, 32) lie outside the data section of 28 bytes (file truncated?)");
}

TEST(ModelSafetensors, RejectsHeaderLengthBeyondFile) {
  std::string path = valid_file(temp_dir("st_hlen"));
  std::string bytes = read_file(path);
  uint64_t huge = 1ull << 40;
  std::memcpy(bytes.data(), &huge, 8);
  write_file(path, bytes);
  EXPECT_NE(error_of([&] { SafetensorsFile f(path); }).find(": header length 1099511627776 bytes exceeds the file"),
            std::string::npos);
}

TEST(ModelSafetensors, RejectsOffsetsOutOfRangeOverlappingOrNotMatchingDtypeTimesShape) {
  std::string dir = temp_dir("st_offsets");
  std::string path = with_header(valid_file(dir), "[24,32]", "[24,40]");
  EXPECT_NE(error_of([&] { SafetensorsFile f(path); }).find("tensor 'b': data_offsets [24, 40) lie outside"),
            std::string::npos);
  path = with_header(valid_file(dir), "[24,32]", "[16,24]");
  EXPECT_EQ(error_of([&] { SafetensorsFile f(path); }),
            path + ": tensor 'b': data_offsets overlap those of tensor 'a'");
  path = with_header(valid_file(dir), "\"shape\":[2,3]", "\"shape\":[2,2]");
  EXPECT_EQ(error_of([&] { SafetensorsFile f(path); }),
            path + ": tensor 'a': data_offsets span 24 bytes but F32 [2, 2] needs 16 bytes");
  path = with_header(valid_file(dir), "\"dtype\":\"F32\",\"shape\":[2,3]", "\"dtype\":\"F16\",\"shape\":[2,3]");
  EXPECT_EQ(error_of([&] { SafetensorsFile f(path); }),
            path + ": tensor 'a': data_offsets span 24 bytes but F16 [2, 3] needs 12 bytes");
}

TEST(ModelSafetensors, RejectsUnknownDtypeAndBadJson) {
  std::string dir = temp_dir("st_dtype");
  std::string path = with_header(valid_file(dir), "\"dtype\":\"F32\",\"shape\":[2]", "\"dtype\":\"Q4\",\"shape\":[2]");
  EXPECT_EQ(error_of([&] { SafetensorsFile f(path); }), path + ": tensor 'b': unknown dtype 'Q4'");
  path = with_header(valid_file(dir), "{", "[");
  EXPECT_NE(error_of([&] { SafetensorsFile f(path); }).find("header is not valid JSON"), std::string::npos);
}

TEST(ModelCheckpoint, LoadsTinyModelsOfEveryFamily) {
  for (const std::string family : {"llama", "qwen2", "opt"}) {
    TinyModel tm;
    tm.family = family;
    tm.tie = family == "opt";
    Model m = load_model(make_tiny_model_dir("load_" + family, tm));
    EXPECT_EQ(m.config.num_layers, 2);
    EXPECT_EQ(m.config.head_dim, 8);
    EXPECT_EQ(m.config.num_kv_heads, family == "opt" ? 4 : 2);
    EXPECT_EQ(m.weights.layers[1].wk.size(), static_cast<size_t>(m.config.kv_dim() * 32));
    EXPECT_EQ(m.weights.layers[0].bq.empty(), family == "llama");
    EXPECT_EQ(&m.weights.output_matrix() == &m.weights.token_embedding, tm.tie);
  }
}

TEST(ModelCheckpoint, ShardedCheckpointViaIndex) {
  TinyModel tm;
  std::string dir = make_tiny_model_dir("sharded", tm);
  std::vector<RawTensor> all = tiny_tensors(tm);
  std::vector<RawTensor> first(all.begin(), all.begin() + 5), second(all.begin() + 5, all.end());
  std::filesystem::remove(dir + "/model.safetensors");
  write_safetensors(dir + "/model-00001-of-00002.safetensors", first);
  write_safetensors(dir + "/model-00002-of-00002.safetensors", second);
  std::string index = "{\"metadata\":{},\"weight_map\":{";
  for (size_t i = 0; i < all.size(); ++i)
    index += (i ? "," : "") + ("\"" + all[i].name + "\":\"model-0000") + (i < 5 ? "1" : "2") + "-of-00002.safetensors\"";
  write_file(dir + "/model.safetensors.index.json", index + "}}");
  Model sharded = load_model(dir);
  Model single = load_model(make_tiny_model_dir("unsharded", tm));
  EXPECT_EQ(sharded.weights.lm_head, single.weights.lm_head);
  EXPECT_EQ(sharded.weights.layers[0].wq, single.weights.layers[0].wq);
}

TEST(ModelCheckpoint, MissingTensorAndShapeMismatchNameFileAndTensor) {
  TinyModel tm;
  std::string dir = make_tiny_model_dir("missing", tm);
  std::vector<RawTensor> t = tiny_tensors(tm);
  t.erase(t.begin() + 3);  // model.layers.0.self_attn.k_proj.weight
  write_safetensors(dir + "/model.safetensors", t);
  EXPECT_EQ(error_of([&] { load_model(dir); }),
            dir + "/model.safetensors: tensor 'model.layers.0.self_attn.k_proj.weight': missing");

  tm.kv_heads = 4;  // config says MHA, weights are GQA
  write_file(dir + "/config.json", tiny_config_json(tm));
  tm.kv_heads = 2;
  write_safetensors(dir + "/model.safetensors", tiny_tensors(tm));
  EXPECT_EQ(error_of([&] { load_model(dir); }),
            dir + "/model.safetensors: tensor 'model.layers.0.self_attn.k_proj.weight': shape [16, 32] does not "
                  "match [32, 32] from config.json");
}

TEST(ModelConfig, RejectsInconsistentOrUnsupportedFields) {
  std::string dir = temp_dir("config");
  auto bad = [&](const std::string& json) {
    write_file(dir + "/config.json", json);
    return error_of([&] { load_config(dir); });
  };
  const std::string file = dir + "/config.json: ";
  TinyModel tm;
  std::string base = tiny_config_json(tm);
  auto edit = [&](const std::string& from, const std::string& to) {
    std::string s = base;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  EXPECT_EQ(bad(edit("\"model_type\":\"llama\"", "\"model_type\":\"gpt2\"")),
            file + "field 'model_type': 'gpt2' is not supported (llama, qwen2, opt)");
  EXPECT_EQ(bad(edit("\"num_key_value_heads\":2", "\"num_key_value_heads\":3")),
            file + "field 'num_key_value_heads': 3 does not divide num_attention_heads 4");
  EXPECT_EQ(bad(edit("\"hidden_size\":32,", "")), file + "missing field 'hidden_size'");
  EXPECT_EQ(bad(edit("\"hidden_size\":32", "\"hidden_size\":-32")),
            file + "field 'hidden_size': -32 is not a positive size");
  EXPECT_EQ(bad(edit("\"rope_scaling\":null", "\"rope_scaling\":{\"rope_type\":\"yarn\",\"factor\":4}")),
            file + "field 'rope_scaling.rope_type': 'yarn' is not supported (llama3, default)");
  EXPECT_EQ(bad(edit("\"eos_token_id\":2", "\"eos_token_id\":999")),
            file + "field 'eos_token_id': 999 is outside the vocabulary of 300");
  EXPECT_EQ(bad(edit("\"hidden_act\":\"silu\"", "\"hidden_act\":\"gelu\"")),
            file + "field 'hidden_act': 'gelu' is not supported (silu)");
  EXPECT_EQ(bad(edit("\"num_hidden_layers\":2", "\"num_hidden_layers\":100000")),
            file + "field 'num_hidden_layers': more than 4096 layers");
  tm.family = "opt";
  base = tiny_config_json(tm);
  EXPECT_EQ(bad(edit("\"word_embed_proj_dim\":32", "\"word_embed_proj_dim\":16")),
            file + "field 'word_embed_proj_dim': 16 differs from hidden_size (project_in/out is not supported)");
  EXPECT_NE(bad("{\"model_type\": ").find(file + "invalid JSON"), std::string::npos);
}

TEST(ModelConfig, ReadsLlama3RopeScalingAndEosLists) {
  std::string dir = temp_dir("config_llama3");
  TinyModel tm;
  std::string s = tiny_config_json(tm);
  s.replace(s.find("\"rope_scaling\":null"), 19,
            "\"rope_scaling\":{\"factor\":8.0,\"low_freq_factor\":1.0,\"high_freq_factor\":4.0,"
            "\"original_max_position_embeddings\":8192,\"rope_type\":\"llama3\"}");
  s.replace(s.find("\"eos_token_id\":2"), 16, "\"eos_token_id\":[2,5,7]");
  write_file(dir + "/config.json", s);
  Config c = load_config(dir);
  EXPECT_TRUE(c.rope_llama3);
  EXPECT_EQ(c.rope_factor, 8.0f);
  EXPECT_EQ(c.rope_original_max_positions, 8192);
  EXPECT_EQ(c.eos_token_ids, (std::vector<int>{2, 5, 7}));
}

}  // namespace
}  // namespace ispsim::model
