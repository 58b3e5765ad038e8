#include "traces/trace_text.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/text_format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/error.h"
#include "common/input_file.h"
#include "traces/trace_io.h"
#include "traces/trace_validator.h"

namespace ispsim::trace {

namespace {

// Keeps the first parse error (with its position) instead of logging to stderr.
class FirstError : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (message_.empty()) {
      line_ = line;
      column_ = column;
      message_ = message;
    }
  }
  void AddWarning(int, int, const std::string&) override {}

  bool empty() const { return message_.empty(); }
  std::string where(const std::string& file) const {
    return file + ":" + std::to_string(line_ + 1) + ":" + std::to_string(column_ + 1);
  }
  const std::string& message() const { return message_; }

 private:
  int line_ = 0;
  int column_ = 0;
  std::string message_;
};

std::string position(const std::string& file, const google::protobuf::TextFormat::ParseLocation& at) {
  if (at.line < 0) return file;
  return file + ":" + std::to_string(at.line + 1) + ":" + std::to_string(at.column + 1);
}

}  // namespace

TraceText parse_text_trace(const std::string& text, const std::string& where) {
  google::protobuf::TextFormat::Parser parser;
  FirstError errors;
  parser.RecordErrorsTo(&errors);
  google::protobuf::TextFormat::ParseInfoTree locations;
  parser.WriteLocationsTo(&locations);
  TraceText trace;
  bool parsed;
  {
    google::protobuf::LogSilencer quiet;  // errors go to `errors`; no stray stderr lines
    parsed = parser.ParseFromString(text, &trace);
  }
  if (!parsed) {
    if (errors.empty()) throw BadInput(where, "not a valid text trace");
    throw BadInput(errors.where(where), errors.message());
  }

  const auto* descriptor = TraceText::descriptor();
  const auto* header_field = descriptor->FindFieldByName("header");
  const auto* op_field = descriptor->FindFieldByName("op");
  if (!trace.has_header()) throw BadInput(where, "no header { ... } block");

  TraceValidator validator(position(where, locations.GetLocation(header_field, -1)));
  validator.check_header(trace.header());
  for (int i = 0; i < trace.op_size(); ++i) {
    validator.set_where(position(where, locations.GetLocation(op_field, i)));
    validator.check_op(trace.op(i));
  }
  validator.set_where(where);
  validator.check_end(/*counts_required=*/false);
  return trace;
}

TraceText load_text_trace(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw BadInput(path, "no such file");
  if (std::filesystem::is_directory(path, ec)) throw BadInput(path, "is a directory, not a text trace");
  // Regular files only (no FIFO hang), at most kMaxTextInputBytes.
  const std::string text = read_input_file(path);
  if (text.empty()) throw BadInput(path, "empty file (not a text trace)");
  return parse_text_trace(text, path);
}

void pack_text_trace(const std::string& text_path, const std::string& binary_path) {
  const TraceText trace = load_text_trace(text_path);
  write_trace(binary_path, trace);
}

}  // namespace ispsim::trace
