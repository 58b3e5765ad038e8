// Resolved parameters of the NAND flash and of a page stream, as the SystemC
// modules use them: schema defaults applied, ranges checked, times as sc_time.
#pragma once

#include <cstdint>
#include <string>
#include <systemc>

#include "schema/nand.pb.h"
#include "schema/nand_stream.pb.h"
#include "schema/resolve.h"

namespace ispsim::nand {

struct FlashConfig {
  unsigned channels = 0;
  unsigned dies_per_channel = 0;
  unsigned planes_per_die = 0;
  unsigned blocks_per_plane = 0;
  unsigned pages_per_block = 0;
  uint32_t page_bytes = 0;
  bool cache_read = false;
  double channel_bytes_per_second = 0;  // channel_rate_mtps * 1e6 * channel_width_bits / 8
  sc_core::sc_time t_read;              // tR
  sc_core::sc_time t_prog;              // tPROG
  sc_core::sc_time t_page_transfer;     // tOut = tIn = transfer_time(page_bytes)
  bool program_suspend = false;         // a read may suspend a program at its die
  sc_core::sc_time t_suspend;           // program suspend latency
  sc_core::sc_time t_resume;            // program resume overhead
  // Bus time around the data of each operation (ONFI sequences, channel.h):
  sc_core::sc_time t_read_command;    // 00h, column + row address, 30h; tWB (one per page of a group)
  sc_core::sc_time t_status_poll;     // 70h, tWHR, status byte, tRHW (one per sense, program, erase)
  sc_core::sc_time t_data_out_mode;   // 00h after the status poll: the sense's first page follows
  sc_core::sc_time t_column_select;   // 06h, column + row address, E0h; tCCS: the other planes' pages
  sc_core::sc_time t_program_command; // 80h, column + row address, tADL before the data; 10h, tWB after it
  sc_core::sc_time t_erase_command;   // 60h, row address, D0h; tWB
  sc_core::sc_time t_rhw;             // after a page's data-out, before the next command

  // `params` resolved (schema/resolve.h); unit conversions only. An unresolved
  // message is a programming error (std::logic_error naming `where`).
  static FlashConfig from_params(const schema::NandParams& params,
                                 const std::string& where = "nand");

  // Time to move `bytes` over one channel, rounded to the nearest picosecond
  // (SystemC's default resolution): bytes / channel_bytes_per_second.
  sc_core::sc_time transfer_time(uint64_t bytes) const;

  // Bus time of one page's data-out, everything of its read included: the
  // sense's first page carries its status poll and the 00h that returns the
  // die to data output, each other page of a multi-plane sense a change of
  // plane and column (06h-E0h). And of one data-in (program command, data,
  // status poll after tPROG) or erase command (command, status poll).
  uint64_t data_out_ps(bool first_of_sense) const {
    const uint64_t select = first_of_sense ? t_status_poll.value() + t_data_out_mode.value() : t_column_select.value();
    return t_read_command.value() + select + t_page_transfer.value() + t_rhw.value();
  }
  // Of `pages` data-outs read by `senses` senses.
  uint64_t data_outs_ps(uint64_t pages, uint64_t senses) const {
    return senses * data_out_ps(true) + (pages - senses) * data_out_ps(false);
  }
  uint64_t data_in_ps() const {
    return t_program_command.value() + t_page_transfer.value() + t_status_poll.value();
  }
  uint64_t erase_command_ps() const { return t_erase_command.value() + t_status_poll.value(); }

  uint64_t dies() const { return uint64_t(channels) * dies_per_channel; }
  uint64_t pages_per_die() const {
    return uint64_t(planes_per_die) * blocks_per_plane * pages_per_block;
  }
  uint64_t total_pages() const { return dies() * pages_per_die(); }
};

enum class ReadMode { kSequential, kPipelined };

struct StreamConfig {
  ReadMode mode = ReadMode::kPipelined;
  sc_core::sc_time consume_per_page;  // consumer time for one page
  unsigned buffers_per_channel = 0;   // scratchpad page buffers per channel

  static StreamConfig from_params(const schema::NandStreamParams& params,
                                  const std::string& where = "stream");
};

const char* to_string(ReadMode mode);

}  // namespace ispsim::nand
