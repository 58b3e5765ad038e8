// `ispsim engine` end to end: a valid tiny model gives the closed-form
// perplexity; each broken checkpoint gives exit code 2 and one stderr line
// naming the file and the problem.
#include <gtest/gtest.h>

#include <filesystem>

#include "kernels/model/cpu_isa.h"
#include "tests/kernels/model/test_model.h"
#include "tests/support/cli.h"

namespace ispsim::model {
namespace {

using namespace testing;
using ispsim::testing::CliResult;
using ispsim::testing::run_cli;

// A valid tiny Llama model with an all-zero lm_head (perplexity = vocab = 300) and a text file.
std::string valid_dir(const std::string& name) {
  TinyModel tm;
  tm.zero_lm_head = true;
  std::string dir = make_tiny_model_dir(name, tm);
  write_file(dir + "/text.txt", "the thing in the ring sings; the king brings things.\n");
  return dir;
}

CliResult ppl(const std::string& dir) { return run_cli("engine ppl --model " + dir + " --text " + dir + "/text.txt"); }

void expect_one_error_line(const CliResult& r, const std::string& expected) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err, "ispsim: error: " + expected + "\n");
  EXPECT_EQ(r.out, "");
}

TEST(ModelEngineCli, PerplexityOfUniformModelIsTheVocabularySize) {
  std::string dir = valid_dir("cli_valid");
  CliResult r = ppl(dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("perplexity 300.0000 over "), std::string::npos) << r.out;
  CliResult g = run_cli("engine generate --model " + dir + " --prompt 'the' --tokens 3");
  ASSERT_EQ(g.exit_code, 0) << g.err;
  EXPECT_EQ(g.out.rfind("the", 0), 0u) << g.out;  // the prompt is echoed first
}

// `--isa` forces each kernel level: the integer engine generates the same
// text at every level the machine supports; a level it lacks is one error
// line (exit 2). `--register-bits` takes 32 or 64 and only for integer stages.
TEST(ModelEngineCli, IntegerGenerationIsIdenticalAtEveryIsaLevel) {
  const std::string cmd =
      "engine generate --model assets/brown-llama --quant int16 --calib-tokens 256 --prompt 'The jury said' --tokens 16";
  std::string first;
  int levels = 0;
  for (const char* isa : {"scalar", "avx2", "avx512", "amx"}) {
    CliResult r = run_cli(cmd + " --isa " + isa);
    if (!isa_supported(parse_isa(isa, "--isa"))) {
      expect_one_error_line(r, std::string("--isa: ") + isa + " is not usable on this machine: " +
                                   isa_unsupported_reason(parse_isa(isa, "--isa")));
      continue;
    }
    ASSERT_EQ(r.exit_code, 0) << isa << ": " << r.err;
    if (first.empty()) first = r.out;
    EXPECT_EQ(r.out, first) << isa;
    ++levels;
  }
  EXPECT_GE(levels, 1);
  CliResult narrow = run_cli(cmd + " --register-bits 32");
  ASSERT_EQ(narrow.exit_code, 0) << narrow.err;
  expect_one_error_line(run_cli(cmd + " --register-bits 16"), "--register-bits: must be 32 or 64, got 16");
  expect_one_error_line(run_cli("engine generate --model assets/brown-llama --prompt 'The' --register-bits 32"),
                        "--register-bits: applies to the integer stages (int-nonlinear, int16), not fp32");
}

TEST(ModelEngineCli, TruncatedSafetensors) {
  std::string dir = valid_dir("cli_truncated");
  std::string bytes = read_file(dir + "/model.safetensors");
  write_file(dir + "/model.safetensors", bytes.substr(0, bytes.size() / 2));
  CliResult r = ppl(dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("ispsim: error: " + dir + "/model.safetensors: tensor '", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("(file truncated?)\n"), std::string::npos) << r.err;
}

TEST(ModelEngineCli, HeaderLengthLies) {
  std::string dir = valid_dir("cli_header_len");
  std::string bytes = read_file(dir + "/model.safetensors");
  uint64_t n = bytes.size();  // claims more header than the file holds
  bytes.replace(0, 8, std::string(reinterpret_cast<const char*>(&n), 8));
  write_file(dir + "/model.safetensors", bytes);
  expect_one_error_line(ppl(dir), dir + "/model.safetensors: header length " + std::to_string(n) +
                                      " bytes exceeds the file (" + std::to_string(n) +
                                      " bytes): truncated or not a safetensors file");
}

TEST(ModelEngineCli, HeaderOffsetsLie) {
  std::string dir = valid_dir("cli_offsets");
  // model.norm.weight is [32] F32 = 128 bytes; claim it starts inside the embedding.
  edit_safetensors_header(dir + "/model.safetensors", "\"model.embed_tokens.weight\":{\"dtype\":\"F32\",\"shape\":[300,32],\"data_offsets\":[0,38400]",
                          "\"model.embed_tokens.weight\":{\"dtype\":\"F32\",\"shape\":[300,32],\"data_offsets\":[128,38528]");
  expect_one_error_line(ppl(dir), dir + "/model.safetensors: tensor 'model.layers.0.input_layernorm.weight': "
                                        "data_offsets overlap those of tensor 'model.embed_tokens.weight'");
}

TEST(ModelEngineCli, DtypeMismatch) {
  std::string dir = valid_dir("cli_dtype");
  edit_safetensors_header(dir + "/model.safetensors", "\"model.norm.weight\":{\"dtype\":\"F32\"",
                          "\"model.norm.weight\":{\"dtype\":\"BF16\"");
  expect_one_error_line(ppl(dir), dir + "/model.safetensors: tensor 'model.norm.weight': data_offsets span 128 bytes "
                                        "but BF16 [32] needs 64 bytes");
}

TEST(ModelEngineCli, MissingTensor) {
  TinyModel tm;
  std::string dir = valid_dir("cli_missing");
  std::vector<RawTensor> t = tiny_tensors(tm);
  t.pop_back();  // lm_head.weight
  write_safetensors(dir + "/model.safetensors", t);
  expect_one_error_line(ppl(dir), dir + "/model.safetensors: tensor 'lm_head.weight': missing");
}

TEST(ModelEngineCli, ConfigWeightShapeMismatch) {
  TinyModel tm;
  std::string dir = valid_dir("cli_shape");
  tm.ffn = 40;
  write_file(dir + "/config.json", tiny_config_json(tm));
  expect_one_error_line(ppl(dir), dir + "/model.safetensors: tensor 'model.layers.0.mlp.gate_proj.weight': shape "
                                        "[48, 32] does not match [40, 32] from config.json");
}

TEST(ModelEngineCli, UnsupportedTokenizerType) {
  std::string dir = valid_dir("cli_tokenizer");
  std::string json = read_file(dir + "/tokenizer.json");
  json.replace(json.find("\"type\":\"BPE\""), 12, "\"type\":\"Unigram\"");
  write_file(dir + "/tokenizer.json", json);
  expect_one_error_line(ppl(dir), dir + "/tokenizer.json: model.type 'Unigram' is not supported (byte-level BPE only)");
}

TEST(ModelEngineCli, MissingDirectoryAndBadOptions) {
  expect_one_error_line(run_cli("engine ppl --model /nonexistent/dir --text x"),
                        "/nonexistent/dir/config.json: no such file");
  const std::string dir = valid_dir("cli_text_dir");
  expect_one_error_line(run_cli("engine ppl --model " + dir + " --text " + dir),
                        dir + ": is a directory, not a regular input file");
  CliResult r = run_cli("engine ppl --bogus 1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("ispsim engine ppl: unrecognised option '--bogus'"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ispsim::model
