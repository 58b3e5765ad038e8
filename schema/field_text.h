// Single parameter values as text: parsing a value given on the command line or
// as a schema default into a field, and printing a field's value. Strict: the
// whole text must be a value of the field's type (no trailing characters, no
// silent truncation or wrap-around).
#pragma once

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include <optional>
#include <string>

namespace ispsim::schema {

// Sets a singular scalar field (number, bool, enum by value name, string) from
// text. Returns the problem ("'abc' is not a number") or nullopt on success.
std::optional<std::string> set_field_from_text(google::protobuf::Message& message,
                                               const google::protobuf::FieldDescriptor& field,
                                               const std::string& text);

// The value of a scalar field as text: numbers in shortest round-trip form, enums
// by name, bools as true/false, strings quoted. Repeated fields as "[a, b]".
std::string field_value_text(const google::protobuf::Message& message,
                             const google::protobuf::FieldDescriptor& field);

// The numeric value of a singular numeric field (integers, floats; enums and
// bools are not numeric).
std::optional<double> numeric_value(const google::protobuf::Message& message,
                                    const google::protobuf::FieldDescriptor& field);

// Shortest decimal text that reads back as the same double: 5, 0.001, 6826.666666666667.
std::string format_number(double value);

// User text made safe to echo in a one-line message: control characters
// become escapes (\n, \x1b); other bytes pass through.
std::string printable(const std::string& text);

// What a field accepts, for error messages: "an unsigned integer", "a number", ...
std::string accepted_values(const google::protobuf::FieldDescriptor& field);

}  // namespace ispsim::schema
