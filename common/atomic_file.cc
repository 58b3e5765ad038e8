#include "common/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "common/error.h"

namespace ispsim {

AtomicFile::AtomicFile(std::string path, bool binary)
    : path_(std::move(path)),
      tmp_path_(path_ + ".tmp." + std::to_string(::getpid())) {
  // Refused up front: rename() would only fail once the whole output is written.
  std::error_code ec;
  if (std::filesystem::is_directory(path_, ec)) throw BadInput(path_, "is a directory, not an output file");
  auto mode = std::ios::out | std::ios::trunc;
  if (binary) mode |= std::ios::binary;
  out_.open(tmp_path_, mode);
  if (!out_) throw BadInput(path_, std::string("cannot open for writing: ") + std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (!committed_) {
    out_.close();
    std::remove(tmp_path_.c_str());
  }
}

void AtomicFile::commit() {
  out_.flush();
  const bool ok = static_cast<bool>(out_);
  out_.close();
  if (!ok || out_.fail()) throw BadInput(path_, "write failed");
  if (std::rename(tmp_path_.c_str(), path_.c_str()) != 0)
    throw BadInput(path_, std::string("cannot rename into place: ") + std::strerror(errno));
  committed_ = true;
}

}  // namespace ispsim
