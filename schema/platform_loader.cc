#include "schema/platform_loader.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>

#include <google/protobuf/field_mask.pb.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/util/field_mask_util.h>

#include "common/data_dir.h"
#include "common/error.h"
#include "schema/defaults.h"
#include "schema/field_text.h"
#include "schema/hardware_presets.h"
#include "schema/overrides.h"
#include "schema/parameter_table.h"
#include "schema/textproto_file.h"
#include "schema/validation.h"

namespace ispsim::schema {

namespace fs = std::filesystem;

namespace {

constexpr const char* kExtension = ".textproto";

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string joined(const std::vector<std::string>& items, const std::string& separator) {
  std::string text;
  for (const auto& item : items) text += (text.empty() ? "" : separator) + item;
  return text;
}

}  // namespace

std::string LoadedPlatform::origin(const std::string& path) const {
  if (std::find(from_overrides.begin(), from_overrides.end(), path) != from_overrides.end()) {
    return "--set";
  }
  if (std::find(from_presets.begin(), from_presets.end(), path) != from_presets.end()) return "preset";
  if (std::find(from_file.begin(), from_file.end(), path) != from_file.end()) return "file";
  return "default";
}

std::vector<std::string> platform_search_path() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("ISPSIM_PLATFORM_PATH")) {
    std::string list = env;
    std::string::size_type start = 0;
    while (start <= list.size()) {
      const auto colon = std::min(list.find(':', start), list.size());
      if (colon > start) dirs.push_back(list.substr(start, colon - start));
      start = colon + 1;
    }
  }
  dirs.push_back(data_path("platforms"));
  return dirs;
}

std::vector<PlatformFile> list_platform_files() {
  std::map<std::string, std::string> by_name;  // sorted; first directory wins
  for (const std::string& dir : platform_search_path()) {
    std::error_code ec;
    std::vector<fs::path> files;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->path().extension() == kExtension) files.push_back(it->path());
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) by_name.emplace(file.stem().string(), file.string());
  }
  std::vector<PlatformFile> list;
  for (const auto& [name, file] : by_name) list.push_back({name, file});
  return list;
}

std::vector<std::string> platforms_in_group(const std::string& group) {
  std::vector<std::pair<uint32_t, std::string>> ranked;
  for (const PlatformFile& f : list_platform_files()) {
    const Platform p = load_platform_file(f.file).platform;
    if (p.group() == group) ranked.emplace_back(p.group_rank(), f.name);
  }
  std::sort(ranked.begin(), ranked.end());
  std::vector<std::string> names;
  for (const auto& [rank, name] : ranked) names.push_back(name);
  return names;
}

bool looks_like_path(const std::string& name_or_path) {
  return name_or_path.find('/') != std::string::npos || ends_with(name_or_path, kExtension);
}

std::string find_platform_file(const std::string& name_or_path) {
  if (name_or_path.empty()) throw BadInput("platform", "the platform name is empty");
  if (looks_like_path(name_or_path)) return name_or_path;
  for (const std::string& dir : platform_search_path()) {
    const fs::path candidate = fs::path(dir) / (name_or_path + kExtension);
    std::error_code ec;
    if (fs::exists(candidate, ec)) return candidate.string();
  }
  std::vector<std::string> known;
  for (const PlatformFile& p : list_platform_files()) known.push_back(p.name);
  throw BadInput(printable(name_or_path), "no platform of this name in " +
                                   joined(platform_search_path(), ":") + " (known: " +
                                   (known.empty() ? "none" : joined(known, ", ")) + ")");
}

namespace {

// The top-level parameter groups the system of this platform assembles (see
// platforms/systems: nand_stream_run.cc, blend_system.cc); empty when every
// group counts (a program no system runs yet). The ISP groups matter only when
// some attention runs in the SSD.
std::vector<std::string> used_groups(const Platform& p) {
  switch (p.program()) {
    case Platform::MICROBENCHMARK:
      return {"modules", "nand", "stream"};
    case Platform::FULL_PREFILL:
    case Platform::PRECOMPUTED_BLEND:
    case Platform::PRECOMPUTED_BLEND_FUSED: {
      std::vector<std::string> groups = {"modules", "nand", "ssd", "ftl", "host", "link", "placement"};
      if (p.placement().prefill_attention() == PlacementParams::SSD_ISP ||
          p.placement().decode_attention() == PlacementParams::SSD_ISP) {
        groups.push_back("isp");
        groups.push_back("flash_coordinator");
      }
      return groups;
    }
    default:
      return {};
  }
}

// Whether the system of `p` reads the parameter at `path`. AiF's in-flash GEMV
// (decode_linear IN_FLASH) has no ISP but charges its MACs at isp.mac_pj.
bool setting_used(const Platform& p, const std::vector<std::string>& groups, const std::string& path) {
  const std::string group = path.substr(0, path.find('.'));
  if (group == path || std::find(groups.begin(), groups.end(), group) != groups.end()) return true;
  return path == "isp.mac_pj" && p.placement().decode_linear() == PlacementParams::IN_FLASH;
}

// A setting the platform would ignore, from the file or from --set, is bad
// input, not a silent no-op.
void check_settings_used(const LoadedPlatform& loaded) {
  const Platform& p = loaded.platform;
  const std::vector<std::string> groups = used_groups(p);
  if (groups.empty()) return;
  const auto ignored = [&](const std::string& path) {
    return "platform '" + p.name() + "' (" + Platform::Program_Name(p.program()) + ") has no " +
           path.substr(0, path.find('.')) + " in its system, so " + path + " would be ignored (it uses: " +
           joined(groups, ", ") + ")";
  };
  for (const std::string& path : loaded.from_file)
    if (!setting_used(p, groups, path)) throw BadInput(loaded.file, ignored(path));
  for (const std::string& path : loaded.from_overrides)
    if (!setting_used(p, groups, path)) throw BadInput("--set " + path, ignored(path));
}

// Everything after parsing: defaults, overrides, checks.
void configure(LoadedPlatform& loaded, const std::vector<std::string>& overrides) {
  loaded.from_file = set_parameter_paths(loaded.platform);
  apply_defaults(loaded.platform);
  for (const std::string& assignment : overrides) {
    loaded.from_overrides.push_back(apply_override(loaded.platform, assignment, loaded.file));
  }
  // After --set, which may name the presets; a parameter --set gives keeps its value.
  loaded.from_presets = apply_hardware_presets(loaded.platform, loaded.from_overrides,
                                               used_groups(loaded.platform), loaded.file);
  validate_parameters(loaded.platform, loaded.file);
  check_settings_used(loaded);
}

}  // namespace

LoadedPlatform load_platform_file(const std::string& file,
                                  const std::vector<std::string>& overrides) {
  LoadedPlatform loaded;
  loaded.file = file;
  parse_textproto_file(file, loaded.platform);
  configure(loaded, overrides);
  return loaded;
}

LoadedPlatform load_platform_text(const std::string& text, const std::string& where,
                                  const std::vector<std::string>& overrides) {
  LoadedPlatform loaded;
  loaded.file = where;
  parse_textproto(text, where, loaded.platform);
  configure(loaded, overrides);
  return loaded;
}

LoadedPlatform load_platform(const std::string& name_or_path,
                             const std::vector<std::string>& overrides) {
  return load_platform_file(find_platform_file(name_or_path), overrides);
}

std::string configuration_text(const LoadedPlatform& loaded) {
  std::string text;
  google::protobuf::TextFormat::PrintToString(loaded.platform, &text);
  return text;
}

std::string settings_text(const LoadedPlatform& loaded) {
  google::protobuf::FieldMask mask;
  for (const auto* paths : {&loaded.from_file, &loaded.from_presets, &loaded.from_overrides})
    for (const std::string& path : *paths)
      if (path != "host_preset" && path != "ssd_preset") mask.add_paths(path);
  Platform settings;  // presets merged in: named again they would apply over --set values
  google::protobuf::util::FieldMaskUtil::MergeMessageTo(loaded.platform, mask, {}, &settings);
  std::string text;
  google::protobuf::TextFormat::PrintToString(settings, &text);
  return text;
}

}  // namespace ispsim::schema
