#include "kernels/dict/dictionary.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

#include <boost/json.hpp>

#include "common/atomic_file.h"
#include "common/error.h"
#include "kernels/model/safetensors.h"

namespace ispsim::dict {

void normalize_atoms(Dictionary& d) {
  for (int j = 0; j < d.atoms; ++j) {
    float* a = d.atom(j);
    double sq = 0.0;
    for (int i = 0; i < d.dim; ++i) sq += static_cast<double>(a[i]) * a[i];
    if (sq == 0.0) continue;
    const float inv = static_cast<float>(1.0 / std::sqrt(sq));
    for (int i = 0; i < d.dim; ++i) a[i] *= inv;
  }
}

Int8Dictionary quantize_per_tensor(const Dictionary& d) {
  Int8Dictionary out;
  out.atoms = d.atoms;
  out.dim = d.dim;
  float max_abs = 0.0f;
  for (float v : d.data) max_abs = std::max(max_abs, std::fabs(v));
  out.scale = max_abs > 0.0f ? max_abs / 127.0f : 1.0f;
  out.q.resize(d.data.size());
  for (size_t i = 0; i < d.data.size(); ++i)
    out.q[i] = static_cast<int8_t>(std::clamp(std::lround(d.data[i] / out.scale), -127L, 127L));
  return out;
}

Dictionary dequantize(const Int8Dictionary& d) {
  Dictionary out;
  out.atoms = d.atoms;
  out.dim = d.dim;
  out.data.resize(d.q.size());
  for (size_t i = 0; i < d.q.size(); ++i) out.data[i] = d.scale * static_cast<float>(d.q[i]);
  return out;
}

namespace {
std::string tensor_name(int layer, int stream, const char* what) {
  return "layers." + std::to_string(layer) + (stream == 0 ? ".k." : ".v.") + what;
}
}  // namespace

void save(const KvDictionaries& d, const std::string& path) {
  boost::json::object header;
  std::string data;
  for (int l = 0; l < d.layers; ++l) {
    for (int s = 0; s < 2; ++s) {
      const Int8Dictionary& x = d.dicts[static_cast<size_t>(l) * 2 + s];
      boost::json::object atoms;
      atoms["dtype"] = "I8";
      atoms["shape"] = boost::json::array{x.atoms, x.dim};
      atoms["data_offsets"] = boost::json::array{data.size(), data.size() + x.q.size()};
      data.append(reinterpret_cast<const char*>(x.q.data()), x.q.size());
      header[tensor_name(l, s, "atoms")] = atoms;
      boost::json::object scale;
      scale["dtype"] = "F32";
      scale["shape"] = boost::json::array{1};
      scale["data_offsets"] = boost::json::array{data.size(), data.size() + 4};
      char bytes[4];
      std::memcpy(bytes, &x.scale, 4);  // little-endian hosts only, as the reader
      data.append(bytes, 4);
      header[tensor_name(l, s, "scale")] = scale;
    }
  }
  std::string text = boost::json::serialize(header);
  while ((text.size() + 8) % 8 != 0) text.push_back(' ');  // data section 8-byte aligned
  AtomicFile file(path, true);
  uint64_t len = text.size();
  char len_bytes[8];
  for (int i = 0; i < 8; ++i) len_bytes[i] = static_cast<char>((len >> (8 * i)) & 0xff);
  file.stream().write(len_bytes, 8);
  file.stream() << text;
  file.stream().write(data.data(), static_cast<std::streamsize>(data.size()));
  file.commit();
}

KvDictionaries load(const std::string& path) {
  model::SafetensorsFile file(path);
  KvDictionaries d;
  const model::TensorInfo* first = file.find(tensor_name(0, 0, "atoms"));
  if (first == nullptr || first->shape.size() != 2)
    throw BadInput(path, "no tensor layers.0.k.atoms of shape [atoms, dim]: not a dictionary file");
  d.atoms = static_cast<int>(first->shape[0]);
  d.dim = static_cast<int>(first->shape[1]);
  while (file.find(tensor_name(d.layers, 0, "atoms")) != nullptr) ++d.layers;
  for (int l = 0; l < d.layers; ++l) {
    for (int s = 0; s < 2; ++s) {
      const std::string name = tensor_name(l, s, "atoms");
      const model::TensorInfo* info = file.find(name);
      if (info == nullptr || info->dtype != model::Dtype::kI8 || info->shape != first->shape)
        throw BadInput(path, name + " is missing or not I8 of shape " + model::shape_string(first->shape));
      Int8Dictionary x;
      x.atoms = d.atoms;
      x.dim = d.dim;
      const std::vector<int64_t> q = file.read_i64(name);
      x.q.resize(q.size());
      for (size_t i = 0; i < q.size(); ++i) {
        if (q[i] < -127 || q[i] > 127) throw BadInput(path, name + " holds -128 (INT8 dictionaries are symmetric)");
        x.q[i] = static_cast<int8_t>(q[i]);
      }
      const std::vector<float> scale = file.read_f32(tensor_name(l, s, "scale"));
      // Atoms are unit-norm, so no entry exceeds 1 and scale = max|D| / 127 is at most 1/127.
      if (scale.size() != 1 || !std::isfinite(scale[0]) || !(scale[0] > 0.0f) || scale[0] * 127.0f > 1.0001f)
        throw BadInput(path, tensor_name(l, s, "scale") +
                                 " must be one finite value in (0, 1/127]: the atoms are unit-norm (max |entry| / 127)");
      x.scale = scale[0];
      d.dicts.push_back(std::move(x));
    }
  }
  return d;
}

}  // namespace ispsim::dict
