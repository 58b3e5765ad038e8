#include "schema/textproto_file.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/error.h"

namespace ispsim::schema {

namespace {

// Keeps the first error only: later ones are usually consequences of it.
class FirstErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (has_error_) return;
    has_error_ = true;
    // The parser counts from 0; editors count from 1.
    line_ = line + 1;
    column_ = column + 1;
    message_ = message;
    for (char& c : message_) {
      if (c == '\n' || c == '\r') c = ' ';  // the error must stay one line
    }
  }
  void AddWarning(int, google::protobuf::io::ColumnNumber, const std::string&) override {}

  bool has_error() const { return has_error_; }
  std::string location(const std::string& where) const {
    return line_ > 0 ? where + ":" + std::to_string(line_) + ":" + std::to_string(column_) : where;
  }
  const std::string& message() const { return message_; }

 private:
  bool has_error_ = false;
  int line_ = 0;
  int column_ = 0;
  std::string message_;
};

}  // namespace

void parse_textproto(const std::string& text, const std::string& where,
                     google::protobuf::Message& message) {
  FirstErrorCollector errors;
  google::protobuf::TextFormat::Parser parser;  // unknown fields are rejected by default
  parser.RecordErrorsTo(&errors);
  message.Clear();
  if (!parser.ParseFromString(text, &message) || errors.has_error()) {
    throw BadInput(errors.location(where),
                   errors.has_error() ? errors.message() : "not valid protobuf text format");
  }
}

void parse_textproto_file(const std::string& path, google::protobuf::Message& message, const std::string& kind) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) throw BadInput(path, "no such file");
  if (!fs::is_regular_file(status)) throw BadInput(path, "not a regular file");
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec) throw BadInput(path, "cannot read its size: " + ec.message());
  if (size > kMaxTextprotoBytes) {
    throw BadInput(path, "larger than " + std::to_string(kMaxTextprotoBytes >> 20) +
                             " MB: not a " + kind);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw BadInput(path, std::string("cannot open: ") + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw BadInput(path, "read error");
  parse_textproto(text.str(), path, message);
}

}  // namespace ispsim::schema
