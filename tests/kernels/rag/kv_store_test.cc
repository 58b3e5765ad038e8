// The KV store: the page rule, a bit-exact round trip through disk, page
// alignment, and every inconsistency found on load.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/error.h"
#include "kernels/rag/blend.h"
#include "kernels/rag/fnv1a.h"
#include "kernels/rag/kv_store.h"
#include "tests/kernels/rag/rag_test_models.h"
#include "tests/support/cli.h"

namespace ispsim::rag {
namespace {

namespace fs = std::filesystem;
using testing::rag_config;
using testing::rag_documents;
using testing::random_tokens;

TEST(KvStore, TileTokensFollowTheFp16PageRule) {
  EXPECT_EQ(tile_tokens_for(128), 32);  // paper 2's 32-token tiles
  EXPECT_EQ(tile_tokens_for(64), 64);   // brown-llama
  EXPECT_EQ(tile_tokens_for(32), 128);
  EXPECT_EQ(tile_tokens_for(8192), 1);
  EXPECT_EQ(tile_tokens_for(100000), 1);
  EXPECT_THROW(tile_tokens_for(0), BadInput);
  StoreShape s;
  s.head_dim = 64;
  s.tile_tokens = 64;
  EXPECT_EQ(s.tile_bytes(), 32768);   // 64 tokens x (K + V) x 64 x 4 B
  EXPECT_EQ(s.tile_stride(), 32768);  // exactly two 16 KiB pages
  s.head_dim = 48;                    // tile of 30720 B rounds up to 2 pages
  EXPECT_EQ(s.tile_stride(), 32768);
}

struct Stores {
  model::Model model = integer::make_random_model(rag_config(), 42);
  fs::path dir = ispsim::testing::scratch_dir();
};

template <typename T>
void expect_same_kv(const std::vector<std::vector<T>>& a, const std::vector<std::vector<T>>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t l = 0; l < a.size(); ++l) EXPECT_TRUE(a[l] == b[l]) << "layer " << l;
}

TEST(KvStore, RoundTripIsBitExactAndPageAligned) {
  Stores s;
  const RagModel fp32 = RagModel::fp32(s.model);
  const RagModel int16 = RagModel::integer(s.model, random_tokens(512, 300, 1));
  for (const RagModel* engine : {&fp32, &int16}) {
    const KvStore store = precompute(*engine, rag_documents(300));
    const std::string dir = (s.dir / ("store_" + engine->engine_name())).string();
    store.write(dir);
    const KvStore loaded = KvStore::load(dir);
    EXPECT_EQ(loaded.engine(), engine->engine_name());
    EXPECT_EQ(loaded.fingerprint(), engine->fingerprint());
    EXPECT_EQ(loaded.shape().tile_tokens, 64);
    ASSERT_EQ(loaded.documents().size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
      const DocumentKv& a = store.documents()[i];
      const DocumentKv& b = loaded.documents()[i];
      EXPECT_EQ(a.id, b.id);
      EXPECT_EQ(a.tokens, b.tokens);
      expect_same_kv(a.k, b.k);
      expect_same_kv(a.v, b.v);
      expect_same_kv(a.k_int, b.k_int);
      expect_same_kv(a.v_int, b.v_int);
    }
    // 70, 45, 90 tokens: 2 + 1 + 2 blocks of 64, x 3 layers x 2 KV heads = 30 tiles of 2 pages.
    EXPECT_EQ(store.tiles_for(70) + store.tiles_for(45) + store.tiles_for(90), 30);
    EXPECT_EQ(fs::file_size(dir + "/tiles.bin"), 30u * 32768u);
    // Blending from the loaded store gives what the in-memory store gives.
    BlendOptions o;
    o.integer = engine->is_integer();
    const std::vector<int> query = random_tokens(5, 300, 2);
    EXPECT_EQ(blend(*engine, loaded, {"gamma", "alpha"}, query, o).logits,
              blend(*engine, store, {"gamma", "alpha"}, query, o).logits);
  }
}

TEST(KvStore, CorruptedTileIsFoundOnLoad) {
  Stores s;
  const RagModel fp32 = RagModel::fp32(s.model);
  const std::string dir = (s.dir / "store").string();
  precompute(fp32, rag_documents(300)).write(dir);
  {
    std::fstream f(dir + "/tiles.bin", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(7 * 32768 + 1000);  // inside tile 7
    const char byte = 0x5a;
    f.write(&byte, 1);
  }
  try {
    KvStore::load(dir);
    FAIL() << "corruption not detected";
  } catch (const BadInput& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("tiles.bin"), std::string::npos) << message;
    EXPECT_NE(message.find("tile 7"), std::string::npos) << message;
    EXPECT_NE(message.find("checksum"), std::string::npos) << message;
  }
}

// A hostile store: a NaN written into a tile whose checksum in the index is
// recomputed to match passes the integrity check; the finite check names it.
TEST(KvStore, NonFiniteValuesAreRefusedEvenWithMatchingChecksums) {
  Stores s;
  const RagModel fp32 = RagModel::fp32(s.model);
  const std::string dir = (s.dir / "store").string();
  const KvStore store = precompute(fp32, rag_documents(300));
  store.write(dir);
  std::string tiles = ispsim::testing::read_text(dir + "/tiles.bin");
  const size_t tile = 7 * static_cast<size_t>(store.shape().tile_stride()), bytes = store.shape().tile_bytes();
  const std::string before = hex64(fnv1a64(tiles.data() + tile, bytes));
  const float nan = std::nanf("");
  std::memcpy(&tiles[tile], &nan, sizeof nan);  // K of the tile's first token
  std::ofstream(dir + "/tiles.bin", std::ios::binary) << tiles;
  std::string index = ispsim::testing::read_text(dir + "/index.json");
  const size_t at = index.find(before);
  ASSERT_NE(at, std::string::npos);
  index.replace(at, before.size(), hex64(fnv1a64(tiles.data() + tile, bytes)));
  std::ofstream(dir + "/index.json") << index;
  try {
    KvStore::load(dir);
    FAIL() << "a NaN was loaded";
  } catch (const BadInput& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("tiles.bin: document '"), std::string::npos) << message;
    EXPECT_NE(message.find("holds a NaN or infinite value"), std::string::npos) << message;
  }
}

TEST(KvStore, EditedTokensInTheIndexAreFound) {
  Stores s;
  const RagModel fp32 = RagModel::fp32(s.model);
  const std::string dir = (s.dir / "store").string();
  precompute(fp32, rag_documents(300)).write(dir);
  std::string index = ispsim::testing::read_text(dir + "/index.json");
  const size_t at = index.find("\"tokens\":[") + 10;
  index.insert(at, "1,");  // one more token in the first document
  const size_t count = index.find("\"token_count\":70");
  ASSERT_NE(count, std::string::npos);
  index.replace(count, 16, "\"token_count\":71");
  std::ofstream(dir + "/index.json") << index;
  try {
    KvStore::load(dir);
    FAIL() << "edited tokens not detected";
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("tokens fail their checksum"), std::string::npos) << e.what();
  }
}

TEST(KvStore, InconsistentStoresAreRejected) {
  Stores s;
  const RagModel fp32 = RagModel::fp32(s.model);
  const std::string dir = (s.dir / "store").string();
  precompute(fp32, rag_documents(300)).write(dir);
  EXPECT_THROW(KvStore::load((s.dir / "no_such_store").string()), BadInput);
  fs::resize_file(dir + "/tiles.bin", 5 * 32768);  // truncated
  EXPECT_THROW(KvStore::load(dir), BadInput);
  fs::remove(dir + "/tiles.bin");
  EXPECT_THROW(KvStore::load(dir), BadInput);
  {
    std::ofstream index(dir + "/index.json");
    index << "{\"format\": \"something else\"}";
  }
  EXPECT_THROW(KvStore::load(dir), BadInput);
}

TEST(KvStore, AddRejectsBadDocuments) {
  Stores s;
  const RagModel fp32 = RagModel::fp32(s.model);
  KvStore store = precompute(fp32, rag_documents(300));
  EXPECT_THROW(store.add(compute_document_kv(fp32, {"alpha", random_tokens(3, 300, 5)})), BadInput);  // duplicate
  EXPECT_THROW(compute_document_kv(fp32, {"empty", {}}), BadInput);
  DocumentKv wrong = compute_document_kv(fp32, {"delta", random_tokens(3, 300, 5)});
  wrong.k.pop_back();
  EXPECT_THROW(store.add(wrong), BadInput);
  EXPECT_THROW(store.document("nope"), BadInput);
}

}  // namespace
}  // namespace ispsim::rag
