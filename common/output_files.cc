#include "common/output_files.h"

namespace ispsim {

AtomicFile* OutputFiles::open(const std::string& path) {
  if (path.empty()) return nullptr;
  files_.push_back(std::make_unique<AtomicFile>(path));
  return files_.back().get();
}

void OutputFiles::commit() {
  for (const auto& file : files_) file->commit();
}

}  // namespace ispsim
