// Resolved parameters of the flash translation layer (schema/ftl.proto) and the
// flash geometry it manages (schema/nand.proto), with the physical page
// numbering every FTL part shares.
//
// Physical pages are numbered in the order the write frontier fills them, which
// is the KV layout of models/nand/layout.h: a line (a superblock) is block b of
// every plane of every die; inside a line consecutive pages go to consecutive
// channels first, then dies, then planes, then the next page of each block:
//
//   ppn = line x line_pages + slot,   line_pages = units x pages_per_block
//   slot -> unit slot mod units (channel fastest, then die, then plane),
//           page slot / units
//
// so a sequential run of host writes lands on consecutive physical pages
// striped over every channel, die and plane, and one extent maps it.
#pragma once

#include <cstdint>
#include <string>

#include "models/nand/page_address.h"
#include "schema/ftl.pb.h"
#include "schema/nand.pb.h"

namespace ispsim::ftl {

struct Geometry {
  uint32_t channels = 0;
  uint32_t dies_per_channel = 0;
  uint32_t planes_per_die = 0;
  uint32_t blocks_per_plane = 0;  // = lines
  uint32_t pages_per_block = 0;
  uint32_t page_bytes = 0;

  uint64_t units() const { return uint64_t(channels) * dies_per_channel * planes_per_die; }
  uint64_t lines() const { return blocks_per_plane; }
  uint64_t line_pages() const { return units() * pages_per_block; }
  uint64_t blocks() const { return units() * blocks_per_plane; }
  uint64_t physical_pages() const { return lines() * line_pages(); }

  // The page's channel, die, plane, block (within its plane) and page.
  nand::PageAddress address(uint64_t ppn) const;
  // Global block id of a physical page: line x units + unit.
  uint64_t block_of(uint64_t ppn) const;
  // The block's address (page 0); `block` is a global block id.
  nand::PageAddress block_address(uint64_t block) const;
  uint64_t line_of(uint64_t ppn) const { return ppn / line_pages(); }
  bool operator==(const Geometry& o) const;
};

struct FtlConfig {
  enum class GcPolicy { kGreedy, kCostBenefit };
  enum class FillPattern { kSequential, kRandom };
  // The whole page-level table in controller DRAM, or DFTL's cached translation pages.
  enum class Mapping { kFull, kCached };

  Geometry geometry;
  double spare_factor = 0;
  GcPolicy gc_policy = GcPolicy::kGreedy;
  double gc_foreground_free_ratio = 0;
  double gc_background_free_ratio = 0;
  double gc_idle_us = 0;  // idle time before background GC starts
  uint32_t static_wear_leveling_threshold = 0;  // P/E cycles
  uint32_t endurance_pe_cycles = 0;
  double t_bers_us = 0;
  double erase_energy_j = 0;  // nand.vcc_v x erase_current x tBERS
  uint32_t mapping_entry_bytes = 0;
  uint64_t mapping_dram_bytes = 0;
  Mapping mapping = Mapping::kFull;  // AUTO resolved
  double precondition_fill_ratio = 0;
  FillPattern precondition_fill_pattern = FillPattern::kSequential;
  double precondition_window_ratio = 0;
  double precondition_waf_tolerance = 0;
  uint32_t precondition_max_windows = 0;
  uint64_t precondition_seed = 0;

  // Both messages resolved (schema/resolve.h). Throws BadInput naming `where`
  // when the spare factor leaves fewer than two spare lines (GC needs one line
  // to copy into and one to reclaim) or the logical capacity is empty, when
  // mapping = FULL and the table exceeds mapping_dram_bytes, and when a cached
  // mapping's DRAM holds no translation page.
  static FtlConfig from_params(const schema::NandParams& nand, const schema::FtlParams& ftl,
                               const std::string& where = "ftl");

  uint64_t logical_pages() const;
  // The page-level table: logical pages x mapping_entry_bytes.
  uint64_t mapping_table_bytes() const { return logical_pages() * mapping_entry_bytes; }
  // The cached mapping's translation pages (DFTL): mapping entries by the page.
  uint64_t entries_per_translation_page() const { return geometry.page_bytes / mapping_entry_bytes; }
  uint64_t translation_pages() const;
  uint64_t cached_translation_pages() const { return mapping_dram_bytes / geometry.page_bytes; }
  // Free lines below which foreground / background GC runs.
  uint64_t foreground_free_lines() const;
  uint64_t background_free_lines() const;
};

const char* to_string(FtlConfig::GcPolicy policy);
const char* to_string(FtlConfig::Mapping mapping);

}  // namespace ispsim::ftl
