#include "models/isp/page_compute.h"

namespace ispsim::isp {

PageComputeFactory& accelerators() {
  static PageComputeFactory factory("modules.isp_accelerator");
  return factory;
}

}  // namespace ispsim::isp
