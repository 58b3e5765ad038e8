// Shared by the libFuzzer targets: the loaders under test read files, so each
// input is written to a scratch file (tmpfs-speed, one per process) first.
// A target catches ispsim::BadInput only: for malformed input the contract is
// one BadInput, so any other exception, a crash or a sanitizer report is a bug.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

namespace ispsim::fuzz {

// A private scratch directory, created on first use and removed at exit.
inline const std::string& scratch_dir() {
  static const std::string dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/ispsim-fuzz-XXXXXX";
    if (!::mkdtemp(pattern.data())) std::abort();
    static std::string removal;
    removal = "rm -rf '" + pattern + "'";
    std::atexit([] { (void)std::system(removal.c_str()); });
    return pattern;
  }();
  return dir;
}

// Writes `size` bytes to <scratch>/<name> and returns the path.
inline std::string write_file(const std::string& name, const uint8_t* data, size_t size) {
  const std::string path = scratch_dir() + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) std::abort();
  return path;
}

// The input split at its first NUL byte: (before, after); after is empty when none.
inline std::pair<std::string, std::string> split_at_nul(const uint8_t* data, size_t size) {
  const std::string all(reinterpret_cast<const char*>(data), size);
  const auto nul = all.find('\0');
  if (nul == std::string::npos) return {all, {}};
  return {all.substr(0, nul), all.substr(nul + 1)};
}

}  // namespace ispsim::fuzz
