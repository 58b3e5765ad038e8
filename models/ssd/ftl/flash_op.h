// The flash operations the FTL returns for a timing model to run.
#pragma once

#include <cstdint>

namespace ispsim::ftl {

enum class OpKind : uint8_t { kRead, kProgram, kErase };
// kMapping: a translation page of the cached mapping (mapping_residency.h) read
// on a miss or programmed when a dirty one is evicted.
enum class OpCause : uint8_t { kHost, kGc, kWearLeveling, kMapping };

// A read or program of physical pages [first, first + count) (consecutive
// physical pages: Geometry::address() gives each one's channel, die, plane,
// block and page), or the erase of global block `first` (count 1). For
// OpCause::kMapping, `first` is a translation page (translation_page_address()
// gives where it is) and count is 1.
struct FlashOp {
  OpKind kind = OpKind::kRead;
  OpCause cause = OpCause::kHost;
  uint64_t first = 0;
  uint64_t count = 0;
};

}  // namespace ispsim::ftl
