#include "common/data_dir.h"

#include <filesystem>
#include <system_error>

namespace ispsim {

namespace fs = std::filesystem;

std::string installed_data_dir(const std::string& executable) {
  std::error_code ec;
  const fs::path root = (fs::path(executable).parent_path() / ISPSIM_BIN_TO_DATA_DIR).lexically_normal();
  // platforms/ is what every install holds; its absence means "not installed".
  if (!fs::is_directory(root / "platforms", ec)) return "";
  return root.string();
}

const std::string& data_dir() {
  static const std::string dir = [] {
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    const std::string installed = ec ? std::string() : installed_data_dir(self.string());
    return installed.empty() ? std::string(ISPSIM_SOURCE_DIR) : installed;
  }();
  return dir;
}

std::string data_path(const std::string& relative) { return data_dir() + "/" + relative; }

}  // namespace ispsim
