// Output files are written under a temporary name and renamed into place only
// when complete, so a failed run never leaves a half-written file behind.
#pragma once

#include <fstream>
#include <string>

namespace ispsim {

class AtomicFile {
 public:
  // Opens "<path>.tmp.<pid>" for writing; throws BadInput if that fails or if
  // `path` is an existing directory.
  explicit AtomicFile(std::string path, bool binary = false);
  // Removes the temporary file unless commit() was called.
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::ostream& stream() { return out_; }
  const std::string& path() const { return path_; }
  // Flushes, closes and renames onto the final path; throws BadInput on failure.
  void commit();

 private:
  std::string path_;
  std::string tmp_path_;
  std::ofstream out_;
  bool committed_ = false;
};

}  // namespace ispsim
