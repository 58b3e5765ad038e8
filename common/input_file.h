// Opening user-given input files without surprises: opened with O_NONBLOCK (a
// FIFO without a writer cannot hang the open), then only regular files are
// accepted, with a size cap for text. Every problem is one BadInput line naming
// the file.
#pragma once

#include <cstdint>
#include <string>

namespace ispsim {

// Default cap of a text input (prompts, calibration text, JSONL, JSON, textproto).
constexpr uint64_t kMaxTextInputBytes = uint64_t{64} << 20;  // 64 MiB

// Checks that `path` is an existing, readable regular file; returns its size.
uint64_t check_input_file(const std::string& path);

// The whole file; BadInput if it is not a regular file or larger than `max_bytes`.
std::string read_input_file(const std::string& path, uint64_t max_bytes = kMaxTextInputBytes);

// Whether two paths name the same file (same device and inode; for a path that
// does not exist yet, the same canonical parent directory and name).
bool same_file(const std::string& a, const std::string& b);

}  // namespace ispsim
