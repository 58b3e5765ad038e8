#include "models/nand/flash_config.h"

#include <cmath>

#include "common/error.h"
#include "schema/resolve.h"

namespace ispsim::nand {

namespace {

// Rounds to the nearest picosecond so that a test can write the same formula.
sc_core::sc_time picoseconds(double ps) {
  return sc_core::sc_time::from_value(static_cast<sc_dt::uint64>(std::llround(ps)));
}

// The ONFI sequences around the data (flash_config.h): commands and addresses
// take one cycle each at t_cmd_cycle_ns, the status byte one more.
void set_bus_protocol(const schema::NandParams& p, FlashConfig& c) {
  const double cycle = p.t_cmd_cycle_ns() * 1e3;
  const double address = cycle * (p.column_address_cycles() + p.row_address_cycles());
  const double row = cycle * p.row_address_cycles();
  const double t_wb = p.t_wb_ns() * 1e3, t_rhw = p.t_rhw_ns() * 1e3;
  c.t_read_command = picoseconds(2 * cycle + address + t_wb);
  c.t_status_poll = picoseconds(2 * cycle + p.t_whr_ns() * 1e3 + t_rhw);
  c.t_data_out_mode = picoseconds(cycle);
  c.t_column_select = picoseconds(2 * cycle + address + p.t_ccs_ns() * 1e3);
  c.t_program_command = picoseconds(2 * cycle + address + p.t_adl_ns() * 1e3 + t_wb);
  c.t_erase_command = picoseconds(2 * cycle + row + t_wb);
  c.t_rhw = picoseconds(t_rhw);
}

}  // namespace

FlashConfig FlashConfig::from_params(const schema::NandParams& params, const std::string& where) {
  schema::require_resolved(params, where);
  const schema::NandParams& p = params;
  FlashConfig c;
  c.channels = p.channels();
  c.dies_per_channel = p.dies_per_channel();
  c.planes_per_die = p.planes_per_die();
  c.blocks_per_plane = p.blocks_per_plane();
  c.pages_per_block = p.pages_per_block();
  c.page_bytes = p.page_bytes();
  c.cache_read = p.cache_read();
  c.channel_bytes_per_second = p.channel_rate_mtps() * 1e6 * (p.channel_width_bits() / 8);
  c.t_read = picoseconds(p.t_read_us() * 1e6);
  c.t_prog = picoseconds(p.t_prog_us() * 1e6);
  c.t_page_transfer = c.transfer_time(c.page_bytes);
  c.program_suspend = p.program_suspend();
  c.t_suspend = picoseconds(p.t_suspend_us() * 1e6);
  c.t_resume = picoseconds(p.t_resume_us() * 1e6);
  set_bus_protocol(p, c);
  return c;
}

sc_core::sc_time FlashConfig::transfer_time(uint64_t bytes) const {
  return picoseconds(double(bytes) * 1e12 / channel_bytes_per_second);
}

StreamConfig StreamConfig::from_params(const schema::NandStreamParams& params,
                                       const std::string& where) {
  schema::require_resolved(params, where);
  const schema::NandStreamParams& p = params;
  StreamConfig s;
  s.mode = p.read_mode() == schema::NandStreamParams::SEQUENTIAL ? ReadMode::kSequential
                                                                  : ReadMode::kPipelined;
  s.consume_per_page = picoseconds(p.consumer_ns_per_page() * 1e3);
  s.buffers_per_channel = p.scratchpad_buffers_per_channel();
  return s;
}

const char* to_string(ReadMode mode) {
  return mode == ReadMode::kSequential ? "SEQUENTIAL" : "PIPELINED";
}

}  // namespace ispsim::nand
