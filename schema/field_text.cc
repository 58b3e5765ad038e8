#include "schema/field_text.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>

namespace ispsim::schema {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

namespace {

template <class T>
std::optional<T> parse_whole(const std::string& text) {
  T value{};
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty()) return std::nullopt;
  return value;
}

std::string quoted(const std::string& text) { return "'" + printable(text) + "'"; }

std::string enum_names(const google::protobuf::EnumDescriptor& type) {
  std::string names;
  for (int i = 0; i < type.value_count(); ++i) {
    if (type.value(i)->number() == 0) continue;  // the UNSPECIFIED placeholder
    if (!names.empty()) names += ", ";
    names += type.value(i)->name();
  }
  return names;
}

std::string single_value_text(const Message& m, const FieldDescriptor& f, int index) {
  const auto* r = m.GetReflection();
  const bool rep = f.is_repeated();
  switch (f.cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      return std::to_string(rep ? r->GetRepeatedInt32(m, &f, index) : r->GetInt32(m, &f));
    case FieldDescriptor::CPPTYPE_INT64:
      return std::to_string(rep ? r->GetRepeatedInt64(m, &f, index) : r->GetInt64(m, &f));
    case FieldDescriptor::CPPTYPE_UINT32:
      return std::to_string(rep ? r->GetRepeatedUInt32(m, &f, index) : r->GetUInt32(m, &f));
    case FieldDescriptor::CPPTYPE_UINT64:
      return std::to_string(rep ? r->GetRepeatedUInt64(m, &f, index) : r->GetUInt64(m, &f));
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return format_number(rep ? r->GetRepeatedDouble(m, &f, index) : r->GetDouble(m, &f));
    case FieldDescriptor::CPPTYPE_FLOAT:
      return format_number(rep ? r->GetRepeatedFloat(m, &f, index) : r->GetFloat(m, &f));
    case FieldDescriptor::CPPTYPE_BOOL:
      return (rep ? r->GetRepeatedBool(m, &f, index) : r->GetBool(m, &f)) ? "true" : "false";
    case FieldDescriptor::CPPTYPE_ENUM: {
      const int number = rep ? r->GetRepeatedEnumValue(m, &f, index) : r->GetEnumValue(m, &f);
      const auto* value = f.enum_type()->FindValueByNumber(number);
      return value ? value->name() : std::to_string(number);
    }
    case FieldDescriptor::CPPTYPE_STRING:
      return "\"" + (rep ? r->GetRepeatedString(m, &f, index) : r->GetString(m, &f)) + "\"";
    case FieldDescriptor::CPPTYPE_MESSAGE:
      return "{...}";
  }
  return "";
}

}  // namespace

std::string printable(const std::string& text) {
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (byte < 0x20 || byte == 0x7f) {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    } else {
      out += c;
    }
  }
  return out;
}

std::string format_number(double value) {
  char buffer[64];
  auto [ptr, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return ec == std::errc() ? std::string(buffer, ptr) : std::string("?");
}

std::string accepted_values(const FieldDescriptor& field) {
  switch (field.cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32: return "an integer (32-bit)";
    case FieldDescriptor::CPPTYPE_INT64: return "an integer (64-bit)";
    case FieldDescriptor::CPPTYPE_UINT32: return "a non-negative integer (32-bit)";
    case FieldDescriptor::CPPTYPE_UINT64: return "a non-negative integer (64-bit)";
    case FieldDescriptor::CPPTYPE_DOUBLE:
    case FieldDescriptor::CPPTYPE_FLOAT: return "a finite number";
    case FieldDescriptor::CPPTYPE_BOOL: return "true or false";
    case FieldDescriptor::CPPTYPE_ENUM: return "one of " + enum_names(*field.enum_type());
    case FieldDescriptor::CPPTYPE_STRING: return "text";
    case FieldDescriptor::CPPTYPE_MESSAGE: return "a group of parameters";
  }
  return "";
}

std::optional<std::string> set_field_from_text(Message& message, const FieldDescriptor& field,
                                               const std::string& text) {
  const auto* r = message.GetReflection();
  const std::string problem =
      quoted(text) + " is not " + accepted_values(field) + " (" + field.name() + ")";
  switch (field.cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32: {
      auto v = parse_whole<std::int32_t>(text);
      if (!v) return problem;
      r->SetInt32(&message, &field, *v);
      return std::nullopt;
    }
    case FieldDescriptor::CPPTYPE_INT64: {
      auto v = parse_whole<std::int64_t>(text);
      if (!v) return problem;
      r->SetInt64(&message, &field, *v);
      return std::nullopt;
    }
    case FieldDescriptor::CPPTYPE_UINT32: {
      // from_chars for unsigned rejects a leading '-', so "-1" cannot wrap around.
      auto v = parse_whole<std::uint32_t>(text);
      if (!v) return problem;
      r->SetUInt32(&message, &field, *v);
      return std::nullopt;
    }
    case FieldDescriptor::CPPTYPE_UINT64: {
      auto v = parse_whole<std::uint64_t>(text);
      if (!v) return problem;
      r->SetUInt64(&message, &field, *v);
      return std::nullopt;
    }
    case FieldDescriptor::CPPTYPE_DOUBLE:
    case FieldDescriptor::CPPTYPE_FLOAT: {
      auto v = parse_whole<double>(text);
      if (!v || !std::isfinite(*v)) return problem;
      if (field.cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE) {
        r->SetDouble(&message, &field, *v);
      } else {
        if (std::fabs(*v) > std::numeric_limits<float>::max()) return problem;
        r->SetFloat(&message, &field, static_cast<float>(*v));
      }
      return std::nullopt;
    }
    case FieldDescriptor::CPPTYPE_BOOL:
      if (text == "true" || text == "1") {
        r->SetBool(&message, &field, true);
      } else if (text == "false" || text == "0") {
        r->SetBool(&message, &field, false);
      } else {
        return problem;
      }
      return std::nullopt;
    case FieldDescriptor::CPPTYPE_ENUM: {
      const auto* value = field.enum_type()->FindValueByName(text);
      if (!value || value->number() == 0) return problem;
      r->SetEnumValue(&message, &field, value->number());
      return std::nullopt;
    }
    case FieldDescriptor::CPPTYPE_STRING:
      r->SetString(&message, &field, text);
      return std::nullopt;
    case FieldDescriptor::CPPTYPE_MESSAGE:
      break;
  }
  return field.name() + " is a group of parameters, not a single value";
}

std::string field_value_text(const Message& message, const FieldDescriptor& field) {
  if (!field.is_repeated()) return single_value_text(message, field, 0);
  const int n = message.GetReflection()->FieldSize(message, &field);
  std::string text = "[";
  for (int i = 0; i < n; ++i) {
    if (i) text += ", ";
    text += single_value_text(message, field, i);
  }
  return text + "]";
}

std::optional<double> numeric_value(const Message& m, const FieldDescriptor& f) {
  if (f.is_repeated()) return std::nullopt;
  const auto* r = m.GetReflection();
  switch (f.cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32: return r->GetInt32(m, &f);
    case FieldDescriptor::CPPTYPE_INT64: return static_cast<double>(r->GetInt64(m, &f));
    case FieldDescriptor::CPPTYPE_UINT32: return r->GetUInt32(m, &f);
    case FieldDescriptor::CPPTYPE_UINT64: return static_cast<double>(r->GetUInt64(m, &f));
    case FieldDescriptor::CPPTYPE_DOUBLE: return r->GetDouble(m, &f);
    case FieldDescriptor::CPPTYPE_FLOAT: return r->GetFloat(m, &f);
    default: return std::nullopt;
  }
}

}  // namespace ispsim::schema
