// Drive-state files (models/ssd/ftl/drive_state.h) on a small drive. The input
// drives the state rather than being it, because a random file stops at the
// checksum: its first bytes are up to 64 writes and TRIMs (5 bytes each: kind,
// first page, page count), which must save and load back to the same mapping;
// the rest are (position, XOR) edits of that saved file, whose CRC-32C is then
// recomputed, so the loader sees consistent framing over inconsistent contents.
// What it accepts must map every logical page to its own physical page.
#include <set>
#include <string>

#include "common/crc32c.h"
#include "common/error.h"
#include "fuzz/fuzz_support.h"
#include "models/ssd/ftl/drive_state.h"
#include "tests/models/ssd/ftl_test_support.h"

namespace {

using ispsim::ftl::Ftl;

uint32_t read16(const uint8_t* p) { return uint32_t(p[0]) | uint32_t(p[1]) << 8; }

// Applies the input's operations; returns the bytes it used.
size_t apply_operations(Ftl& ftl, const uint8_t* data, size_t size) {
  const size_t count = size == 0 ? 0 : std::min<size_t>(data[0] % 65, (size - 1) / 5);
  const uint64_t pages = ftl.logical_pages();
  for (size_t i = 0; i < count; ++i) {
    const uint8_t* op = data + 1 + 5 * i;
    const uint64_t lpn = read16(op + 1) % pages;
    const uint64_t n = 1 + read16(op + 3) % (pages - lpn);
    if (op[0] & 1) ftl.trim(lpn, n);
    else ftl.write(lpn, n);
  }
  return 1 + 5 * count;
}

// Every logical page maps to nothing or to its own physical page of the drive.
void check_mapping(const Ftl& ftl) {
  std::set<uint64_t> used;
  for (uint64_t lpn = 0; lpn < ftl.logical_pages(); ++lpn) {
    const std::optional<uint64_t> ppn = ftl.lookup(lpn);
    if (!ppn) continue;
    if (*ppn >= ftl.geometry().physical_pages() || !used.insert(*ppn).second) __builtin_trap();
  }
}

std::string with_checksum(std::string state) {
  const uint32_t crc = ispsim::crc32c(state.data(), state.size() - 4);
  for (int i = 0; i < 4; ++i) state[state.size() - 4 + i] = char(crc >> (8 * i));
  return state;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const ispsim::ftl::FtlConfig config = ispsim::ftl::testing::config({});
  Ftl written(config);
  size_t used = 0;
  try {
    used = apply_operations(written, data, size);
  } catch (const ispsim::BadInput&) {
    return 0;  // e.g. a drive worn out by the operations
  }
  std::string state = ispsim::ftl::DriveState::serialize(written);
  const std::string path = ispsim::fuzz::write_file("drive.state",
                                                    reinterpret_cast<const uint8_t*>(state.data()), state.size());
  Ftl reloaded(config);
  ispsim::ftl::DriveState::load(reloaded, path);  // a saved state must load: no catch
  for (uint64_t lpn = 0; lpn < written.logical_pages(); ++lpn)
    if (reloaded.lookup(lpn) != written.lookup(lpn)) __builtin_trap();

  for (size_t i = used; i + 3 <= size; i += 3) state[read16(data + i) % (state.size() - 4)] ^= char(data[i + 2]);
  state = with_checksum(state);
  ispsim::fuzz::write_file("drive.state", reinterpret_cast<const uint8_t*>(state.data()), state.size());
  Ftl edited(config);
  try {
    ispsim::ftl::DriveState::load(edited, path);
    check_mapping(edited);
  } catch (const ispsim::BadInput&) {
  }
  return 0;
}
