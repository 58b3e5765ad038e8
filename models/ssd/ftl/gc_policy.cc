#include "models/ssd/ftl/gc_policy.h"

#include <memory>

#include "models/ssd/ftl/mapping_residency.h"

namespace ispsim::ftl {

uint64_t GreedyPolicy::select(const std::vector<LineInfo>& closed, uint64_t, uint64_t) const {
  const LineInfo* best = &closed.front();
  for (const LineInfo& l : closed)
    if (l.valid_pages < best->valid_pages) best = &l;
  return best->line;
}

uint64_t CostBenefitPolicy::select(const std::vector<LineInfo>& closed, uint64_t line_pages,
                                   uint64_t now) const {
  const LineInfo* best = nullptr;
  double best_score = -1;
  for (const LineInfo& l : closed) {
    if (l.valid_pages == 0) return l.line;  // free space for nothing copied
    const double u = double(l.valid_pages) / double(line_pages);
    const double score = double(now - l.last_write + 1) * (1 - u) / (2 * u);
    if (score > best_score) best_score = score, best = &l;
  }
  return best->line;
}

GcPolicyFactory& gc_policies() {
  static GcPolicyFactory factory("ftl.gc_policy");
  return factory;
}

void register_all() {
  GcPolicyFactory& f = gc_policies();
  if (f.contains("GREEDY")) return;
  f.add("GREEDY", "the closed line with the fewest valid pages",
        [] { return std::unique_ptr<GcPolicy>(new GreedyPolicy); });
  f.add("COST_BENEFIT", "the closed line with the largest age x (1 - u) / 2u",
        [] { return std::unique_ptr<GcPolicy>(new CostBenefitPolicy); });
  mapping_residencies().add("FULL", "the whole page-level table in controller DRAM", [](const FtlConfig&) {
    return std::unique_ptr<MappingResidency>(new WholeTableInDram);
  });
  mapping_residencies().add("CACHED", "DFTL: LRU-cached translation pages, the rest on flash",
                            [](const FtlConfig& c) { return std::unique_ptr<MappingResidency>(new CachedMapping(c)); });
}

}  // namespace ispsim::ftl
