#include "traces/chakra/chakra_io.h"

#include <google/protobuf/stubs/logging.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/error.h"
#include "common/input_file.h"

namespace ispsim::chakra {

namespace {

// Varints longer than this cannot be a record length (the published readers use 32-bit lengths).
constexpr int kMaxVarintBytes = 5;
// A record larger than this is a corrupt length, not a node.
constexpr uint64_t kMaxRecordBytes = uint64_t{1} << 30;

template <class Message>
bool parse_quietly(Message& message, const std::string& bytes) {
  google::protobuf::LogSilencer quiet;  // one error line from us, not protobuf's log
  return message.ParseFromString(bytes);
}

template <class Repeated>
const AttributeProto* find_in(const Repeated& attrs, const std::string& name) {
  for (const AttributeProto& a : attrs)
    if (a.name() == name) return &a;
  return nullptr;
}

}  // namespace

ChakraReader::ChakraReader(std::string path) : path_(std::move(path)) {
  std::error_code ec;
  if (!std::filesystem::exists(path_, ec)) throw BadInput(path_, "no such file");
  if (check_input_file(path_) == 0) throw BadInput(path_, "empty file (not a Chakra execution trace)");
  in_.open(path_, std::ios::binary);
  if (!in_) throw BadInput(path_, std::string("cannot open: ") + std::strerror(errno));
  if (in_.peek() == 0x1f) {
    char two[2] = {};
    in_.read(two, 2);
    if (static_cast<unsigned char>(two[1]) == 0x8b)
      throw BadInput(path_, "gzip-compressed Chakra trace; decompress it first (gunzip)");
    in_.clear();
    in_.seekg(0);
  }
  std::string bytes;
  if (!read_record(bytes, "GlobalMetadata") || !parse_quietly(metadata_, bytes))
    throw BadInput(path_, "record #0 (byte 0) is not a Chakra GlobalMetadata (not a Chakra execution trace?)");
}

bool ChakraReader::read_record(std::string& bytes, const char* what) {
  const uint64_t start = offset_;
  uint64_t length = 0;
  for (int i = 0;; ++i) {
    const int c = in_.get();
    if (c == EOF) {
      if (i == 0) return false;
      throw BadInput(path_, std::string(what) + " record #" + std::to_string(records_) + " (byte " +
                                std::to_string(start) + ") is cut off in its length");
    }
    ++offset_;
    if (i == kMaxVarintBytes) throw BadInput(path_, "record #" + std::to_string(records_) + " has a corrupt length");
    length |= uint64_t(c & 0x7f) << (7 * i);
    if (!(c & 0x80)) break;
  }
  if (length > kMaxRecordBytes)
    throw BadInput(path_, "record #" + std::to_string(records_) + " (byte " + std::to_string(start) +
                              ") claims " + std::to_string(length) + " bytes (corrupt length)");
  bytes.resize(length);
  in_.read(bytes.data(), std::streamsize(length));
  if (uint64_t(in_.gcount()) != length)
    throw BadInput(path_, std::string(what) + " record #" + std::to_string(records_) + " (byte " +
                              std::to_string(start) + ") is cut off: " + std::to_string(in_.gcount()) + " of " +
                              std::to_string(length) + " bytes");
  offset_ += length;
  ++records_;
  return true;
}

bool ChakraReader::next(Node& node) {
  std::string bytes;
  const uint64_t record = records_, start = offset_;
  if (!read_record(bytes, "node")) return false;
  node.Clear();
  if (!parse_quietly(node, bytes))
    throw BadInput(path_, "record #" + std::to_string(record) + " (byte " + std::to_string(start) +
                              ") is not a valid Chakra node");
  return true;
}

ChakraWriter::ChakraWriter(std::string path, const GlobalMetadata& metadata) : file_(std::move(path), true) {
  write_record(metadata);
}

void ChakraWriter::write(const Node& node) { write_record(node); }

void ChakraWriter::write_record(const google::protobuf::Message& message) {
  std::string bytes;
  message.SerializeToString(&bytes);
  std::string length;
  for (uint64_t v = bytes.size(); ; v >>= 7) {
    length.push_back(static_cast<char>((v & 0x7f) | (v >= 0x80 ? 0x80 : 0)));
    if (v < 0x80) break;
  }
  file_.stream().write(length.data(), std::streamsize(length.size()));
  file_.stream().write(bytes.data(), std::streamsize(bytes.size()));
}

void ChakraWriter::close() { file_.commit(); }

const AttributeProto* find_attr(const Node& node, const std::string& name) { return find_in(node.attr(), name); }
const AttributeProto* find_attr(const GlobalMetadata& metadata, const std::string& name) {
  return find_in(metadata.attr(), name);
}

}  // namespace ispsim::chakra
