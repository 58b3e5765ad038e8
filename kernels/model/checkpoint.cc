#include "kernels/model/checkpoint.h"

#include <boost/json.hpp>

#include <fstream>

#include "common/error.h"
#include "kernels/model/json_file.h"

namespace ispsim::model {

namespace json = boost::json;

Checkpoint::Checkpoint(const std::string& dir) {
  const std::string index_path = dir + "/model.safetensors.index.json";
  if (!std::ifstream(index_path, std::ios::binary)) {
    listing_ = dir + "/model.safetensors";
    files_.push_back(std::make_unique<SafetensorsFile>(listing_));
    for (const auto& [name, info] : files_.back()->tensors()) where_[name] = files_.back().get();
    return;
  }
  listing_ = index_path;
  const json::object root = read_json_object(index_path);
  const json::value* map = root.if_contains("weight_map");
  if (!map || !map->is_object()) throw BadInput(index_path, "missing object 'weight_map'");

  std::map<std::string, const SafetensorsFile*> opened;
  for (const auto& [key, value] : map->as_object()) {
    std::string name(key);
    if (!value.is_string()) throw BadInput(index_path, "weight_map entry '" + name + "' is not a file name");
    std::string shard(value.as_string());
    if (shard.empty() || shard.find('/') != std::string::npos)
      throw BadInput(index_path, "weight_map entry '" + name + "': '" + shard + "' is not a file in the directory");
    auto it = opened.find(shard);
    if (it == opened.end()) {
      files_.push_back(std::make_unique<SafetensorsFile>(dir + "/" + shard));
      it = opened.emplace(shard, files_.back().get()).first;
    }
    if (!it->second->find(name))
      throw BadInput(it->second->path(), "tensor '" + name + "': listed in model.safetensors.index.json but missing");
    where_[name] = it->second;
  }
}

std::vector<float> Checkpoint::load(const std::string& name, const std::vector<int64_t>& shape) const {
  auto it = where_.find(name);
  if (it == where_.end()) throw BadInput(listing_, "tensor '" + name + "': missing");
  const TensorInfo& info = *it->second->find(name);
  if (info.shape != shape)
    throw BadInput(it->second->path(), "tensor '" + name + "': shape " + shape_string(info.shape) +
                                           " does not match " + shape_string(shape) + " from config.json");
  return it->second->read_f32(name);
}

}  // namespace ispsim::model
