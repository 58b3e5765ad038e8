// Overcomplete dictionaries for KV compression (paper 1 §3.2.2): one per layer
// and per stream (keys, values), atoms of head_dim elements, trained in FP32
// with unit-norm atoms and stored as INT8 with one scale per tensor.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ispsim::dict {

// FP32 dictionary: atom j is data[j*dim .. j*dim+dim) (row-major [atoms][dim],
// the [out][in] layout model::linear() takes, so D^T r is one linear() call).
struct Dictionary {
  int atoms = 0;
  int dim = 0;
  std::vector<float> data;

  const float* atom(int j) const { return &data[static_cast<size_t>(j) * dim]; }
  float* atom(int j) { return &data[static_cast<size_t>(j) * dim]; }
};

// Per-tensor INT8 dictionary: value = scale * q, q in [-127, 127].
struct Int8Dictionary {
  int atoms = 0;
  int dim = 0;
  std::vector<int8_t> q;
  float scale = 0.0f;

  const int8_t* atom(int j) const { return &q[static_cast<size_t>(j) * dim]; }
};

// Scales every atom to unit L2 norm (a zero atom stays zero).
void normalize_atoms(Dictionary& d);

// scale = max|D| / 127, q = round(D / scale).
Int8Dictionary quantize_per_tensor(const Dictionary& d);

// The FP32 dictionary the INT8 one represents (scale * q).
Dictionary dequantize(const Int8Dictionary& d);

enum class Stream { kKey = 0, kValue = 1 };

// The dictionaries of one model: [layer][stream].
struct KvDictionaries {
  int layers = 0;
  int atoms = 0;
  int dim = 0;
  std::vector<Int8Dictionary> dicts;  // index layer * 2 + stream

  const Int8Dictionary& get(int layer, Stream s) const { return dicts[static_cast<size_t>(layer) * 2 + static_cast<int>(s)]; }
  // INT8 bytes of all dictionaries (scales excluded), for reports.
  uint64_t bytes() const { return static_cast<uint64_t>(layers) * 2 * atoms * dim; }
};

// safetensors file: "layers.<l>.<k|v>.atoms" I8 [atoms, dim] and
// "layers.<l>.<k|v>.scale" F32 [1].
// Written atomically; load() throws BadInput(path, ...) on any defect.
void save(const KvDictionaries& d, const std::string& path);
KvDictionaries load(const std::string& path);

}  // namespace ispsim::dict
