#include "traces/trace_io.h"

#include <google/protobuf/stubs/logging.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/crc32c.h"
#include "common/error.h"
#include "common/input_file.h"
#include "traces/record_framing.h"

namespace ispsim::trace {

namespace {

// Format 1.2 record trailer: field 100 (`crc32c`), wire type 5 (fixed32) = tag
// varint 805 = 0xA5 0x06, then the CRC-32C of the bytes before it, little-endian.
constexpr char kChecksumTag[2] = {'\xA5', '\x06'};
constexpr size_t kChecksumTrailerBytes = 6;

bool has_checksums(const Header& header) {
  return header.version().major() == kFormatMajor && header.version().minor() >= kChecksumMinor;
}

void append_checksum(std::string& record) {
  const uint32_t crc = crc32c(record.data(), record.size());
  record.append(kChecksumTag, 2);
  for (int i = 0; i < 4; ++i) record.push_back(static_cast<char>((crc >> (8 * i)) & 0xFF));
}

// True when `record` ends with the trailer and the CRC matches the bytes before it.
bool checksum_matches(const std::string& record) {
  if (record.size() < kChecksumTrailerBytes) return false;
  const size_t body = record.size() - kChecksumTrailerBytes;
  if (record[body] != kChecksumTag[0] || record[body + 1] != kChecksumTag[1]) return false;
  uint32_t stored = 0;
  for (int i = 0; i < 4; ++i) stored |= uint32_t{static_cast<unsigned char>(record[body + 2 + i])} << (8 * i);
  return stored == crc32c(record.data(), body);
}

std::string str(uint64_t v) { return std::to_string(v); }

void append_varint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

// Parses without protobuf's own stderr logging (e.g. about invalid UTF-8): the
// caller reports one clear error line instead.
template <class Message>
bool parse_quietly(Message& message, const std::string& bytes) {
  google::protobuf::LogSilencer quiet;
  return message.ParseFromString(bytes);
}

}  // namespace

void append_record_checksum(std::string& record) { append_checksum(record); }
bool record_checksum_matches(const std::string& record) { return checksum_matches(record); }
void append_record_length(std::string& out, uint64_t length) { append_varint(out, length); }

// ---------------------------------------------------------------- reader

TraceReader::TraceReader(std::string path) : path_(std::move(path)), validator_(path_) {
  std::error_code ec;
  if (!std::filesystem::exists(path_, ec)) throw BadInput(path_, "no such file");
  if (std::filesystem::is_directory(path_, ec)) throw BadInput(path_, "is a directory, not a trace file");
  // Regular files only, checked without blocking: a FIFO must not hang the open.
  file_bytes_ = check_input_file(path_);
  in_.open(path_, std::ios::binary);
  if (!in_) throw BadInput(path_, std::string("cannot open: ") + std::strerror(errno));
  if (file_bytes_ == 0) throw BadInput(path_, "empty file (not a trace)");

  char magic[kTraceMagicSize];
  in_.read(magic, kTraceMagicSize);
  const auto got = static_cast<size_t>(in_.gcount());
  offset_ = got;
  if (std::memcmp(magic, kTraceMagic, got) != 0) {
    const bool text = std::string(magic, got).find_first_of("#h") == 0;
    throw BadInput(path_, std::string("not an ispsim binary trace (bad magic bytes)") +
                              (text ? "; text traces must be packed first: ispsim trace pack IN.txtpb OUT.trace"
                                    : ""));
  }
  if (got < kTraceMagicSize) throw BadInput(path_, "truncated in the magic bytes");

  uint64_t length = 0;
  if (!read_length(length, 0)) throw BadInput(path_, "truncated: the file ends before the header");
  read_body(length, 0);
  Header header;
  if (!parse_quietly(header, buffer_)) throw BadInput(path_, "header is not a valid Header message (corrupt file)");
  checksums_ = has_checksums(header);
  if (checksums_ && !checksum_matches(buffer_))
    throw BadInput(path_, "the header fails its CRC-32C checksum (corrupt file)");
  if (!checksums_ && header.crc32c() != 0)
    throw BadInput(path_, "the header carries a checksum but declares format " + str(header.version().major()) +
                              "." + str(header.version().minor()) + " (corrupt version)");
  header.clear_crc32c();
  validator_.check_header(header);
}

std::string TraceReader::record_name(uint64_t record) const {
  return record == 0 ? "the header" : "op record #" + str(record);
}

bool TraceReader::read_length(uint64_t& length, uint64_t record) {
  length = 0;
  const uint64_t start = offset_;
  for (int shift = 0; shift < 64; shift += 7) {
    const int c = in_.get();
    if (c == std::char_traits<char>::eof()) {
      if (shift == 0) return false;
      throw BadInput(path_, "truncated in the length prefix of " + record_name(record) + " (byte " + str(start) + ")");
    }
    ++offset_;
    length |= static_cast<uint64_t>(c & 0x7f) << shift;
    if (!(c & 0x80)) return true;
  }
  throw BadInput(path_, "corrupt length prefix of " + record_name(record) + " (byte " + str(start) + ")");
}

void TraceReader::read_body(uint64_t length, uint64_t record) {
  const uint64_t left = file_bytes_ - offset_;
  if (length > left)
    throw BadInput(path_, "truncated in " + record_name(record) + " (byte " + str(offset_) + "): " + str(length) +
                              " bytes announced, " + str(left) + " left in the file");
  if (length > kMaxRecordBytes)
    throw BadInput(path_, record_name(record) + " (byte " + str(offset_) + ") is " + str(length) +
                              " bytes, more than the limit " + str(kMaxRecordBytes));
  buffer_.resize(length);
  in_.read(buffer_.data(), static_cast<std::streamsize>(length));
  if (static_cast<uint64_t>(in_.gcount()) != length)
    throw BadInput(path_, "truncated in " + record_name(record) + " (byte " + str(offset_) + ")");
  offset_ += length;
}

bool TraceReader::next(Op& op) {
  if (finished_) return false;
  const uint64_t start = offset_;
  const uint64_t record = validator_.ops_seen() + 1;
  uint64_t length = 0;
  if (!read_length(length, record)) {
    finished_ = true;
    validator_.check_end(/*counts_required=*/true);
    return false;
  }
  if (length == 0) throw BadInput(path_, record_name(record) + " (byte " + str(start) + ") is empty");
  read_body(length, record);
  op.Clear();
  // The checksum first: a corrupt record is named as such, not by what it breaks.
  if (checksums_ && !checksum_matches(buffer_))
    throw BadInput(path_, record_name(record) + " (byte " + str(start) + ") fails its CRC-32C checksum (corrupt file)");
  if (!parse_quietly(op, buffer_))
    throw BadInput(path_, record_name(record) + " (byte " + str(start) + ") is not a valid Op message (corrupt file)");
  if (!checksums_ && op.crc32c() != 0)
    throw BadInput(path_, record_name(record) + " (byte " + str(start) + ") carries a checksum in a format " +
                              str(header().version().major()) + "." + str(header().version().minor()) + " file");
  op.clear_crc32c();
  validator_.check_op(op);
  return true;
}

// ---------------------------------------------------------------- writer

TraceWriter::TraceWriter(std::string path, const Header& header)
    : path_(path), file_(std::move(path), /*binary=*/true), validator_(path_), header_(header) {
  header_.clear_crc32c();
  validator_.check_header(header_);
  checksums_ = has_checksums(header_);
  // The op counts are patched into the header at the end, which needs seeking.
  if (!file_.seekable())
    throw BadInput(path_, "a trace is written to a regular file (its header is completed at the end), not to a FIFO");
  // Placeholders of the same encoded size as the final counts (fixed64).
  for (ProgramInfo& p : *header_.mutable_programs())
    if (!p.has_op_count()) p.set_op_count(0);
  std::string bytes;
  if (!header_.SerializeToString(&bytes)) throw BadInput(path_, "cannot serialize the header");
  if (checksums_) append_checksum(bytes);
  buffer_.assign(kTraceMagic, kTraceMagicSize);
  append_varint(buffer_, bytes.size());
  header_body_offset_ = static_cast<std::streamoff>(buffer_.size());
  header_body_bytes_ = bytes.size();
  buffer_ += bytes;
  file_.stream().write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  check_stream();
}

void TraceWriter::check_stream() {
  if (file_.stream()) return;
  const int e = file_.write_error();
  throw BadInput(path_, std::string("write failed") + (e ? std::string(": ") + std::strerror(e) : ""));
}

void TraceWriter::write(const Op& op) {
  if (closed_) throw BadInput(path_, "op " + str(op.id()) + " written after close()");
  validator_.check_op(op);
  std::string bytes;
  // An op read from a file may still carry its old checksum field: not serialized.
  const bool serialized = op.crc32c() == 0 ? op.SerializeToString(&bytes) : [&] {
    Op copy = op;
    copy.clear_crc32c();
    return copy.SerializeToString(&bytes);
  }();
  if (!serialized) throw BadInput(path_, "op " + str(op.id()) + ": cannot serialize");
  if (checksums_) append_checksum(bytes);
  buffer_.clear();
  append_varint(buffer_, bytes.size());
  buffer_ += bytes;
  file_.stream().write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  check_stream();
}

void TraceWriter::close() {
  if (closed_) return;
  validator_.check_end(/*counts_required=*/false);
  for (ProgramInfo& p : *header_.mutable_programs()) p.set_op_count(validator_.ops_of(p.program()));
  std::string bytes;
  const bool serialized = header_.SerializeToString(&bytes);
  if (checksums_) append_checksum(bytes);
  if (!serialized || bytes.size() != header_body_bytes_)
    throw std::logic_error("trace header changed size when patching op counts");
  std::ostream& out = file_.stream();
  out.seekp(header_body_offset_);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.seekp(0, std::ios::end);
  check_stream();
  file_.commit();
  closed_ = true;
}

// ---------------------------------------------------------------- whole traces

TraceText read_trace(const std::string& path) {
  TraceReader reader(path);
  TraceText trace;
  *trace.mutable_header() = reader.header();
  Op op;
  while (reader.next(op)) *trace.add_op() = op;
  return trace;
}

void write_trace(const std::string& path, const TraceText& trace) {
  TraceWriter writer(path, trace.header());
  for (const Op& op : trace.op()) writer.write(op);
  writer.close();
}

}  // namespace ispsim::trace
