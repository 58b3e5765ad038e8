// Registers every implementation of models/isp's roles with its factory: the
// ISP accelerators (PageCompute, page_compute.h) under the names that
// modules.isp_accelerator takes. Call once before creating modules by name;
// further calls do nothing. (Why explicit: see models/core/registry.h.)
#pragma once

namespace ispsim::isp {

void register_all();

}  // namespace ispsim::isp
