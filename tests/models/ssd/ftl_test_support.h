// Small drives for the FTL tests: resolved parameter messages with the
// geometry and FTL settings a test names.
#pragma once

#include <cstdint>

#include "models/ssd/ftl/ftl_config.h"
#include "schema/resolve.h"

namespace ispsim::ftl::testing {

struct SmallDrive {
  uint32_t channels = 2, dies = 2, planes = 1, lines = 64, pages_per_block = 16;
  double spare_factor = 0.25;
  schema::FtlParams::GcPolicy policy = schema::FtlParams::GREEDY;
  double foreground_ratio = 0;  // GC only when no line is free
  uint32_t wear_threshold = 100;
  uint32_t endurance = 3000;
  // The mapping in controller DRAM; 0 or AUTO: the defaults.
  uint32_t page_bytes = 0;
  uint32_t mapping_entry_bytes = 0;
  uint64_t mapping_dram_bytes = 0;
  schema::FtlParams::Mapping mapping = schema::FtlParams::AUTO;
};

inline schema::NandParams nand_params(const SmallDrive& d) {
  schema::NandParams n;
  n.set_channels(d.channels);
  n.set_dies_per_channel(d.dies);
  n.set_planes_per_die(d.planes);
  n.set_blocks_per_plane(d.lines);
  n.set_pages_per_block(d.pages_per_block);
  if (d.page_bytes != 0) n.set_page_bytes(d.page_bytes);
  return schema::resolved(n, "nand");
}

inline FtlConfig config(const SmallDrive& d) {
  schema::FtlParams f;
  f.set_spare_factor(d.spare_factor);
  f.set_gc_policy(d.policy);
  f.set_gc_foreground_free_ratio(d.foreground_ratio);
  f.set_static_wear_leveling_threshold(d.wear_threshold);
  f.set_endurance_pe_cycles(d.endurance);
  if (d.mapping_entry_bytes != 0) f.set_mapping_entry_bytes(d.mapping_entry_bytes);
  if (d.mapping_dram_bytes != 0) f.set_mapping_dram_bytes(d.mapping_dram_bytes);
  f.set_mapping(d.mapping);
  return FtlConfig::from_params(nand_params(d), schema::resolved(f, "ftl"));
}

}  // namespace ispsim::ftl::testing
