// Loads a platform: parse the text-format file (unknown fields rejected), fill
// unset parameters with their schema defaults, apply "--set path=value"
// overrides, then check required parameters, enums and ranges. Every problem is
// a BadInput naming the file.
//
// Platforms are found by file path, or by name: <name>.textproto in the
// directories of $ISPSIM_PLATFORM_PATH (':'-separated, searched first), then in
// data_path("platforms") (common/data_dir.h: the install tree's, or the source
// tree's for a binary of the build tree).
#pragma once

#include <string>
#include <vector>

#include "schema/platform.pb.h"

namespace ispsim::schema {

struct LoadedPlatform {
  std::string file;      // where it was read from
  Platform platform;     // after defaults, overrides and checks
  std::vector<std::string> from_file;       // parameter paths the file sets
  std::vector<std::string> from_overrides;  // parameter paths set by --set, in order
  std::vector<std::string> from_presets;    // parameter paths set by host_preset / ssd_preset

  // Where a parameter's value came from: "--set", "preset", "file" or "default".
  std::string origin(const std::string& path) const;
};

struct PlatformFile {
  std::string name;  // file name without ".textproto"
  std::string file;
};

// The directories searched for platforms by name, in order.
std::vector<std::string> platform_search_path();

// Every platform found on the search path, sorted by name; where two
// directories hold the same name, the earlier one wins (as in lookups).
std::vector<PlatformFile> list_platform_files();

// True when the argument names a file rather than a platform: it contains a
// '/' or ends with ".textproto".
bool looks_like_path(const std::string& name_or_path);

// The names of the platforms whose `group` is `group`, by group_rank (then
// name): the systems of one study, in its tables' order.
std::vector<std::string> platforms_in_group(const std::string& group);

// The file of a platform given by name or path; BadInput if there is none.
std::string find_platform_file(const std::string& name_or_path);

LoadedPlatform load_platform_file(const std::string& file,
                                  const std::vector<std::string>& overrides = {});
// The same for platform text already in memory; `where` names it in errors.
LoadedPlatform load_platform_text(const std::string& text, const std::string& where,
                                  const std::vector<std::string>& overrides = {});
LoadedPlatform load_platform(const std::string& name_or_path,
                             const std::vector<std::string>& overrides = {});

// The platform after defaults, presets and overrides as textproto: every
// parameter's value, the configuration a result records.
std::string configuration_text(const LoadedPlatform& loaded);
// Only what the file, its presets and the overrides set, with their values
// (presets merged in, not named): load_platform_text of it gives the same
// platform wherever the defaults are the same.
std::string settings_text(const LoadedPlatform& loaded);

}  // namespace ispsim::schema
