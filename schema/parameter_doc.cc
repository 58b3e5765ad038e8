#include "schema/parameter_doc.h"

#include "schema/field_text.h"
#include "schema/options.pb.h"

namespace ispsim::schema {

ParameterDoc parameter_doc(const google::protobuf::FieldDescriptor& field) {
  const google::protobuf::FieldOptions& options = field.options();
  ParameterDoc d;
  d.unit = options.GetExtension(unit);
  d.doc = options.GetExtension(doc);
  d.has_default = options.HasExtension(default_value);
  d.default_value = options.GetExtension(default_value);
  d.source = options.GetExtension(source);
  if (options.HasExtension(min)) d.min = options.GetExtension(min);
  if (options.HasExtension(max)) d.max = options.GetExtension(max);
  d.required = options.GetExtension(required);
  return d;
}

std::string range_text(const ParameterDoc& doc) {
  if (!doc.min && !doc.max) return "";
  return "[" + (doc.min ? format_number(*doc.min) : std::string("...")) + ", " +
         (doc.max ? format_number(*doc.max) : std::string("...")) + "]";
}

}  // namespace ispsim::schema
