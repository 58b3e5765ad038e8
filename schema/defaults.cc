#include "schema/defaults.h"

#include <stdexcept>

#include "schema/field_text.h"
#include "schema/parameter_doc.h"

namespace ispsim::schema {

using google::protobuf::FieldDescriptor;

void apply_defaults(google::protobuf::Message& message) {
  const auto* descriptor = message.GetDescriptor();
  const auto* reflection = message.GetReflection();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor& field = *descriptor->field(i);
    if (field.is_repeated()) {
      throw std::logic_error("schema: " + field.full_name() +
                             " is repeated; the loader supports singular parameters only");
    }
    if (field.cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      apply_defaults(*reflection->MutableMessage(&message, &field));
      continue;
    }
    if (!field.has_presence()) {
      throw std::logic_error("schema: " + field.full_name() +
                             " must be declared 'optional' so that unset can be told from zero");
    }
    if (reflection->HasField(message, &field)) continue;
    const ParameterDoc doc = parameter_doc(field);
    if (!doc.has_default) continue;  // required fields: validation reports them
    if (auto problem = set_field_from_text(message, field, doc.default_value)) {
      throw std::logic_error("schema: default of " + field.full_name() + ": " + *problem);
    }
  }
}

}  // namespace ispsim::schema
