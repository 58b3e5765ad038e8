// The documentation of one parameter, read from the custom field options of
// options.proto (unit, doc, default_value, source, min, max, required).
#pragma once

#include <google/protobuf/descriptor.h>

#include <optional>
#include <string>

namespace ispsim::schema {

struct ParameterDoc {
  std::string unit;
  std::string doc;
  std::string default_value;  // text-format syntax; empty when `required`
  std::string source;
  std::optional<double> min;
  std::optional<double> max;
  bool has_default = false;   // the option is present (an empty string is a valid default)
  bool required = false;
};

ParameterDoc parameter_doc(const google::protobuf::FieldDescriptor& field);

// "[1, 64]", "[0, ...]" or "" when the field has no range.
std::string range_text(const ParameterDoc& doc);

}  // namespace ispsim::schema
