#include "common/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "common/error.h"
#include "common/termination.h"

namespace ispsim {

// A buffered stream over a file descriptor that remembers the first write error
// (errno), so commit() can say what went wrong. Seeking is supported for files
// (TraceWriter patches its header).
class AtomicFile::FdBuf : public std::streambuf {
 public:
  explicit FdBuf(int fd) : fd_(fd), buffer_(1 << 16) { setp(buffer_.data(), buffer_.data() + buffer_.size()); }
  ~FdBuf() override = default;
  int error() const { return error_; }
  bool drain() { return flush_buffer(); }

 protected:
  int_type overflow(int_type c) override {
    if (!flush_buffer()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override { return flush_buffer() ? 0 : -1; }
  pos_type seekoff(off_type off, std::ios_base::seekdir dir, std::ios_base::openmode) override {
    if (!flush_buffer()) return pos_type(off_type(-1));
    const int whence = dir == std::ios_base::beg ? SEEK_SET : dir == std::ios_base::cur ? SEEK_CUR : SEEK_END;
    const off_t at = ::lseek(fd_, off, whence);
    if (at < 0) {
      if (!error_) error_ = errno;
      return pos_type(off_type(-1));
    }
    return pos_type(at);
  }
  pos_type seekpos(pos_type pos, std::ios_base::openmode which) override {
    return seekoff(off_type(pos), std::ios_base::beg, which);
  }

 private:
  bool flush_buffer() {
    if (error_) return false;
    const char* p = pbase();
    while (p < pptr()) {
      const ssize_t n = ::write(fd_, p, static_cast<size_t>(pptr() - p));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        error_ = n < 0 ? errno : EIO;
        return false;
      }
      p += n;
    }
    setp(buffer_.data(), buffer_.data() + buffer_.size());
    return true;
  }

  int fd_;
  std::vector<char> buffer_;
  int error_ = 0;
};

namespace {

std::string errno_text(int e) { return std::strerror(e); }

// The file a path finally names: symlinks resolved; for a dangling symlink, the
// path its last link points to (created there). A path that does not exist is
// returned unchanged.
std::string resolve_target(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
  char resolved[PATH_MAX];
  if (::realpath(path.c_str(), resolved)) return resolved;
  throw BadInput(path, "is a symlink to a missing or unreachable file (" + errno_text(errno) + ")");
}

}  // namespace

AtomicFile::AtomicFile(std::string path, bool /*binary*/) : path_(std::move(path)), out_(nullptr) {
  if (path_.empty()) throw BadInput("", "empty output file name");
  target_ = resolve_target(path_);
  struct stat st {};
  if (::stat(target_.c_str(), &st) != 0) {
    if (errno != ENOENT) throw BadInput(path_, "cannot write: " + errno_text(errno));
    open_regular(target_);
  } else if (S_ISDIR(st.st_mode)) {
    throw BadInput(path_, "is a directory, not an output file");
  } else if (S_ISREG(st.st_mode)) {
    mode_ = st.st_mode & 07777;
    keep_mode_ = true;
    open_regular(target_);
  } else if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
    open_through(target_, S_ISFIFO(st.st_mode));
  } else {
    throw BadInput(path_, S_ISBLK(st.st_mode) ? "is a block device; refusing to write to it"
                                              : "is a socket or special file, not an output file");
  }
  buf_ = std::make_unique<FdBuf>(fd_);
  out_.rdbuf(buf_.get());
}

void AtomicFile::open_regular(const std::string& target) {
  // Same directory as the target, so rename() is atomic; O_EXCL never follows
  // or truncates something already there under that name.
  // The temporary name must fit NAME_MAX where the target's does: a long target
  // name is cut to leave room for the suffix (O_EXCL and the attempts below
  // keep two cut names apart).
  const std::string suffix = ".tmp." + std::to_string(::getpid());
  const size_t slash = target.rfind('/');
  const size_t name_start = slash == std::string::npos ? 0 : slash + 1;
  constexpr size_t kNameMax = 255, kAttemptDigits = 3;
  std::string base = target;
  if (target.size() - name_start + suffix.size() + 1 + kAttemptDigits > kNameMax)
    base = target.substr(0, name_start + kNameMax - suffix.size() - 1 - kAttemptDigits - 1) + "~";
  base += suffix;
  for (int attempt = 0; attempt < 100 && fd_ < 0; ++attempt) {
    tmp_path_ = attempt == 0 ? base : base + "." + std::to_string(attempt);
    temp_slot_ = termination::register_temp(tmp_path_.c_str());
    fd_ = ::open(tmp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (fd_ >= 0) break;
    const int e = errno;
    termination::forget_temp(temp_slot_);
    temp_slot_ = -1;
    if (e != EEXIST) throw BadInput(path_, "cannot open for writing: " + errno_text(e));
  }
  if (fd_ < 0) throw BadInput(path_, "cannot create a temporary file next to it");
}

void AtomicFile::open_through(const std::string& target, bool fifo) {
  through_ = true;
  // O_NONBLOCK: a FIFO nobody reads fails with ENXIO instead of blocking forever.
  fd_ = ::open(target.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY | (fifo ? O_NONBLOCK : 0));
  if (fd_ < 0) {
    const int e = errno;
    throw BadInput(path_, e == ENXIO ? std::string("is a FIFO with no reader") : "cannot open for writing: " + errno_text(e));
  }
  if (fifo) ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) & ~O_NONBLOCK);
}

int AtomicFile::write_error() const { return buf_ ? buf_->error() : 0; }

bool AtomicFile::seekable() const { return fd_ >= 0 && ::lseek(fd_, 0, SEEK_CUR) >= 0; }

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !tmp_path_.empty()) ::unlink(tmp_path_.c_str());
  if (temp_slot_ >= 0) termination::forget_temp(temp_slot_);
}

void AtomicFile::finish() {
  if (finished_) return;
  out_.flush();
  buf_->drain();
  const int write_error = buf_->error();
  if (write_error || !out_) throw BadInput(path_, "write failed: " + errno_text(write_error ? write_error : EIO));
  const int fd = fd_;
  fd_ = -1;
  if (through_) {
    if (::close(fd) != 0 && errno != EINTR) throw BadInput(path_, "write failed: " + errno_text(errno));
    finished_ = true;
    return;
  }
  if (keep_mode_) ::fchmod(fd, mode_);
  if (::fsync(fd) != 0) {
    const int error = errno;
    ::close(fd);
    throw BadInput(path_, "write failed (fsync): " + errno_text(error));
  }
  if (::close(fd) != 0) throw BadInput(path_, "write failed (close): " + errno_text(errno));
  finished_ = true;
}

void AtomicFile::commit() {
  if (committed_) return;
  finish();
  if (through_) {
    committed_ = true;
    return;
  }
  if (::rename(tmp_path_.c_str(), target_.c_str()) != 0)
    throw BadInput(path_, "cannot rename into place: " + errno_text(errno));
  committed_ = true;
  // The rename itself is durable only once the directory is synced.
  const std::string::size_type slash = target_.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : target_.substr(0, slash);
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
}

}  // namespace ispsim
