#include "models/isp/page_compute.h"

#include "schema/options.pb.h"

namespace ispsim::isp {

PageComputeFactory& accelerators() {
  static PageComputeFactory factory("modules.isp_accelerator");
  return factory;
}

std::vector<std::string> parameters_read_by(const std::string& accelerator) {
  std::vector<std::string> read;
  const google::protobuf::Descriptor& params = *schema::IspParams::descriptor();
  for (int i = 0; i < params.field_count(); ++i) {
    const google::protobuf::FieldOptions& options = params.field(i)->options();
    const int readers = options.ExtensionSize(schema::read_by);
    bool reads = readers == 0;
    for (int r = 0; r < readers && !reads; ++r) reads = options.GetExtension(schema::read_by, r) == accelerator;
    if (reads) read.push_back(params.field(i)->name());
  }
  return read;
}

}  // namespace ispsim::isp
