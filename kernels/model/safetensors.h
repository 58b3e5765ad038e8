// Reader for the safetensors format (8-byte little-endian header length, a JSON
// header {name: {dtype, shape, data_offsets}}, then the raw data). The file is
// memory-mapped; the header is validated completely on open so that a corrupt
// file fails there with one clear line, never later with a crash.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ispsim::model {

enum class Dtype { kF64, kF32, kF16, kBF16, kI64, kI32, kI16, kI8, kU8, kBool };

const char* dtype_name(Dtype dtype);
int dtype_bytes(Dtype dtype);

struct TensorInfo {
  std::string name;
  Dtype dtype = Dtype::kF32;
  std::vector<int64_t> shape;
  int64_t numel = 1;
  uint64_t begin = 0, end = 0;  // byte offsets relative to the data section
};

std::string shape_string(const std::vector<int64_t>& shape);

class SafetensorsFile {
 public:
  // Maps and validates the file; throws BadInput(path, ...) for any defect.
  explicit SafetensorsFile(const std::string& path);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& path() const { return path_; }
  const std::map<std::string, TensorInfo>& tensors() const { return tensors_; }
  // nullptr when absent.
  const TensorInfo* find(const std::string& name) const;

  // The tensor converted to FP32; F32, F16 and BF16 only. A NaN or infinite
  // element is refused (BadInput naming the file, tensor and element).
  std::vector<float> read_f32(const std::string& name) const;
  // The tensor converted to int64; I64, I32, I16, I8, U8 only.
  std::vector<int64_t> read_i64(const std::string& name) const;

 private:
  const TensorInfo& require(const std::string& name) const;
  void parse_header(uint64_t header_len);

  std::string path_;
  int fd_ = -1;
  const unsigned char* map_ = nullptr;
  uint64_t size_ = 0;
  const unsigned char* data_ = nullptr;  // start of the data section
  uint64_t data_size_ = 0;
  std::map<std::string, TensorInfo> tensors_;
};

// IEEE half and bfloat16 bit patterns to float.
float f16_to_f32(uint16_t bits);
float bf16_to_f32(uint16_t bits);

}  // namespace ispsim::model
