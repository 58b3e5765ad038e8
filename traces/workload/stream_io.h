// Request stream files (layout: workload.proto): written and read one record at
// a time, so memory does not grow with the number of requests. Every problem is
// a BadInput naming the file, e.g. "s.stream: record #12 fails its CRC-32C
// checksum (corrupt file)".
#pragma once

#include <cstdint>
#include <fstream>
#include <string>

#include "common/atomic_file.h"
#include "traces/workload/workload.pb.h"

namespace ispsim::workload {

constexpr char kStreamMagic[8] = {'\x89', 'I', 'S', 'P', 'W', 'R', 'K', '\n'};
constexpr uint32_t kStreamFormatMajor = 1;
constexpr uint32_t kStreamFormatMinor = 0;

class StreamWriter {
 public:
  // Writes the magic and `header` (its format version filled in) to a temporary file.
  StreamWriter(std::string path, StreamHeader header);
  // Appends one record (not `end`: close() writes it).
  void write(const StreamRecord& record);
  // Writes the end record and moves the file into place; without close() the
  // temporary is removed.
  void close();

 private:
  void put(const google::protobuf::Message& message);

  std::string path_;
  AtomicFile file_;
  uint64_t records_ = 0, requests_ = 0;
  std::string buffer_;
};

class StreamReader {
 public:
  // Opens `path` and reads the magic and the header.
  explicit StreamReader(std::string path);
  const StreamHeader& header() const { return header_; }
  // The next record; false after the end record (checked against what was read).
  bool next(StreamRecord& record);

 private:
  bool read_length(uint64_t& length);
  void read_record(google::protobuf::Message& message, const std::string& name);
  void check_order(const StreamRecord& record, const std::string& name);

  std::string path_;
  std::ifstream in_;
  uint64_t file_bytes_ = 0, offset_ = 0;
  StreamHeader header_;
  std::string buffer_;
  uint64_t records_ = 0, requests_ = 0, last_ns_ = 0;
  bool ended_ = false;
};

}  // namespace ispsim::workload
