// Checks a configured message after defaults and overrides: required parameters
// are set, enums hold a named value, numbers are finite and inside the schema's
// [min, max], text is one line of UTF-8. Errors name the file, the parameter
// path, the value and the range.
#pragma once

#include <google/protobuf/message.h>

#include <string>

namespace ispsim::schema {

// Throws BadInput(where, ...) for the first problem, in schema order.
void validate_parameters(const google::protobuf::Message& message, const std::string& where);

}  // namespace ispsim::schema
