#include "schema/hardware_presets.h"

#include <google/protobuf/util/field_mask_util.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "common/error.h"
#include "schema/parameter_table.h"
#include "schema/platform_loader.h"
#include "schema/textproto_file.h"

namespace ispsim::schema {

namespace {

namespace fs = std::filesystem;

const std::map<std::string, std::vector<std::string>>& kind_groups() {
  static const std::map<std::string, std::vector<std::string>> groups = {{"host", {"host"}},
                                                                         {"ssd", {"nand", "link", "ssd"}}};
  return groups;
}

std::string group_of(const std::string& path) { return path.substr(0, path.find('.')); }

// The preset's parameter paths (groups only; name and description describe it).
std::vector<std::string> preset_paths(const Platform& preset) {
  std::vector<std::string> paths;
  for (const std::string& path : set_parameter_paths(preset))
    if (path != "name" && path != "description") paths.push_back(path);
  return paths;
}

HardwarePreset read_preset(const fs::path& file, Platform& contents) {
  parse_textproto_file(file.string(), contents);
  HardwarePreset preset{file.stem().string(), file.string(), "", contents.description()};
  const std::vector<std::string> paths = preset_paths(contents);
  if (paths.empty()) throw BadInput(preset.file, "a hardware preset sets no parameter");
  for (const auto& [kind, groups] : kind_groups())
    if (std::find(groups.begin(), groups.end(), group_of(paths[0])) != groups.end()) preset.kind = kind;
  const std::vector<std::string>* allowed = preset.kind.empty() ? nullptr : &kind_groups().at(preset.kind);
  for (const std::string& path : paths)
    if (!allowed || std::find(allowed->begin(), allowed->end(), group_of(path)) == allowed->end())
      throw BadInput(preset.file, "a hardware preset sets either host parameters or nand/link/ssd ones, not " + path +
                                      (preset.kind.empty() ? "" : " next to " + preset.kind + " parameters"));
  return preset;
}

std::string known_presets(const std::string& kind) {
  std::string names;
  for (const HardwarePreset& p : list_hardware_presets())
    if (p.kind == kind) names += (names.empty() ? "" : ", ") + p.name;
  return names.empty() ? "none" : names;
}

// The preset `name` of `kind` and its contents; BadInput naming the parameter.
Platform load_preset(const std::string& name, const std::string& kind) {
  const std::string where = kind + "_preset";
  for (const std::string& dir : platform_search_path()) {
    const fs::path file = fs::path(dir) / "hardware" / (name + ".textproto");
    std::error_code ec;
    if (name.find('/') != std::string::npos || !fs::is_regular_file(file, ec)) continue;
    Platform contents;
    const HardwarePreset preset = read_preset(file, contents);
    if (preset.kind != kind)
      throw BadInput(where, "'" + name + "' is a " + preset.kind + " preset (" + kind + " presets: " +
                                known_presets(kind) + ")");
    return contents;
  }
  throw BadInput(where, "no hardware preset '" + name + "' (" + kind + " presets: " + known_presets(kind) + ")");
}

}  // namespace

std::vector<HardwarePreset> list_hardware_presets() {
  std::map<std::string, HardwarePreset> by_name;  // the first directory wins, as for platforms
  for (const std::string& dir : platform_search_path()) {
    std::error_code ec;
    std::vector<fs::path> files;
    for (fs::directory_iterator it(fs::path(dir) / "hardware", ec), end; !ec && it != end; it.increment(ec))
      if (it->path().extension() == ".textproto") files.push_back(it->path());
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
      Platform contents;
      if (!by_name.count(file.stem().string())) by_name.emplace(file.stem().string(), read_preset(file, contents));
    }
  }
  std::vector<HardwarePreset> list;
  for (const auto& [name, preset] : by_name) list.push_back(preset);
  return list;
}

std::vector<std::string> apply_hardware_presets(Platform& platform, const std::vector<std::string>& keep,
                                                const std::vector<std::string>& used, const std::string& where) {
  std::vector<std::string> applied;
  for (const auto& [kind, name] : {std::pair<std::string, std::string>{"host", platform.host_preset()},
                                   {"ssd", platform.ssd_preset()}}) {
    if (name.empty()) continue;
    const Platform preset = load_preset(name, kind);
    google::protobuf::FieldMask mask;
    for (const std::string& path : preset_paths(preset)) {
      const bool group_used = used.empty() || std::find(used.begin(), used.end(), group_of(path)) != used.end();
      if (group_used && std::find(keep.begin(), keep.end(), path) == keep.end()) mask.add_paths(path);
    }
    if (mask.paths_size() == 0)
      throw BadInput(kind + "_preset " + name, "sets nothing that platform '" + platform.name() + "' (" + where +
                                                   ") uses or --set leaves to it");
    google::protobuf::util::FieldMaskUtil::MergeMessageTo(preset, mask, {}, &platform);
    applied.insert(applied.end(), mask.paths().begin(), mask.paths().end());
  }
  return applied;
}

}  // namespace ispsim::schema
