// `ispsim engine precompute | blend` on the project's model (assets/brown-llama):
// an end-to-end run, and each bad input as one stderr line with exit code 2.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>

#include "tests/support/cli.h"

namespace ispsim::rag {
namespace {

namespace fs = std::filesystem;
using ispsim::testing::CliResult;
using ispsim::testing::run_cli;
using ispsim::testing::scratch_dir;
using ispsim::testing::shell_quote;

const char* kDocs =
    "{\"id\": \"jury\", \"text\": \"The jury said the election was conducted with integrity and praised the city.\"}\n"
    "\n"
    "{\"id\": \"ship\", \"text\": \"The ship was launched last year and carries a crew of ninety men.\"}\n"
    "{\"id\": \"farm\", \"text\": \"Farmers in the valley said the rain came too late for the corn.\"}\n";

std::string write_file(const std::string& name, const std::string& text) {
  const fs::path path = scratch_dir() / name;
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

// A store of the three documents above; returns its directory.
std::string make_store(const std::string& quant = "fp32") {
  const std::string docs = write_file("docs.jsonl", kDocs);
  const std::string store = (scratch_dir() / ("store_" + quant)).string();
  CliResult r = run_cli("engine precompute --model assets/brown-llama --docs " + shell_quote(docs) + " --out " +
                        shell_quote(store) + " --quant " + quant);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("precomputed 3 documents"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tiles of 64 tokens"), std::string::npos) << r.out;  // brown-llama: head_dim 64
  return store;
}

std::string blend_args(const std::string& store, const std::string& docs, const std::string& query) {
  return "engine blend --model assets/brown-llama --store " + shell_quote(store) + " --docs " + docs + " --query " +
         shell_quote(query);
}

void expect_bad_input(const CliResult& r, const std::string& fragment) {
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_NE(r.err.find(fragment), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(RagCli, PrecomputeThenBlend) {
  const std::string store = make_store();
  CliResult r = run_cli(blend_args(store, "ship,jury", "The ship") + " --tokens 4");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("HKVD: (\\d+) of (\\d+) document tokens"))) << r.out;
  // round(15 % of the context tokens)
  EXPECT_EQ(std::stoi(m[1]), static_cast<int>(std::llround(0.15 * std::stoi(m[2]))));
  EXPECT_NE(r.out.find("answer (4 tokens): "), std::string::npos) << r.out;
  CliResult all = run_cli(blend_args(store, "ship,jury", "The ship") + " --tokens 4 --ratio 1");
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_NE(all.out.find("HKVD: " + std::string(m[2]) + " of " + std::string(m[2])), std::string::npos) << all.out;
}

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The integer engine's store is the same bytes at any --threads and --isa
// (batched prefill, threads and every kernel level are bit-exact, and the
// calibration pins the scalar FP32 kernels).
TEST(RagCli, IntegerStoreIsIdenticalAtAnyThreadCountAndIsa) {
  const std::string docs = write_file("docs_isa.jsonl", kDocs);
  std::string first;
  for (const char* flags : {"--threads 1", "--threads 2 --isa scalar", "--threads 3 --isa avx2"}) {
    const std::string store = (scratch_dir() / "store_isa").string();
    fs::remove_all(store);
    CliResult r = run_cli("engine precompute --model assets/brown-llama --quant int16 --docs " + shell_quote(docs) +
                          " --out " + shell_quote(store) + " " + flags);
    if (r.exit_code == 2 && r.err.find("not usable on this machine") != std::string::npos) continue;  // no AVX2 here
    ASSERT_EQ(r.exit_code, 0) << flags << ": " << r.err;
    const std::string bytes = read_bytes(fs::path(store) / "index.json") + read_bytes(fs::path(store) / "tiles.bin");
    if (first.empty()) first = bytes;
    EXPECT_TRUE(bytes == first) << flags;
  }
}

TEST(RagCli, UnknownIsaAndBadThreadCountAreBadInput) {
  const std::string docs = write_file("docs_bad_isa.jsonl", kDocs);
  const std::string out = shell_quote((scratch_dir() / "store_bad_isa").string());
  expect_bad_input(run_cli("engine precompute --model assets/brown-llama --docs " + shell_quote(docs) + " --out " + out +
                           " --isa sse9"),
                   "--isa");
  expect_bad_input(run_cli("engine precompute --model assets/brown-llama --docs " + shell_quote(docs) + " --out " + out +
                           " --threads 0"),
                   "--threads");
}

TEST(RagCli, StoreOfAnotherModelIsBadInput) {
  const std::string store = make_store();
  // The same checkpoint with another RMSNorm epsilon: another model.
  const fs::path other = scratch_dir() / "other-model";
  fs::create_directories(other);
  for (const char* f : {"model.safetensors", "tokenizer.json"})
    fs::copy_file(fs::path(ISPSIM_SOURCE_DIR) / "assets/brown-llama" / f, other / f);
  std::string config = ispsim::testing::read_text(fs::path(ISPSIM_SOURCE_DIR) / "assets/brown-llama/config.json");
  config.replace(config.find("1e-05"), 5, "1e-06");
  write_file("other-model/config.json", config);
  CliResult r = run_cli("engine blend --model " + shell_quote(other.string()) + " --store " + shell_quote(store) +
                        " --docs jury --query 'The jury'");
  expect_bad_input(r, "was made with another model or engine");
  // The integer engine on the FP32 store is another engine.
  expect_bad_input(run_cli(blend_args(store, "jury", "The jury") + " --quant int16"), "another model or engine");
}

TEST(RagCli, MissingDocumentIsBadInput) {
  const std::string store = make_store();
  expect_bad_input(run_cli(blend_args(store, "jury,moon", "The jury")), "no document 'moon' in the store");
  expect_bad_input(run_cli(blend_args(store, "jury,,ship", "The jury")), "--docs: empty document id");
}

TEST(RagCli, PromptLongerThanContextIsBadInput) {
  const std::string store = make_store();
  std::string query;
  for (int i = 0; i < 40; ++i) query += "The jury said the election was fair. ";
  expect_bad_input(run_cli(blend_args(store, "jury,ship,farm", query)), "exceed the model's context of 256 tokens");
}

TEST(RagCli, CorruptedTileIsBadInput) {
  const std::string store = make_store();
  {
    std::fstream f(store + "/tiles.bin", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(3 * 32768 + 17);  // tile 3: layer 1 of the first document
    char byte = 0;
    f.read(&byte, 1);
    byte ^= 0x10;
    f.seekp(3 * 32768 + 17);
    f.write(&byte, 1);
  }
  expect_bad_input(run_cli(blend_args(store, "jury", "The jury")), "fails its checksum");
}

TEST(RagCli, BadDocumentsFileIsBadInput) {
  const std::string bad = write_file("bad.jsonl", std::string(kDocs) + "{\"id\": \"x\"}\n");
  const std::string out = (scratch_dir() / "never").string();
  expect_bad_input(run_cli("engine precompute --model assets/brown-llama --docs " + shell_quote(bad) + " --out " +
                           shell_quote(out)),
                   "bad.jsonl:5: expected an object");
  EXPECT_FALSE(fs::exists(out));
  const std::string twice = write_file("twice.jsonl", std::string(kDocs) + kDocs);
  expect_bad_input(run_cli("engine precompute --model assets/brown-llama --docs " + shell_quote(twice) + " --out " +
                           shell_quote(out)),
                   "appears twice");
  expect_bad_input(run_cli("engine precompute --model assets/brown-llama --docs " + shell_quote(twice) + " --out " +
                           shell_quote(out) + " --quant w8a8"),
                   "appears twice");
  const std::string store = make_store();
  expect_bad_input(run_cli(blend_args(store, "jury", "The jury") + " --ratio 1.5"), "--ratio");
  expect_bad_input(run_cli(blend_args((scratch_dir() / "no-store").string(), "jury", "The jury")), "no-store");
}

}  // namespace
}  // namespace ispsim::rag
