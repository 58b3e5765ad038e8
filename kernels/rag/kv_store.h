// The precomputed KV store: every document's K and V, computed independently
// (positions from 0), kept on disk in page-aligned tiles with an index.
//
// Tile rule (paper 2 §IV-B): a tile holds T consecutive tokens of one KV head
// of one layer, K then V, and T is chosen so that the tile fills one 16 KiB
// flash page in FP16: T = 16384 B / (2 · head_dim · 2 B). brown-llama
// (head_dim 64) gives T = 64; head_dim 128 gives the paper's 32. This store
// keeps 4-byte elements (FP32, or int32 for the integer engine), so one tile
// spans 2 pages; every tile starts on a 16 KiB boundary of tiles.bin, and a
// document's last, partial tile is zero-padded to the full tile.
//
// Keys are stored BEFORE RoPE, so blending re-rotates them to whatever
// position the document takes in the prompt. Values carry no position.
//
// On disk, STORE/ holds tiles.bin (the tiles) and index.json (format,
// engine, model fingerprint, shape, T, per document: id, tokens, token count,
// checksum of the tokens, per tile: byte offset and FNV-1a 64 checksum). Both are written through
// AtomicFile, tiles first and the index last. load() checks every tile's
// checksum and the index's consistency.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ispsim::rag {

constexpr int kPageBytes = 16384;  // MemLLM's flash page (SPEC §2; paper 2 §V-A)
constexpr int kFp16Bytes = 2;

// T = kPageBytes / (2 · head_dim · kFp16Bytes), at least 1. BadInput for head_dim < 1.
int tile_tokens_for(int head_dim);

struct StoreShape {
  int num_layers = 0;
  int num_kv_heads = 0;
  int head_dim = 0;
  int tile_tokens = 0;  // T
  int kv_dim() const { return num_kv_heads * head_dim; }
  // Bytes of one tile in the store (K and V of T tokens of one head, 4-byte elements).
  int64_t tile_bytes() const { return int64_t{2} * tile_tokens * head_dim * 4; }
  // tile_bytes rounded up to whole pages: the stride between tiles in tiles.bin.
  int64_t tile_stride() const;
};

// One document's KV. Per layer, [token][kv_dim] row-major (KV head h at
// columns h·head_dim ...); keys before RoPE. The FP32 engine fills k/v, the
// integer engine k_int/v_int (int32 at that layer's k_frac/v_frac).
struct DocumentKv {
  std::string id;
  std::vector<int> tokens;
  std::vector<std::vector<float>> k, v;
  std::vector<std::vector<int32_t>> k_int, v_int;
  int token_count() const { return static_cast<int>(tokens.size()); }
};

class KvStore {
 public:
  // An empty store for documents computed by `engine` ("fp32" or "int16") on
  // the model with this fingerprint (RagModel::fingerprint()).
  KvStore(std::string engine, uint64_t fingerprint, StoreShape shape);

  // Adds a document; BadInput on a duplicate or empty id, no tokens, or KV of the wrong shape/kind.
  void add(DocumentKv doc);

  // Writes STORE/tiles.bin then STORE/index.json (creating the directory).
  void write(const std::string& dir) const;

  // Reads a store written by write(); checks the index and every tile's
  // checksum. BadInput("<dir>/<file>", ...) on anything inconsistent.
  static KvStore load(const std::string& dir);

  const std::string& engine() const { return engine_; }
  bool integer() const { return engine_ != "fp32"; }
  uint64_t fingerprint() const { return fingerprint_; }
  const StoreShape& shape() const { return shape_; }
  const std::string& dir() const { return dir_; }  // where it was loaded from; "" when built in memory
  const std::vector<DocumentKv>& documents() const { return documents_; }
  // BadInput("<dir or 'store'>", "no document 'x' ...") when absent.
  const DocumentKv& document(const std::string& id) const;
  // Tiles a document of n tokens occupies: layers · KV heads · ceil(n / T).
  int64_t tiles_for(int tokens) const;

 private:
  std::string engine_;
  uint64_t fingerprint_ = 0;
  StoreShape shape_;
  std::string dir_;
  std::vector<DocumentKv> documents_;
};

}  // namespace ispsim::rag
