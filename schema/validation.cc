#include "schema/validation.h"

#include <cmath>
#include <optional>

#include "common/error.h"
#include "schema/field_text.h"
#include "schema/flash_coordinator.pb.h"
#include "schema/nand.pb.h"
#include "schema/parameter_doc.h"

namespace ispsim::schema {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

namespace {

// Text parameters end up in tables, reports and file names: they must be
// UTF-8 and one line.
std::optional<std::string> text_problem(const std::string& text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x20 || byte == 0x7f) return "contains a control character";
    std::size_t length = byte < 0x80 ? 1 : (byte >> 5) == 0x6 ? 2 : (byte >> 4) == 0xe ? 3
                                         : (byte >> 3) == 0x1e ? 4 : 0;
    if (length == 0 || i + length > text.size()) return "is not valid UTF-8";
    for (std::size_t k = 1; k < length; ++k) {
      if ((static_cast<unsigned char>(text[i + k]) >> 6) != 0x2) return "is not valid UTF-8";
    }
    i += length;
  }
  return std::nullopt;
}

// What a range cannot say: a value that must be a multiple, or parameters that
// bound each other. Checked after the message's own ranges.
void check_constraints(const Message& message, const std::string& prefix, const std::string& where) {
  using google::protobuf::DynamicCastToGenerated;
  if (const auto* nand = DynamicCastToGenerated<NandParams>(&message)) {
    if (nand->has_channel_width_bits() && nand->channel_width_bits() % 8 != 0) {
      throw BadInput(where, prefix + "channel_width_bits = " + std::to_string(nand->channel_width_bits()) +
                                " bits is not a whole number of bytes");
    }
  }
  if (const auto* coordinator = DynamicCastToGenerated<FlashCoordinatorParams>(&message)) {
    if (coordinator->has_q_buffer_bytes() && coordinator->has_global_sram_bytes() &&
        coordinator->q_buffer_bytes() >= coordinator->global_sram_bytes()) {
      throw BadInput(where, prefix + "q_buffer_bytes = " + std::to_string(coordinator->q_buffer_bytes()) +
                                " bytes leaves no O reduction buffer in " + prefix + "global_sram_bytes = " +
                                std::to_string(coordinator->global_sram_bytes()) + " bytes");
    }
  }
}

void validate(const Message& message, const std::string& prefix, const std::string& where) {
  const auto* descriptor = message.GetDescriptor();
  const auto* reflection = message.GetReflection();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor& field = *descriptor->field(i);
    const std::string path = prefix + field.name();
    if (field.cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      validate(reflection->GetMessage(message, &field), path + ".", where);
      continue;
    }
    const ParameterDoc doc = parameter_doc(field);
    if (!reflection->HasField(message, &field)) {
      if (doc.required) throw BadInput(where, "'" + path + "' is required (" + doc.doc + ")");
      continue;  // optional without a value: only in messages not passed through apply_defaults
    }
    if (field.cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
      if (auto problem = text_problem(reflection->GetString(message, &field))) {
        throw BadInput(where, "the text of '" + path + "' " + *problem);
      }
      continue;
    }
    const std::string value = field_value_text(message, field);
    if (field.cpp_type() == FieldDescriptor::CPPTYPE_ENUM) {
      const int number = reflection->GetEnumValue(message, &field);
      if (number == 0 || !field.enum_type()->FindValueByNumber(number)) {
        throw BadInput(where, path + " = " + value + " is not a valid choice; use " +
                                  accepted_values(field));
      }
      continue;
    }
    const std::optional<double> number = numeric_value(message, field);
    if (!number) continue;
    if (!std::isfinite(*number)) {
      throw BadInput(where, path + " = " + value + " is not a finite number");
    }
    if ((doc.min && *number < *doc.min) || (doc.max && *number > *doc.max)) {
      throw BadInput(where, path + " = " + value + " " + doc.unit +
                                " is outside the allowed range " + range_text(doc) + " " +
                                doc.unit);
    }
  }
  check_constraints(message, prefix, where);
}

}  // namespace

void validate_parameters(const Message& message, const std::string& where) {
  validate(message, "", where);
}

}  // namespace ispsim::schema
