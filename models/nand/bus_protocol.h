// Flash parameters whose bus carries the data alone: every command, address
// and status cycle and turnaround time of the bus protocol (schema/nand.proto,
// models/nand/channel.h) set to 0, as the channel was before that protocol was
// modelled (ispsim_bench_nand's data-only figures; closed-form tests about
// something else than the bus).
#pragma once

#include "schema/nand.pb.h"

namespace ispsim::nand {

inline schema::NandParams data_only_bus(schema::NandParams p) {
  p.set_t_cmd_cycle_ns(0);
  p.set_t_wb_ns(0);
  p.set_t_whr_ns(0);
  p.set_t_rhw_ns(0);
  p.set_t_adl_ns(0);
  p.set_t_ccs_ns(0);
  return p;
}

}  // namespace ispsim::nand
