// Reading and writing Chakra execution-trace files record by record: a varint
// byte length, then a serialized message; one GlobalMetadata, then Nodes.
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>

#include "common/atomic_file.h"
#include "traces/chakra/chakra_et.pb.h"

namespace ispsim::chakra {

// The metadata version this writer declares (the version the Chakra project's
// own trace generator writes).
inline constexpr const char* kChakraVersion = "1.0.0";

class ChakraReader {
 public:
  // Opens `path` and reads its GlobalMetadata; BadInput naming the file for a
  // missing, empty, gzip-compressed or corrupt file.
  explicit ChakraReader(std::string path);
  const GlobalMetadata& metadata() const { return metadata_; }
  // The next node; false at the end of the file. BadInput for a cut or corrupt record.
  bool next(Node& node);
  const std::string& path() const { return path_; }

 private:
  bool read_record(std::string& bytes, const char* what);

  std::string path_;
  std::ifstream in_;
  uint64_t offset_ = 0;
  uint64_t records_ = 0;
  GlobalMetadata metadata_;
};

class ChakraWriter {
 public:
  // Writes through ispsim::AtomicFile: the file appears only at close().
  ChakraWriter(std::string path, const GlobalMetadata& metadata);
  void write(const Node& node);
  void close();

 private:
  void write_record(const google::protobuf::Message& message);

  AtomicFile file_;
};

// The attribute `name` of `node`, or nullptr.
const AttributeProto* find_attr(const Node& node, const std::string& name);
const AttributeProto* find_attr(const GlobalMetadata& metadata, const std::string& name);

}  // namespace ispsim::chakra
