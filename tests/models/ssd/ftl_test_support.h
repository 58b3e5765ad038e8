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
};

inline schema::NandParams nand_params(const SmallDrive& d) {
  schema::NandParams n;
  n.set_channels(d.channels);
  n.set_dies_per_channel(d.dies);
  n.set_planes_per_die(d.planes);
  n.set_blocks_per_plane(d.lines);
  n.set_pages_per_block(d.pages_per_block);
  return schema::resolved(n, "nand");
}

inline FtlConfig config(const SmallDrive& d) {
  schema::FtlParams f;
  f.set_spare_factor(d.spare_factor);
  f.set_gc_policy(d.policy);
  f.set_gc_foreground_free_ratio(d.foreground_ratio);
  f.set_static_wear_leveling_threshold(d.wear_threshold);
  f.set_endurance_pe_cycles(d.endurance);
  return FtlConfig::from_params(nand_params(d), schema::resolved(f, "ftl"));
}

}  // namespace ispsim::ftl::testing
