// Streaming reader and writer of binary trace files (layout: trace.proto). Both
// validate as they go (TraceValidator) and, from format 1.2, check or write a
// CRC-32C per record; every problem is an ispsim::BadInput
// naming the file, e.g. "x.trace: op 12: depends on op 40, which is not an earlier op".
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>

#include "common/atomic_file.h"
#include "traces/trace.pb.h"
#include "traces/trace_validator.h"

namespace ispsim::trace {

// First bytes of every binary trace. 0x89 (not ASCII) and the trailing newline
// make text-mode mangling and text files fed by mistake fail immediately.
constexpr char kTraceMagic[8] = {'\x89', 'I', 'S', 'P', 'T', 'R', 'C', '\n'};
constexpr size_t kTraceMagicSize = sizeof(kTraceMagic);
// Largest header or op record accepted; bigger length prefixes mean corruption.
constexpr uint64_t kMaxRecordBytes = uint64_t{1} << 28;  // 256 MiB

class TraceReader {
 public:
  // Opens `path`, reads and validates the magic bytes and the header.
  explicit TraceReader(std::string path);

  const Header& header() const { return validator_.header(); }
  const std::string& path() const { return path_; }

  // Reads the next op into `op`. Returns false at the end of the file, after
  // checking that every program has the op count its header declares.
  bool next(Op& op);

  uint64_t ops_read() const { return validator_.ops_seen(); }

 private:
  // Records are numbered 0 = header, 1.. = ops; named only when an error is reported.
  std::string record_name(uint64_t record) const;
  // Reads a varint length prefix; false on a clean end of file at its first byte.
  bool read_length(uint64_t& length, uint64_t record);
  // Reads `length` bytes of the record into buffer_.
  void read_body(uint64_t length, uint64_t record);

  std::string path_;
  std::ifstream in_;
  uint64_t file_bytes_ = 0;
  uint64_t offset_ = 0;  // bytes consumed so far
  std::string buffer_;
  TraceValidator validator_;
  bool finished_ = false;
  bool checksums_ = false;  // format >= 1.2: every record ends with its CRC-32C
};

class TraceWriter {
 public:
  // Validates `header` and writes the magic and the header to a temporary file.
  // Op counts are filled in by close(); if the header declares them they must match.
  TraceWriter(std::string path, const Header& header);
  // Without close() the temporary file is removed: no half-written trace.
  ~TraceWriter() = default;

  // Validates `op` against the header and the ops written before, then appends it.
  void write(const Op& op);
  // Checks the per-program op counts, patches them into the header and moves
  // the file into place.
  void close();

  uint64_t ops_written() const { return validator_.ops_seen(); }

 private:
  void check_stream();

  std::string path_;
  AtomicFile file_;
  TraceValidator validator_;
  Header header_;
  std::streamoff header_body_offset_ = 0;
  size_t header_body_bytes_ = 0;
  std::string buffer_;
  bool closed_ = false;
  bool checksums_ = false;
};

// Whole-trace helpers for small traces and tests (memory grows with the trace).
TraceText read_trace(const std::string& path);
void write_trace(const std::string& path, const TraceText& trace);

}  // namespace ispsim::trace
