// A drive's FTL state in one file, so that runs can start from the same aged
// drive: mapping, line states, the open line, erase counts, the GC clock and
// the counters. Valid-page counts and the GC's per-line record of what was
// written are rebuilt from the mapping on load.
//
// Format (little-endian): magic "ISPFTL\r\n", u32 version, u32 0, the geometry
// (6 x u32) and logical pages (u64) it belongs to, counters (7 x u64), clock,
// open line (UINT64_MAX: none, u64), per unit the pages written in its block of
// the open line (u32, channel fastest, then die, then plane), per line its state
// (u8), last write (u64) and whether it is a home line not yet full (u8; if 1,
// its bit per slot of what was programmed: ceil(line_pages / 64) x u64), per
// block its erases (u32), the extent count (u64)
// and each extent's lpn, ppn and count (u64 each); last the CRC-32C of all
// bytes before it (u32). Written atomically (common/atomic_file.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/ssd/ftl/ftl.h"

namespace ispsim::ftl {

class StateReader;  // drive_state.cc

class DriveState {
 public:
  static constexpr uint32_t kVersion = 3;

  // Writes `ftl`'s state to `path`; BadInput naming the path if it cannot.
  static void save(const Ftl& ftl, const std::string& path);
  // The file's bytes (for a caller that commits them with other outputs).
  static std::string serialize(const Ftl& ftl);
  // Replaces the state of `ftl` (fresh or not) with the file's. BadInput naming
  // `path` and the problem when the file is not a drive state, has another
  // version, fails its checksum, belongs to another geometry or capacity, or is
  // inconsistent; `ftl` is left unchanged then.
  static void load(Ftl& ftl, const std::string& path);

 private:
  static void check_open_line(const Ftl& s, const std::string& path);
  static void restore_line(Ftl& s, uint64_t line, StateReader& r, const std::string& path);
  static void restore_fill(Ftl& s, const std::vector<uint32_t>& fill, const std::string& path);
  static void restore_extent(Ftl& s, const PageRun& run, const std::string& path);
  static void check_physical_overlap(Ftl& s, const std::string& path);
};

}  // namespace ispsim::ftl
