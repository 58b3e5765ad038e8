// The output files of one command, opened early and committed late: each named
// output is opened before any work (so an unwritable path fails at once, with
// AtomicFile's one BadInput line), written when the work is done, and published
// only by commit(). If the command throws first, none is committed and every
// existing file stays as it was (the AtomicFiles remove their temporaries).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/atomic_file.h"

namespace ispsim {

class OutputFiles {
 public:
  // Opens `path`; an empty path names no output and returns nullptr. The file
  // lives as long as this set.
  AtomicFile* open(const std::string& path);
  // Takes a file opened elsewhere (the waveform's), to be committed with the rest.
  AtomicFile* adopt(std::unique_ptr<AtomicFile> file);
  // Finishes every file, then commits them in the order they were opened.
  void commit();

 private:
  std::vector<std::unique_ptr<AtomicFile>> files_;
};

}  // namespace ispsim
