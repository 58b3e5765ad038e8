#include "common/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "common/error.h"

namespace ispsim {
namespace {

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Opens without blocking, checks the type; the caller closes the descriptor.
int open_regular(const std::string& path, uint64_t& size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int e = errno;
    throw BadInput(path, e == ENOENT ? std::string("no such file") : "cannot open: " + std::string(std::strerror(e)));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const std::string kind = ::fstat(fd, &st) == 0 ? kind_of(st.st_mode) : "not readable";
    ::close(fd);
    throw BadInput(path, "is " + kind + ", not a regular input file");
  }
  size = static_cast<uint64_t>(st.st_size);
  return fd;
}

}  // namespace

uint64_t check_input_file(const std::string& path) {
  uint64_t size = 0;
  ::close(open_regular(path, size));
  return size;
}

std::string read_input_file(const std::string& path, uint64_t max_bytes) {
  uint64_t size = 0;
  const int fd = open_regular(path, size);
  auto too_big = [&] {
    ::close(fd);
    return BadInput(path, "larger than the limit of " + std::to_string(max_bytes) + " bytes for this input");
  };
  if (size > max_bytes) throw too_big();
  std::string text;
  text.reserve(size);
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      throw BadInput(path, "read error: " + std::string(std::strerror(e)));
    }
    if (n == 0) break;
    if (text.size() + static_cast<uint64_t>(n) > max_bytes) throw too_big();  // grew while read
    text.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  const bool ea = ::stat(a.c_str(), &sa) == 0, eb = ::stat(b.c_str(), &sb) == 0;
  if (ea && eb) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  if (ea != eb) return false;
  // Neither exists yet: compare canonical parent directories and names.
  auto canonical = [](const std::string& p) {
    const std::string::size_type slash = p.find_last_of('/');
    const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : p.substr(0, slash);
    const std::string name = slash == std::string::npos ? p : p.substr(slash + 1);
    char resolved[PATH_MAX];
    return (::realpath(dir.c_str(), resolved) ? std::string(resolved) : dir) + "/" + name;
  };
  return canonical(a) == canonical(b);
}

}  // namespace ispsim
