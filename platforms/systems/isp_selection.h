// modules.isp_accelerator against the system that runs a platform: a system
// with an ISP builds the accelerator the name selects (isp::accelerators());
// one without rejects the setting, which it would otherwise ignore.
#pragma once

#include <string>

#include "schema/platform_loader.h"

namespace ispsim::systems {

// True when some attention of a blend platform runs on the SSD's ISP.
bool has_isp(const schema::Platform& platform);

// Throws BadInput naming the platform file when:
//  - `isp` and modules.isp_accelerator names no registered accelerator (the
//    message lists the known names);
//  - `isp` and the platform sets an isp.* parameter the chosen accelerator does
//    not read (e.g. isp.systolic_pair.* for elastic_simd), which would be ignored;
//  - not `isp` and the platform (file or --set) sets modules.isp_accelerator;
//    `system` then says what runs the platform instead.
void check_isp_accelerator(const schema::LoadedPlatform& loaded, bool isp, const std::string& system);

}  // namespace ispsim::systems
