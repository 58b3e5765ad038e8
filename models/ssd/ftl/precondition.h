// Preconditioning, as MQSim brings a drive to steady state before a run: fill
// a share of the logical capacity (sequentially or in a pseudo-random order),
// then age it with uniform random single-page overwrites of the filled range,
// window by window, until the write amplification of two consecutive windows
// agrees within the tolerance (ftl.precondition_* parameters). Only windows
// that start after GC has run count, so a drive whose spare space has not been
// used up yet is never taken for steady.
#pragma once

#include <cstdint>
#include <vector>

#include "models/ssd/ftl/ftl.h"

namespace ispsim::ftl {

struct PreconditionReport {
  uint64_t fill_pages = 0;
  uint64_t overwrite_pages = 0;
  std::vector<double> window_waf;  // programs / host pages of each window
  bool settled = false;            // false: precondition_max_windows ran out first
  double waf() const { return window_waf.empty() ? 1.0 : window_waf.back(); }
};

// `run_pages` > 1 overwrites runs of that many logical pages, each starting at
// a uniformly random multiple of `run_pages`, instead of single pages
// (KV-sized overwrites, aligned as a KV region's tiles are): with runs of a
// multiple of the units (channels x dies x planes) the frontier keeps them on
// consecutive physical pages, so the mapping of an aged drive keeps about one
// extent per run instead of one per page.
PreconditionReport precondition(Ftl& ftl, uint64_t run_pages = 1);

}  // namespace ispsim::ftl
