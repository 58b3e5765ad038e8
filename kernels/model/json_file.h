// Reading the JSON files of a Hugging Face checkpoint (config.json,
// tokenizer.json, model.safetensors.index.json).
#pragma once

#include <boost/json.hpp>

#include <string>

namespace ispsim::model {

// The top-level object of the JSON file at `path`. Throws BadInput(path, ...)
// if the file cannot be read, is not JSON, or is not an object.
boost::json::object read_json_object(const std::string& path);

}  // namespace ispsim::model
