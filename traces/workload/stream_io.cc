#include "traces/workload/stream_io.h"

#include <google/protobuf/stubs/logging.h>

#include "common/error.h"
#include "common/input_file.h"
#include "traces/record_framing.h"
#include "traces/trace_io.h"

namespace ispsim::workload {
namespace {

std::string str(uint64_t v) { return std::to_string(v); }

// Time of a record that has one (open-loop requests, store events).
bool record_time(const StreamRecord& r, uint64_t& ns) {
  if (r.has_request() && r.request().has_arrival_ns()) ns = r.request().arrival_ns();
  else if (r.has_ingest()) ns = r.ingest().at_ns();
  else if (r.has_evict()) ns = r.evict().at_ns();
  else return false;
  return true;
}

}  // namespace

StreamWriter::StreamWriter(std::string path, StreamHeader header) : path_(std::move(path)), file_(path_, true) {
  file_.stream().write(kStreamMagic, sizeof(kStreamMagic));
  header.set_format_major(kStreamFormatMajor);
  header.set_format_minor(kStreamFormatMinor);
  header.clear_crc32c();
  put(header);
}

void StreamWriter::put(const google::protobuf::Message& message) {
  std::string body = message.SerializeAsString();
  trace::append_record_checksum(body);
  buffer_.clear();
  trace::append_record_length(buffer_, body.size());
  buffer_ += body;
  file_.stream().write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
  if (!file_.stream()) throw BadInput(path_, "write failed");
}

void StreamWriter::write(const StreamRecord& record) {
  if (record.has_end()) throw std::logic_error("StreamWriter::write: the end record is written by close()");
  put(record);
  ++records_;
  requests_ += record.has_request();
}

void StreamWriter::close() {
  StreamRecord end;
  end.mutable_end()->set_requests(requests_);
  end.mutable_end()->set_records(records_);
  put(end);
  file_.commit();
}

StreamReader::StreamReader(std::string path) : path_(std::move(path)) {
  file_bytes_ = check_input_file(path_);
  in_.open(path_, std::ios::binary);
  if (!in_) throw BadInput(path_, "cannot open");
  char magic[sizeof(kStreamMagic)] = {};
  in_.read(magic, sizeof(magic));
  if (in_.gcount() != sizeof(magic) || !std::equal(magic, magic + sizeof(magic), kStreamMagic))
    throw BadInput(path_, "not a request stream file (wrong magic bytes; write one with 'ispsim workload gen')");
  offset_ = sizeof(magic);
  read_record(header_, "the header");
  header_.clear_crc32c();
  if (header_.format_major() != kStreamFormatMajor)
    throw BadInput(path_, "request stream format " + str(header_.format_major()) + "." + str(header_.format_minor()) +
                              " is not supported (this build reads " + str(kStreamFormatMajor) + ".x)");
}

bool StreamReader::read_length(uint64_t& length) {
  length = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    const int c = in_.get();
    if (c == std::char_traits<char>::eof()) {
      if (shift == 0) return false;
      throw BadInput(path_, "truncated in a length prefix (byte " + str(offset_) + ")");
    }
    ++offset_;
    length |= static_cast<uint64_t>(c & 0x7f) << shift;
    if (!(c & 0x80)) return true;
  }
  throw BadInput(path_, "corrupt length prefix (byte " + str(offset_) + ")");
}

void StreamReader::read_record(google::protobuf::Message& message, const std::string& name) {
  const uint64_t start = offset_;
  uint64_t length = 0;
  if (!read_length(length))
    throw BadInput(path_, "truncated: the file ends before " + name + " (no end record)");
  if (length > file_bytes_ - offset_ || length > trace::kMaxRecordBytes)
    throw BadInput(path_, name + " (byte " + str(start) + ") announces " + str(length) + " bytes, more than the " +
                              str(file_bytes_ - offset_) + " left in the file");
  buffer_.resize(length);
  in_.read(buffer_.data(), static_cast<std::streamsize>(length));
  offset_ += length;
  if (!in_) throw BadInput(path_, "read failed in " + name);
  if (!trace::record_checksum_matches(buffer_))
    throw BadInput(path_, name + " (byte " + str(start) + ") fails its CRC-32C checksum (corrupt file)");
  google::protobuf::LogSilencer quiet;
  if (!message.ParseFromString(buffer_))
    throw BadInput(path_, name + " (byte " + str(start) + ") is not a valid record (corrupt file)");
}

void StreamReader::check_order(const StreamRecord& record, const std::string& name) {
  if (record.kind_case() == StreamRecord::KIND_NOT_SET) throw BadInput(path_, name + " is empty");
  if (record.has_request() && record.request().index() != requests_)
    throw BadInput(path_, name + ": request index " + str(record.request().index()) + ", expected " + str(requests_));
  uint64_t ns = 0;
  if (record_time(record, ns)) {
    if (ns < last_ns_)
      throw BadInput(path_, name + ": at " + str(ns) + " ns, before the previous record (" + str(last_ns_) + " ns)");
    last_ns_ = ns;
  }
}

bool StreamReader::next(StreamRecord& record) {
  if (ended_) return false;
  const std::string name = "record #" + str(records_ + 1);
  if (in_.peek() == std::char_traits<char>::eof())
    throw BadInput(path_, "truncated: the file ends after " + str(records_) + " records, without its end record");
  read_record(record, name);
  record.clear_crc32c();
  if (record.has_end()) {
    if (record.end().records() != records_ || record.end().requests() != requests_)
      throw BadInput(path_, "the end record counts " + str(record.end().records()) + " records and " +
                                str(record.end().requests()) + " requests, the file has " + str(records_) + " and " +
                                str(requests_));
    if (in_.peek() != std::char_traits<char>::eof())
      throw BadInput(path_, "bytes after the end record (byte " + str(offset_) + ")");
    ended_ = true;
    return false;
  }
  check_order(record, name);
  ++records_;
  requests_ += record.has_request();
  return true;
}

}  // namespace ispsim::workload
