// Reads a protobuf text-format file into a message. Unknown fields, type errors
// and malformed text are rejected with one line "file:line:col: message".
#pragma once

#include <google/protobuf/message.h>

#include <string>

namespace ispsim::schema {

// Platform and sweep files are small; anything larger is not one (and reading e.g. a
// device file must not run out of memory).
constexpr std::size_t kMaxTextprotoBytes = 16u << 20;

// Replaces `message` with the contents of `path`. Throws BadInput naming the
// file; `kind` ("platform file", "sweep file") says what it should have been.
void parse_textproto_file(const std::string& path, google::protobuf::Message& message,
                          const std::string& kind = "platform file");

// The same for text already in memory; `where` names its origin in errors.
void parse_textproto(const std::string& text, const std::string& where,
                     google::protobuf::Message& message);

}  // namespace ispsim::schema
