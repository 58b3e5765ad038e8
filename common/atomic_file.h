// Output files that never destroy anything.
// - A regular file (or a new path) is written under a temporary name in the
//   same directory, fsync'ed and renamed into place only by commit(): a failed
//   or interrupted run leaves the existing file as it was and no temporary.
// - A symlink is followed: its target is written (atomically if it is a
//   regular file); the link itself stays a link.
// - A character device or a FIFO (/dev/null, /dev/stdout, a pipe) is written
//   through: it cannot be replaced by a regular file. A FIFO without a reader
//   is refused at once instead of blocking.
// - A directory, a block device or a socket is refused with one BadInput line.
// Temporaries are registered with common/termination.h, so SIGINT/SIGTERM/SIGHUP
// remove them too.
#pragma once

#include <memory>
#include <ostream>
#include <streambuf>
#include <string>

namespace ispsim {

class AtomicFile {
 public:
  // Opens the output; throws BadInput naming `path` if it cannot be written.
  // `binary` is kept for source compatibility (every write is binary on POSIX).
  explicit AtomicFile(std::string path, bool binary = false);
  // Removes the temporary file unless commit() was called.
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::ostream& stream() { return out_; }
  const std::string& path() const { return path_; }
  // True for a device or FIFO written directly (no temporary, no seeking back).
  bool writes_through() const { return through_; }
  // The errno of the first failed write, 0 if none (for callers' messages).
  int write_error() const;
  // False for a FIFO or another target that cannot seek back (TraceWriter needs it).
  bool seekable() const;
  // Flushes, fsyncs and closes the file (a write-through target: closes it);
  // throws BadInput naming the path on any failure. Where a full or failing
  // device shows, so several files are finished before any is committed.
  void finish();
  // finish(), then renames onto the final path; throws BadInput naming the
  // path on any failure.
  void commit();

 private:
  class FdBuf;
  void open_regular(const std::string& target);
  void open_through(const std::string& target, bool fifo);

  std::string path_;
  std::string target_;    // the file finally written (symlinks resolved)
  std::string tmp_path_;  // empty when writing through
  int fd_ = -1;
  int temp_slot_ = -1;
  bool through_ = false;
  bool finished_ = false;
  bool committed_ = false;
  unsigned mode_ = 0666;  // of a replaced file (kept), else 0666 & ~umask by open()
  bool keep_mode_ = false;
  std::unique_ptr<FdBuf> buf_;
  std::ostream out_;
};

}  // namespace ispsim
