// Registers every implementation in models/core/examples with the factory of
// its role. Call once before creating modules by name; further calls do
// nothing. (Why explicit: see models/core/registry.h.)
#pragma once

namespace ispsim::examples {

void register_all();

}  // namespace ispsim::examples
