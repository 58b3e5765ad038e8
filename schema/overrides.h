// Command-line overrides "--set path=value": a dotted path through sub-messages
// to one parameter (e.g. "nand.t_read_us=20"), the value in the field's text
// syntax (numbers, true/false, enum value names, unquoted text).
#pragma once

#include <google/protobuf/message.h>

#include <string>

namespace ispsim::schema {

// Applies one "path=value" to `root`. `where` names the file being configured;
// errors (no '=', unknown path, a group instead of a parameter, a value of the
// wrong type) throw BadInput(where, "--set <assignment>: <problem>").
// Returns the path of the parameter that was set.
std::string apply_override(google::protobuf::Message& root, const std::string& assignment,
                           const std::string& where);

// The parameter a dotted path names, or nullptr with the reason in `problem`.
const google::protobuf::FieldDescriptor* find_parameter(const google::protobuf::Descriptor& root,
                                                        const std::string& path,
                                                        std::string* problem);

}  // namespace ispsim::schema
