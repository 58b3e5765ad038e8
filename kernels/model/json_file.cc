#include "kernels/model/json_file.h"

#include <fstream>
#include <sstream>

#include "common/error.h"
#include "common/input_file.h"

namespace ispsim::model {

boost::json::object read_json_object(const std::string& path) {
  // Regular files only, at most kMaxTextInputBytes (a FIFO or /dev/zero fails at once).
  const std::string text = read_input_file(path);
  boost::system::error_code ec;
  boost::json::value root = boost::json::parse(text, ec);
  if (ec) throw BadInput(path, "invalid JSON: " + ec.message());
  if (!root.is_object()) throw BadInput(path, "expected a JSON object at the top level");
  return std::move(root.as_object());
}

}  // namespace ispsim::model
