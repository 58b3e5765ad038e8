#include "common/sha1.h"

#include <boost/uuid/detail/sha1.hpp>

#include <cstdio>
#include <fstream>
#include <vector>

#include "common/error.h"

namespace ispsim {
namespace {

std::string hex(boost::uuids::detail::sha1& sha) {
  boost::uuids::detail::sha1::digest_type digest;
  sha.get_digest(digest);
  std::string out;
  char word[9];
  for (unsigned w : digest) {
    std::snprintf(word, sizeof word, "%08x", w);
    out += word;
  }
  return out;
}

}  // namespace

std::string text_sha1(const std::string& text) {
  boost::uuids::detail::sha1 sha;
  sha.process_bytes(text.data(), text.size());
  return hex(sha);
}

std::string file_sha1(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw BadInput(path, "cannot read the file to hash it");
  boost::uuids::detail::sha1 sha;
  std::vector<char> buf(1 << 16);
  while (in.read(buf.data(), static_cast<std::streamsize>(buf.size())) || in.gcount() > 0)
    sha.process_bytes(buf.data(), static_cast<size_t>(in.gcount()));
  if (in.bad()) throw BadInput(path, "read failed while hashing");
  return hex(sha);
}

}  // namespace ispsim
