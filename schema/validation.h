// Checks a configured message after defaults and overrides: required parameters
// are set, enums hold a named value, numbers are finite and inside the schema's
// [min, max], text is one line of UTF-8, and the few constraints a range cannot
// express hold (nand.channel_width_bits a whole number of bytes,
// flash_coordinator.q_buffer_bytes below global_sram_bytes). Errors name the
// file, the parameter path, the value and the range. The one place parameters
// are checked: models read resolved messages (resolve.h).
#pragma once

#include <google/protobuf/message.h>

#include <string>

namespace ispsim::schema {

// Throws BadInput(where, ...) for the first problem, in schema order.
void validate_parameters(const google::protobuf::Message& message, const std::string& where);

}  // namespace ispsim::schema
