// The tensors of a checkpoint directory: model.safetensors, or the shards named
// by model.safetensors.index.json ("weight_map": tensor name -> shard file).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kernels/model/safetensors.h"

namespace ispsim::model {

class Checkpoint {
 public:
  explicit Checkpoint(const std::string& dir);

  bool contains(const std::string& name) const { return where_.count(name) != 0; }
  // The tensor as FP32 after checking it exists and has exactly `shape`
  // (the shape the config implies); BadInput("<file>", "tensor 'x': ...") otherwise.
  std::vector<float> load(const std::string& name, const std::vector<int64_t>& shape) const;

 private:
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, const SafetensorsFile*> where_;
  std::string listing_;  // the file that lists the tensors, named when one is missing
};

}  // namespace ispsim::model
