#include "kernels/model/json_file.h"

#include <fstream>
#include <sstream>

#include "common/error.h"

namespace ispsim::model {

boost::json::object read_json_object(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw BadInput(path, "cannot open file");
  std::stringstream text;
  text << in.rdbuf();
  boost::system::error_code ec;
  boost::json::value root = boost::json::parse(text.str(), ec);
  if (ec) throw BadInput(path, "invalid JSON: " + ec.message());
  if (!root.is_object()) throw BadInput(path, "expected a JSON object at the top level");
  return std::move(root.as_object());
}

}  // namespace ispsim::model
