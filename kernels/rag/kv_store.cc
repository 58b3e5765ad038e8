#include "kernels/rag/kv_store.h"

#include <boost/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/input_file.h"
#include "kernels/model/json_file.h"
#include "kernels/rag/fnv1a.h"

namespace ispsim::rag {
namespace {

namespace json = boost::json;
constexpr const char* kFormat = "ispsim-kv-store-1";

std::string element_name(bool integer) { return integer ? "int32" : "float32"; }

// Copies one tile (K then V of tokens [first, first + T) of KV head h) into
// `tile`, zero-padding past the document's end. Elements are 4 bytes, copied
// in host byte order (little-endian on every supported machine).
template <typename T>
void pack_tile(const StoreShape& s, const std::vector<T>& k, const std::vector<T>& v, int tokens, int head, int first,
               std::vector<char>& tile) {
  std::fill(tile.begin(), tile.end(), 0);
  const size_t row_bytes = static_cast<size_t>(s.head_dim) * 4;
  for (int t = 0; t < s.tile_tokens && first + t < tokens; ++t) {
    const size_t src = static_cast<size_t>(first + t) * s.kv_dim() + static_cast<size_t>(head) * s.head_dim;
    std::memcpy(&tile[t * row_bytes], &k[src], row_bytes);
    std::memcpy(&tile[(s.tile_tokens + t) * row_bytes], &v[src], row_bytes);
  }
}

template <typename T>
void unpack_tile(const StoreShape& s, const char* tile, int tokens, int head, int first, std::vector<T>& k,
                 std::vector<T>& v) {
  const size_t row_bytes = static_cast<size_t>(s.head_dim) * 4;
  for (int t = 0; t < s.tile_tokens && first + t < tokens; ++t) {
    const size_t dst = static_cast<size_t>(first + t) * s.kv_dim() + static_cast<size_t>(head) * s.head_dim;
    std::memcpy(&k[dst], tile + t * row_bytes, row_bytes);
    std::memcpy(&v[dst], tile + (s.tile_tokens + t) * row_bytes, row_bytes);
  }
}

// Field access with one-line errors naming the index file.
struct IndexReader {
  std::string path;
  const json::value& field(const json::object& o, const char* name, const std::string& where) const {
    const json::value* v = o.if_contains(name);
    if (!v) throw BadInput(path, where + "missing field '" + name + "'");
    return *v;
  }
  int64_t integer(const json::object& o, const char* name, const std::string& where = "") const {
    const json::value& v = field(o, name, where);
    if (!v.is_int64()) throw BadInput(path, where + "field '" + name + "' must be an integer");
    return v.as_int64();
  }
  std::string string(const json::object& o, const char* name, const std::string& where = "") const {
    const json::value& v = field(o, name, where);
    if (!v.is_string()) throw BadInput(path, where + "field '" + name + "' must be a string");
    return std::string(v.as_string());
  }
  const json::array& array(const json::object& o, const char* name, const std::string& where = "") const {
    const json::value& v = field(o, name, where);
    if (!v.is_array()) throw BadInput(path, where + "field '" + name + "' must be an array");
    return v.as_array();
  }
  uint64_t hex(const json::object& o, const char* name, const std::string& where = "") const {
    const std::string s = string(o, name, where);
    if (s.size() != 16 || s.find_first_not_of("0123456789abcdef") != std::string::npos)
      throw BadInput(path, where + "field '" + name + "' must be 16 lower-case hex digits, got '" + s + "'");
    return std::stoull(s, nullptr, 16);
  }
};

// The token ids as 4-byte integers: guards the one part of a document that lives in the index.
uint64_t tokens_checksum(const std::vector<int>& tokens) {
  return fnv1a64(tokens.data(), tokens.size() * sizeof(int));
}

// FP32 tiles whose checksum was recomputed over a NaN or an infinity would pass
// the integrity check; attention over them would poison every answer.
void check_finite(const DocumentKv& doc, const std::string& tiles_path, const std::string& where) {
  for (size_t l = 0; l < doc.k.size(); ++l)
    for (const auto* values : {&doc.k[l], &doc.v[l]})
      for (float x : *values)
        if (!std::isfinite(x))
          throw BadInput(tiles_path, where + "layer " + std::to_string(l) + (values == &doc.k[l] ? " K" : " V") +
                                         " holds a NaN or infinite value");
}

}  // namespace

int tile_tokens_for(int head_dim) {
  if (head_dim < 1) throw BadInput("kv store", "head_dim must be >= 1, got " + std::to_string(head_dim));
  const int t = kPageBytes / (2 * head_dim * kFp16Bytes);
  return t > 0 ? t : 1;
}

int64_t StoreShape::tile_stride() const {
  return (tile_bytes() + kPageBytes - 1) / kPageBytes * kPageBytes;
}

KvStore::KvStore(std::string engine, uint64_t fingerprint, StoreShape shape)
    : engine_(std::move(engine)), fingerprint_(fingerprint), shape_(shape) {
  if (shape_.num_layers < 1 || shape_.num_kv_heads < 1 || shape_.head_dim < 1 || shape_.tile_tokens < 1)
    throw BadInput("kv store", "shape needs at least one layer, KV head, head dimension and tile token");
}

int64_t KvStore::tiles_for(int tokens) const {
  const int64_t blocks = (tokens + shape_.tile_tokens - 1) / shape_.tile_tokens;
  return int64_t{shape_.num_layers} * shape_.num_kv_heads * blocks;
}

void KvStore::add(DocumentKv doc) {
  const std::string where = "kv store: document '" + doc.id + "'";
  if (doc.id.empty()) throw BadInput("kv store", "a document has an empty id");
  if (doc.tokens.empty()) throw BadInput(where, "has no tokens");
  for (const DocumentKv& d : documents_)
    if (d.id == doc.id) throw BadInput(where, "appears twice");
  const size_t cells = doc.tokens.size() * static_cast<size_t>(shape_.kv_dim());
  const size_t layers = static_cast<size_t>(shape_.num_layers);
  auto check = [&](size_t n_k, size_t n_v, auto&& layer_size) {
    if (n_k != layers || n_v != layers)
      throw BadInput(where, "KV has " + std::to_string(n_k) + " layers, expected " + std::to_string(layers) +
                                " (" + element_name(integer()) + " elements for the " + engine_ + " engine)");
    for (size_t l = 0; l < layers; ++l)
      if (layer_size(l) != std::make_pair(cells, cells))
        throw BadInput(where, "layer " + std::to_string(l) + " KV has the wrong size for " +
                                  std::to_string(doc.tokens.size()) + " tokens");
  };
  if (integer())
    check(doc.k_int.size(), doc.v_int.size(), [&](size_t l) { return std::make_pair(doc.k_int[l].size(), doc.v_int[l].size()); });
  else
    check(doc.k.size(), doc.v.size(), [&](size_t l) { return std::make_pair(doc.k[l].size(), doc.v[l].size()); });
  documents_.push_back(std::move(doc));
}

const DocumentKv& KvStore::document(const std::string& id) const {
  for (const DocumentKv& d : documents_)
    if (d.id == id) return d;
  std::string known;
  for (size_t i = 0; i < documents_.size() && i < 5; ++i) known += (i ? ", " : "") + documents_[i].id;
  if (documents_.size() > 5) known += ", ...";
  throw BadInput(dir_.empty() ? "kv store" : dir_,
                 "no document '" + id + "' in the store (" + std::to_string(documents_.size()) +
                     " documents: " + known + ")");
}

void KvStore::write(const std::string& dir) const {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) throw BadInput(dir, "exists and is not a directory");
  fs::create_directories(dir, ec);
  if (ec) throw BadInput(dir, "cannot create the store directory: " + ec.message());

  const StoreShape& s = shape_;
  std::vector<char> tile(static_cast<size_t>(s.tile_bytes()));
  const std::vector<char> padding(static_cast<size_t>(s.tile_stride() - s.tile_bytes()), 0);
  json::array docs;
  AtomicFile tiles(dir + "/tiles.bin", true);
  int64_t offset = 0;
  for (const DocumentKv& d : documents_) {
    json::array tile_list;
    for (int l = 0; l < s.num_layers; ++l)
      for (int h = 0; h < s.num_kv_heads; ++h)
        for (int first = 0; first < d.token_count(); first += s.tile_tokens) {
          if (integer())
            pack_tile(s, d.k_int[l], d.v_int[l], d.token_count(), h, first, tile);
          else
            pack_tile(s, d.k[l], d.v[l], d.token_count(), h, first, tile);
          tiles.stream().write(tile.data(), static_cast<std::streamsize>(tile.size()));
          tiles.stream().write(padding.data(), static_cast<std::streamsize>(padding.size()));
          tile_list.push_back(json::object{{"offset", offset}, {"fnv1a64", hex64(fnv1a64(tile.data(), tile.size()))}});
          offset += s.tile_stride();
        }
    json::array tokens;
    for (int t : d.tokens) tokens.push_back(t);
    docs.push_back(json::object{{"id", d.id},
                                {"token_count", d.token_count()},
                                {"tokens", std::move(tokens)},
                                {"tokens_fnv1a64", hex64(tokens_checksum(d.tokens))},
                                {"tiles", std::move(tile_list)}});
  }
  tiles.commit();

  json::object index{
      {"format", kFormat},
      {"engine", engine_},
      {"model_fingerprint", hex64(fingerprint_)},
      {"element", element_name(integer())},
      {"layers", s.num_layers},
      {"kv_heads", s.num_kv_heads},
      {"head_dim", s.head_dim},
      {"tile_tokens", s.tile_tokens},
      {"page_bytes", kPageBytes},
      {"tile_bytes", s.tile_bytes()},
      {"tile_stride_bytes", s.tile_stride()},
      {"tiles_bytes", offset},
      {"key_positions", "pre-RoPE"},
      {"documents", std::move(docs)},
  };
  AtomicFile out(dir + "/index.json");
  out.stream() << json::serialize(index) << "\n";
  out.commit();
}

KvStore KvStore::load(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw BadInput(dir, "is not a KV store directory");
  IndexReader r{dir + "/index.json"};
  if (!fs::exists(r.path, ec)) throw BadInput(dir, "is not a KV store directory (no index.json)");
  const json::object index = model::read_json_object(r.path);
  const std::string format = r.string(index, "format");
  if (format != kFormat) throw BadInput(r.path, "format '" + format + "', expected '" + kFormat + "'");
  const std::string engine = r.string(index, "engine");
  const bool integer = engine != "fp32";
  if (r.string(index, "element") != element_name(integer))
    throw BadInput(r.path, "element type does not match the " + engine + " engine");
  StoreShape s;
  s.num_layers = static_cast<int>(r.integer(index, "layers"));
  s.num_kv_heads = static_cast<int>(r.integer(index, "kv_heads"));
  s.head_dim = static_cast<int>(r.integer(index, "head_dim"));
  s.tile_tokens = static_cast<int>(r.integer(index, "tile_tokens"));
  if (s.num_layers < 1 || s.num_kv_heads < 1 || s.head_dim < 1 || s.head_dim > 65536 || s.num_layers > 65536 ||
      s.num_kv_heads > 65536)
    throw BadInput(r.path, "layers, kv_heads and head_dim must be in [1, 65536]");
  if (s.tile_tokens != tile_tokens_for(s.head_dim))
    throw BadInput(r.path, "tile_tokens " + std::to_string(s.tile_tokens) + " breaks the page rule (head_dim " +
                               std::to_string(s.head_dim) + " gives " + std::to_string(tile_tokens_for(s.head_dim)) + ")");
  if (r.integer(index, "page_bytes") != kPageBytes || r.integer(index, "tile_stride_bytes") != s.tile_stride())
    throw BadInput(r.path, "page_bytes or tile_stride_bytes does not match this build's 16384-byte pages");
  KvStore store(engine, r.hex(index, "model_fingerprint"), s);
  store.dir_ = dir;

  const std::string tiles_path = dir + "/tiles.bin";
  const int64_t expected_bytes = r.integer(index, "tiles_bytes");
  // Regular file only (no FIFO hang), and never more than the index announces.
  const std::string bytes =
      read_input_file(tiles_path, static_cast<uint64_t>(std::max<int64_t>(expected_bytes, 0)) + 1);
  if (static_cast<int64_t>(bytes.size()) != expected_bytes)
    throw BadInput(tiles_path, "has " + std::to_string(bytes.size()) + " bytes, the index says " +
                                   std::to_string(expected_bytes) + " (truncated or replaced)");

  int64_t offset = 0;
  for (const json::value& dv : r.array(index, "documents")) {
    if (!dv.is_object()) throw BadInput(r.path, "every entry of 'documents' must be an object");
    const json::object& d = dv.as_object();
    DocumentKv doc;
    doc.id = r.string(d, "id", "a document: ");
    const std::string where = "document '" + doc.id + "': ";
    const int64_t count = r.integer(d, "token_count", where);
    for (const json::value& t : r.array(d, "tokens", where)) {
      if (!t.is_int64() || t.as_int64() < 0 || t.as_int64() > INT32_MAX)
        throw BadInput(r.path, where + "tokens must be non-negative integers");
      doc.tokens.push_back(static_cast<int>(t.as_int64()));
    }
    if (count < 1 || count != static_cast<int64_t>(doc.tokens.size()))
      throw BadInput(r.path, where + "token_count " + std::to_string(count) + " but " +
                                 std::to_string(doc.tokens.size()) + " tokens");
    if (r.hex(d, "tokens_fnv1a64", where) != tokens_checksum(doc.tokens))
      throw BadInput(r.path, where + "tokens fail their checksum: the index is corrupted");
    const json::array& tiles = r.array(d, "tiles", where);
    if (static_cast<int64_t>(tiles.size()) != store.tiles_for(doc.token_count()))
      throw BadInput(r.path, where + std::to_string(tiles.size()) + " tiles, expected " +
                                 std::to_string(store.tiles_for(doc.token_count())));
    const size_t cells = doc.tokens.size() * static_cast<size_t>(s.kv_dim());
    if (integer) {
      doc.k_int.assign(s.num_layers, std::vector<int32_t>(cells));
      doc.v_int.assign(s.num_layers, std::vector<int32_t>(cells));
    } else {
      doc.k.assign(s.num_layers, std::vector<float>(cells));
      doc.v.assign(s.num_layers, std::vector<float>(cells));
    }
    size_t i = 0;
    for (int l = 0; l < s.num_layers; ++l)
      for (int h = 0; h < s.num_kv_heads; ++h)
        for (int first = 0; first < doc.token_count(); first += s.tile_tokens, ++i) {
          if (!tiles[i].is_object()) throw BadInput(r.path, where + "every tile must be an object");
          const json::object& t = tiles[i].as_object();
          const std::string tile_name = where + "tile " + std::to_string(i) + " (layer " + std::to_string(l) +
                                        ", KV head " + std::to_string(h) + ", tokens " + std::to_string(first) + ".." +
                                        std::to_string(std::min(first + s.tile_tokens, doc.token_count()) - 1) + ")";
          if (r.integer(t, "offset", tile_name + ": ") != offset)
            throw BadInput(r.path, tile_name + ": offset is not the next page-aligned slot " + std::to_string(offset));
          if (offset + s.tile_bytes() > static_cast<int64_t>(bytes.size()))
            throw BadInput(tiles_path, tile_name + " lies past the end of the file");
          const char* data = bytes.data() + offset;
          const uint64_t stored = r.hex(t, "fnv1a64", tile_name + ": ");
          const uint64_t actual = fnv1a64(data, static_cast<size_t>(s.tile_bytes()));
          if (stored != actual)
            throw BadInput(tiles_path, tile_name + " fails its checksum (index " + hex64(stored) + ", data " +
                                           hex64(actual) + "): the store is corrupted");
          if (integer)
            unpack_tile(s, data, doc.token_count(), h, first, doc.k_int[l], doc.v_int[l]);
          else
            unpack_tile(s, data, doc.token_count(), h, first, doc.k[l], doc.v[l]);
          offset += s.tile_stride();
        }
    check_finite(doc, tiles_path, where);
    for (const DocumentKv& other : store.documents_)
      if (other.id == doc.id) throw BadInput(r.path, where + "appears twice");
    store.documents_.push_back(std::move(doc));
  }
  if (offset != expected_bytes)
    throw BadInput(r.path, "the tiles cover " + std::to_string(offset) + " bytes, tiles_bytes says " +
                               std::to_string(expected_bytes));
  return store;
}

}  // namespace ispsim::rag
