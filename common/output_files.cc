#include "common/output_files.h"

namespace ispsim {

AtomicFile* OutputFiles::open(const std::string& path) {
  if (path.empty()) return nullptr;
  files_.push_back(std::make_unique<AtomicFile>(path));
  return files_.back().get();
}

AtomicFile* OutputFiles::adopt(std::unique_ptr<AtomicFile> file) {
  files_.push_back(std::move(file));
  return files_.back().get();
}

void OutputFiles::commit() {
  // Every file written out first: a failure there (a full device) leaves none committed.
  for (const auto& file : files_) file->finish();
  for (const auto& file : files_) file->commit();
}

}  // namespace ispsim
