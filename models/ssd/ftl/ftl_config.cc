#include "models/ssd/ftl/ftl_config.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "common/error.h"
#include "schema/resolve.h"

namespace ispsim::ftl {

nand::PageAddress Geometry::block_address(uint64_t block) const {
  const uint64_t unit = block % units();
  nand::PageAddress a;
  a.channel = uint32_t(unit % channels);
  a.die = uint32_t(unit / channels % dies_per_channel);
  a.plane = uint32_t(unit / (uint64_t(channels) * dies_per_channel));
  a.block = uint32_t(block / units());
  return a;
}

uint64_t Geometry::block_of(uint64_t ppn) const {
  return line_of(ppn) * units() + ppn % line_pages() % units();
}

nand::PageAddress Geometry::address(uint64_t ppn) const {
  nand::PageAddress a = block_address(block_of(ppn));
  a.page = uint32_t(ppn % line_pages() / units());
  return a;
}

bool Geometry::operator==(const Geometry& o) const {
  return channels == o.channels && dies_per_channel == o.dies_per_channel &&
         planes_per_die == o.planes_per_die && blocks_per_plane == o.blocks_per_plane &&
         pages_per_block == o.pages_per_block && page_bytes == o.page_bytes;
}

namespace {

FtlConfig::GcPolicy to_policy(schema::FtlParams::GcPolicy p) {
  return p == schema::FtlParams::COST_BENEFIT ? FtlConfig::GcPolicy::kCostBenefit
                                              : FtlConfig::GcPolicy::kGreedy;
}

std::string text(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

void check_capacity(const FtlConfig& c, const std::string& where) {
  const uint64_t spare_pages = c.geometry.physical_pages() - c.logical_pages();
  const uint64_t needed = c.foreground_free_lines() + 1;  // the free reserve and one line to reclaim
  if (c.logical_pages() == 0)
    throw BadInput(where, "spare_factor = " + text(c.spare_factor) + " leaves no logical capacity");
  if (spare_pages < needed * c.geometry.line_pages())
    throw BadInput(where, "spare_factor = " + text(c.spare_factor) + " leaves " +
                              std::to_string(spare_pages) + " spare pages; GC needs " + std::to_string(needed) +
                              " lines of " + std::to_string(c.geometry.line_pages()) +
                              " pages (a line is one block of every plane)");
}

// AUTO: the whole table whenever it fits. FULL that does not fit, and a cache
// without room for one translation page, are refused.
FtlConfig::Mapping resolve_mapping(const FtlConfig& c, schema::FtlParams::Mapping asked, const std::string& where) {
  const bool fits = c.mapping_table_bytes() <= c.mapping_dram_bytes;
  if (asked == schema::FtlParams::FULL && !fits)
    throw BadInput(where, "mapping = FULL: the page-level table needs " + std::to_string(c.mapping_table_bytes()) +
                              " bytes (" + std::to_string(c.logical_pages()) + " logical pages x " +
                              std::to_string(c.mapping_entry_bytes) + "), more than mapping_dram_bytes = " +
                              std::to_string(c.mapping_dram_bytes));
  const bool cached = asked == schema::FtlParams::CACHED || (asked != schema::FtlParams::FULL && !fits);
  if (cached && c.cached_translation_pages() == 0)
    throw BadInput(where, "mapping_dram_bytes = " + std::to_string(c.mapping_dram_bytes) +
                              " holds no translation page of " + std::to_string(c.geometry.page_bytes) +
                              " bytes for the cached mapping");
  return cached ? FtlConfig::Mapping::kCached : FtlConfig::Mapping::kFull;
}

}  // namespace

FtlConfig FtlConfig::from_params(const schema::NandParams& nand, const schema::FtlParams& ftl,
                                 const std::string& where) {
  schema::require_resolved(nand, where);
  schema::require_resolved(ftl, where);
  FtlConfig c;
  c.geometry = Geometry{nand.channels(),         nand.dies_per_channel(), nand.planes_per_die(),
                        nand.blocks_per_plane(), nand.pages_per_block(),  nand.page_bytes()};
  c.spare_factor = ftl.spare_factor();
  c.gc_policy = to_policy(ftl.gc_policy());
  c.gc_foreground_free_ratio = ftl.gc_foreground_free_ratio();
  c.gc_background_free_ratio = ftl.gc_background_free_ratio();
  c.gc_idle_us = ftl.gc_idle_us();
  c.static_wear_leveling_threshold = ftl.static_wear_leveling_threshold();
  c.endurance_pe_cycles = ftl.endurance_pe_cycles();
  c.t_bers_us = ftl.t_bers_us();
  c.erase_energy_j = nand.vcc_v() * ftl.erase_current_ma() * 1e-3 * ftl.t_bers_us() * 1e-6;
  c.mapping_entry_bytes = ftl.mapping_entry_bytes();
  c.mapping_dram_bytes = ftl.mapping_dram_bytes();
  c.precondition_fill_ratio = ftl.precondition_fill_ratio();
  c.precondition_fill_pattern = ftl.precondition_fill_pattern() == schema::FtlParams::RANDOM
                                    ? FillPattern::kRandom
                                    : FillPattern::kSequential;
  c.precondition_window_ratio = ftl.precondition_window_ratio();
  c.precondition_waf_tolerance = ftl.precondition_waf_tolerance();
  c.precondition_max_windows = ftl.precondition_max_windows();
  c.precondition_seed = ftl.precondition_seed();
  check_capacity(c, where);
  c.mapping = resolve_mapping(c, ftl.mapping(), where);
  return c;
}

uint64_t FtlConfig::logical_pages() const {
  return uint64_t(std::floor(double(geometry.physical_pages()) * (1 - spare_factor)));
}

uint64_t FtlConfig::foreground_free_lines() const {
  return std::max<uint64_t>(1, uint64_t(std::ceil(gc_foreground_free_ratio * double(geometry.lines()))));
}

uint64_t FtlConfig::background_free_lines() const {
  return uint64_t(std::ceil(gc_background_free_ratio * double(geometry.lines())));
}

uint64_t FtlConfig::translation_pages() const {
  const uint64_t per_page = entries_per_translation_page();
  return (logical_pages() + per_page - 1) / per_page;
}

const char* to_string(FtlConfig::Mapping mapping) {
  return mapping == FtlConfig::Mapping::kCached ? "CACHED" : "FULL";
}

const char* to_string(FtlConfig::GcPolicy policy) {
  return policy == FtlConfig::GcPolicy::kCostBenefit ? "COST_BENEFIT" : "GREEDY";
}

}  // namespace ispsim::ftl
