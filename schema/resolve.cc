#include "schema/resolve.h"

#include <stdexcept>

namespace ispsim::schema {

namespace {

using google::protobuf::FieldDescriptor;

// The path of the first unset parameter under `message`, or "" when all are set.
std::string first_unset(const google::protobuf::Message& message, const std::string& prefix) {
  const auto* descriptor = message.GetDescriptor();
  const auto* reflection = message.GetReflection();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor& field = *descriptor->field(i);
    const std::string path = prefix + field.name();
    if (field.cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (!reflection->HasField(message, &field)) return path;
      const std::string unset = first_unset(reflection->GetMessage(message, &field), path + ".");
      if (!unset.empty()) return unset;
      continue;
    }
    if (!reflection->HasField(message, &field)) return path;
  }
  return "";
}

}  // namespace

void require_resolved(const google::protobuf::Message& message, const std::string& user) {
  const std::string unset = first_unset(message, "");
  if (!unset.empty()) {
    throw std::logic_error(user + ": " + message.GetDescriptor()->name() + " is not resolved ('" + unset +
                           "' is unset); pass it through the platform loader or schema::resolved()");
  }
}

}  // namespace ispsim::schema
