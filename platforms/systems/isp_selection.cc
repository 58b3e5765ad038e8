#include "platforms/systems/isp_selection.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "common/error.h"
#include "models/isp/page_compute.h"
#include "models/isp/register_all.h"

namespace ispsim::systems {

namespace {

const char* const kSelection = "modules.isp_accelerator";

std::string joined(const std::vector<std::string>& names, const std::string& prefix = "") {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + prefix + n;
  return out;
}

// "isp.systolic_pair.rows" -> "systolic_pair"; "" for a path outside isp.
std::string isp_field(const std::string& path) {
  if (path.rfind("isp.", 0) != 0) return "";
  const std::string rest = path.substr(4);
  return rest.substr(0, rest.find('.'));
}

}  // namespace

bool has_isp(const schema::Platform& platform) {
  return platform.placement().prefill_attention() == schema::PlacementParams::SSD_ISP ||
         platform.placement().decode_attention() == schema::PlacementParams::SSD_ISP;
}

void check_isp_accelerator(const schema::LoadedPlatform& loaded, bool isp, const std::string& system) {
  const std::string& name = loaded.platform.modules().isp_accelerator();
  if (!isp) {
    if (loaded.origin(kSelection) != "default")
      throw BadInput(loaded.file, std::string(kSelection) + " = '" + name + "' is set (" + loaded.origin(kSelection) +
                                      "), but platform '" + loaded.platform.name() + "' has no ISP accelerator (" +
                                      system + "), so the setting would be ignored");
    return;
  }
  isp::register_all();
  if (!isp::accelerators().contains(name))
    throw BadInput(loaded.file, std::string(kSelection) + " = '" + name + "' is no ISP accelerator (known: " +
                                    joined(isp::accelerators().names()) + ")");
  const std::vector<std::string> read = isp::parameters_read_by(name);
  std::vector<std::string> set = loaded.from_file;
  set.insert(set.end(), loaded.from_overrides.begin(), loaded.from_overrides.end());
  for (const std::string& path : set) {
    const std::string field = isp_field(path);
    if (field.empty() || std::find(read.begin(), read.end(), field) != read.end()) continue;
    throw BadInput(loaded.file, path + " is set (" + loaded.origin(path) + "), but the ISP accelerator '" + name +
                                    "' does not read it (it reads " + joined(read, "isp.") + ")");
  }
}

}  // namespace ispsim::systems
