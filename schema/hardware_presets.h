// Hardware presets: a real host or SSD as a partial platform file in
// platforms/hardware/ (every value with its datasheet or a stated assumption),
// applied to any platform through its host_preset / ssd_preset parameters
// (e.g. --set host_preset=nvidia_l4).
#pragma once

#include <string>
#include <vector>

#include "schema/platform.pb.h"

namespace ispsim::schema {

struct HardwarePreset {
  std::string name;         // file name without ".textproto"
  std::string file;
  std::string kind;         // "host" or "ssd"
  std::string description;  // the file's description
};

// Every preset on the platform search path (<dir>/hardware/*.textproto), by name.
// A file that sets anything but one kind's groups is BadInput naming it.
std::vector<HardwarePreset> list_hardware_presets();

// Applies the presets `platform` names (host_preset, ssd_preset): each preset
// parameter not in `keep` (the --set paths) replaces the platform's value, in the
// groups `used` holds (every group when empty). Returns the paths applied.
// BadInput for an unknown preset, a preset of the other kind, or one that
// applies nothing to this platform.
std::vector<std::string> apply_hardware_presets(Platform& platform, const std::vector<std::string>& keep,
                                                const std::vector<std::string>& used, const std::string& where);

}  // namespace ispsim::schema
