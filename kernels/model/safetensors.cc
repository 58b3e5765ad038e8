#include "kernels/model/safetensors.h"

#include <boost/json.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/error.h"

namespace ispsim::model {

namespace json = boost::json;

namespace {

// The format's own limit on the header size (safetensors specification).
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;

bool parse_dtype(const std::string& s, Dtype& out) {
  static const std::pair<const char*, Dtype> kNames[] = {
      {"F64", Dtype::kF64}, {"F32", Dtype::kF32}, {"F16", Dtype::kF16}, {"BF16", Dtype::kBF16},
      {"I64", Dtype::kI64}, {"I32", Dtype::kI32}, {"I16", Dtype::kI16}, {"I8", Dtype::kI8},
      {"U8", Dtype::kU8},   {"BOOL", Dtype::kBool}};
  for (const auto& [name, dtype] : kNames)
    if (s == name) { out = dtype; return true; }
  return false;
}

template <typename T>
T load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);  // the data section need not be aligned
  return v;
}

}  // namespace

const char* dtype_name(Dtype dtype) {
  switch (dtype) {
    case Dtype::kF64: return "F64";
    case Dtype::kF32: return "F32";
    case Dtype::kF16: return "F16";
    case Dtype::kBF16: return "BF16";
    case Dtype::kI64: return "I64";
    case Dtype::kI32: return "I32";
    case Dtype::kI16: return "I16";
    case Dtype::kI8: return "I8";
    case Dtype::kU8: return "U8";
    case Dtype::kBool: return "BOOL";
  }
  return "?";
}

int dtype_bytes(Dtype dtype) {
  switch (dtype) {
    case Dtype::kF64: case Dtype::kI64: return 8;
    case Dtype::kF32: case Dtype::kI32: return 4;
    case Dtype::kF16: case Dtype::kBF16: case Dtype::kI16: return 2;
    case Dtype::kI8: case Dtype::kU8: case Dtype::kBool: return 1;
  }
  return 1;
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

float f16_to_f32(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);  // inf / NaN
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);  // rebias 15 -> 127
  } else if (mant == 0) {
    bits = sign;  // signed zero
  } else {
    // Subnormal half: normalise the mantissa into a float exponent.
    int e = -1;
    do { mant <<= 1; ++e; } while (!(mant & 0x400u));
    bits = sign | static_cast<uint32_t>(112 - e) << 23 | ((mant & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

float bf16_to_f32(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

SafetensorsFile::SafetensorsFile(const std::string& path) : path_(path) {
  // O_NONBLOCK: a FIFO without a writer is refused below instead of hanging here.
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd_ < 0) throw BadInput(path, std::string("cannot open file: ") + std::strerror(errno));
  struct stat st;
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw BadInput(path, "not a regular file");
  }
  size_ = static_cast<uint64_t>(st.st_size);
  if (size_ < 8) {
    ::close(fd_);
    throw BadInput(path, "truncated: " + std::to_string(size_) + " bytes, shorter than the 8-byte header length");
  }
  void* m = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd_, 0);
  if (m == MAP_FAILED) {
    ::close(fd_);
    throw BadInput(path, std::string("cannot map file: ") + std::strerror(errno));
  }
  map_ = static_cast<const unsigned char*>(m);
  try {
    parse_header(load<uint64_t>(map_));
  } catch (...) {
    ::munmap(const_cast<unsigned char*>(map_), size_);
    ::close(fd_);
    throw;
  }
}

SafetensorsFile::~SafetensorsFile() {
  if (map_) ::munmap(const_cast<unsigned char*>(map_), size_);
  if (fd_ >= 0) ::close(fd_);
}

void SafetensorsFile::parse_header(uint64_t header_len) {
  if (header_len > size_ - 8)
    throw BadInput(path_, "header length " + std::to_string(header_len) + " bytes exceeds the file (" +
                              std::to_string(size_) + " bytes): truncated or not a safetensors file");
  if (header_len > kMaxHeaderBytes)
    throw BadInput(path_, "header length " + std::to_string(header_len) + " bytes exceeds the 100 MB limit");
  data_ = map_ + 8 + header_len;
  data_size_ = size_ - 8 - header_len;

  boost::system::error_code ec;
  json::value root = json::parse(json::string_view(reinterpret_cast<const char*>(map_ + 8), header_len), ec);
  if (ec) throw BadInput(path_, "header is not valid JSON: " + ec.message());
  if (!root.is_object()) throw BadInput(path_, "header is not a JSON object");

  for (const auto& [key, value] : root.as_object()) {
    std::string name(key);
    if (name == "__metadata__") continue;
    const std::string where = "tensor '" + name + "': ";
    if (!value.is_object()) throw BadInput(path_, where + "header entry is not an object");
    const json::object& e = value.as_object();
    TensorInfo t;
    t.name = name;
    auto* dt = e.if_contains("dtype");
    if (!dt || !dt->is_string()) throw BadInput(path_, where + "missing dtype");
    if (!parse_dtype(std::string(dt->as_string()), t.dtype))
      throw BadInput(path_, where + "unknown dtype '" + std::string(dt->as_string()) + "'");
    auto* shape = e.if_contains("shape");
    if (!shape || !shape->is_array()) throw BadInput(path_, where + "missing shape");
    for (const json::value& d : shape->as_array()) {
      if (!d.is_int64() || d.as_int64() < 0) throw BadInput(path_, where + "shape has a non-integer or negative entry");
      t.shape.push_back(d.as_int64());
      if (t.shape.back() != 0 && t.numel > (int64_t{1} << 40) / t.shape.back())
        throw BadInput(path_, where + "shape " + shape_string(t.shape) + " is impossibly large");
      t.numel *= t.shape.back();
    }
    auto* off = e.if_contains("data_offsets");
    if (!off || !off->is_array() || off->as_array().size() != 2 || !off->as_array()[0].is_int64() ||
        !off->as_array()[1].is_int64() || off->as_array()[0].as_int64() < 0 || off->as_array()[1].as_int64() < 0)
      throw BadInput(path_, where + "data_offsets must be two non-negative integers");
    t.begin = static_cast<uint64_t>(off->as_array()[0].as_int64());
    t.end = static_cast<uint64_t>(off->as_array()[1].as_int64());
    if (t.begin > t.end || t.end > data_size_)
      throw BadInput(path_, where + "data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) +
                                ") lie outside the data section of " + std::to_string(data_size_) +
                                " bytes (file truncated?)");
    uint64_t need = static_cast<uint64_t>(t.numel) * dtype_bytes(t.dtype);
    if (t.end - t.begin != need)
      throw BadInput(path_, where + "data_offsets span " + std::to_string(t.end - t.begin) + " bytes but " +
                                dtype_name(t.dtype) + " " + shape_string(t.shape) + " needs " +
                                std::to_string(need) + " bytes");
    tensors_.emplace(name, std::move(t));
  }

  // No two tensors may share bytes.
  std::vector<const TensorInfo*> by_offset;
  for (const auto& [name, t] : tensors_)
    if (t.end > t.begin) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const TensorInfo* a, const TensorInfo* b) { return a->begin < b->begin; });
  for (size_t i = 1; i < by_offset.size(); ++i)
    if (by_offset[i]->begin < by_offset[i - 1]->end)
      throw BadInput(path_, "tensor '" + by_offset[i]->name + "': data_offsets overlap those of tensor '" +
                                by_offset[i - 1]->name + "'");
}

const TensorInfo* SafetensorsFile::find(const std::string& name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

const TensorInfo& SafetensorsFile::require(const std::string& name) const {
  const TensorInfo* t = find(name);
  if (!t) throw BadInput(path_, "tensor '" + name + "': missing");
  return *t;
}

std::vector<float> SafetensorsFile::read_f32(const std::string& name) const {
  const TensorInfo& t = require(name);
  std::vector<float> out(static_cast<size_t>(t.numel));
  const unsigned char* p = data_ + t.begin;
  switch (t.dtype) {
    case Dtype::kF32:
      std::memcpy(out.data(), p, out.size() * sizeof(float));
      break;
    case Dtype::kF16:
      for (size_t i = 0; i < out.size(); ++i) out[i] = f16_to_f32(load<uint16_t>(p + 2 * i));
      break;
    case Dtype::kBF16:
      for (size_t i = 0; i < out.size(); ++i) out[i] = bf16_to_f32(load<uint16_t>(p + 2 * i));
      break;
    default:
      throw BadInput(path_, "tensor '" + name + "': dtype " + dtype_name(t.dtype) +
                                " is not a float type (F32, F16, BF16 expected)");
  }
  // A NaN or infinite weight would poison every activation after it.
  for (size_t i = 0; i < out.size(); ++i)
    if (!std::isfinite(out[i]))
      throw BadInput(path_, "tensor '" + name + "': element " + std::to_string(i) + " is " +
                                (std::isnan(out[i]) ? "NaN" : "infinite"));
  return out;
}

std::vector<int64_t> SafetensorsFile::read_i64(const std::string& name) const {
  const TensorInfo& t = require(name);
  std::vector<int64_t> out(static_cast<size_t>(t.numel));
  const unsigned char* p = data_ + t.begin;
  for (size_t i = 0; i < out.size(); ++i) {
    switch (t.dtype) {
      case Dtype::kI64: out[i] = load<int64_t>(p + 8 * i); break;
      case Dtype::kI32: out[i] = load<int32_t>(p + 4 * i); break;
      case Dtype::kI16: out[i] = load<int16_t>(p + 2 * i); break;
      case Dtype::kI8: out[i] = load<int8_t>(p + i); break;
      case Dtype::kU8: out[i] = load<uint8_t>(p + i); break;
      default:
        throw BadInput(path_, "tensor '" + name + "': dtype " + dtype_name(t.dtype) + " is not an integer type");
    }
  }
  return out;
}

}  // namespace ispsim::model
