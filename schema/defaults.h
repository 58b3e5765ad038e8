// Fills every unset parameter with its schema default (option default_value),
// recursively through sub-messages. Sub-messages are always materialised, so a
// loaded platform carries every component's parameters.
#pragma once

#include <google/protobuf/message.h>

namespace ispsim::schema {

// Throws std::logic_error for a schema bug (a default that does not parse, a
// scalar without presence, a repeated field): the schema test guards them all.
void apply_defaults(google::protobuf::Message& message);

}  // namespace ispsim::schema
