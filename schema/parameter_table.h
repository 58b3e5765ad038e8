// The flat list of parameters of a message type (full dotted paths, schema
// order) with their documentation and, when a configured message is given,
// their values; plus a plain aligned-column text table for printing it.
#pragma once

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include <string>
#include <vector>

#include "schema/parameter_doc.h"

namespace ispsim::schema {

struct ParameterRow {
  std::string path;     // "nand.t_read_us"
  std::string value;    // text of the value; empty when no message was given
  std::string accepts;  // "a finite number", "one of SEQUENTIAL, PIPELINED", ...
  ParameterDoc doc;
};

// Every scalar parameter under `type`, depth first in declaration order.
// `values` (optional) must be of `type`; `prefix` is prepended to every path.
std::vector<ParameterRow> parameter_rows(const google::protobuf::Descriptor& type,
                                         const google::protobuf::Message* values,
                                         const std::string& prefix = "");

// Every parameter path under `type` that is set in `message` (presence), e.g.
// to tell what a platform file wrote from what defaults filled in.
std::vector<std::string> set_parameter_paths(const google::protobuf::Message& message,
                                             const std::string& prefix = "");

// Rows of cells as text with columns padded to their widest cell (two spaces
// apart); the last column is not padded. Every line ends with '\n'.
std::string aligned_table(const std::vector<std::vector<std::string>>& rows);

}  // namespace ispsim::schema
