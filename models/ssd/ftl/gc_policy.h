// The garbage collector's choice of victim, a pluggable role: given the lines
// that hold data (closed lines: full, not being written), which one to reclaim.
// The FTL then copies its valid pages to the write frontier and erases its
// blocks. Implementations register by name in ftl::register_all() under the
// names of ftl.gc_policy.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/core/registry.h"

namespace ispsim::ftl {

struct LineInfo {
  uint64_t line = 0;
  uint64_t valid_pages = 0;
  uint64_t last_write = 0;  // FTL clock (host pages written) when the line was last written
};

class GcPolicy {
 public:
  virtual ~GcPolicy() = default;
  // The line to reclaim among `closed` (never empty), at FTL clock `now`.
  virtual uint64_t select(const std::vector<LineInfo>& closed, uint64_t line_pages, uint64_t now) const = 0;
};

// Fewest valid pages: the least copying per line reclaimed.
class GreedyPolicy final : public GcPolicy {
 public:
  uint64_t select(const std::vector<LineInfo>& closed, uint64_t line_pages, uint64_t now) const override;
};

// Largest age x (1 - u) / 2u, u = valid / line_pages (Kawaguchi, Nishioka and
// Motoda, USENIX Winter 1995): free space gained per page copied (read and
// written: 2u), weighted by how long the line has been stable, so cold lines are
// reclaimed at a higher u than hot ones that may still empty themselves.
class CostBenefitPolicy final : public GcPolicy {
 public:
  uint64_t select(const std::vector<LineInfo>& closed, uint64_t line_pages, uint64_t now) const override;
};

using GcPolicyFactory = core::Factory<GcPolicy>;

// The role's factory ("ftl.gc_policy"), filled by register_all().
GcPolicyFactory& gc_policies();

// Registers GREEDY and COST_BENEFIT, and the mapping residencies FULL and
// CACHED (mapping_residency.h); further calls do nothing.
void register_all();

}  // namespace ispsim::ftl
