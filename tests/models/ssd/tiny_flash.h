// The small flash of the SSD's timing tests and the page times their closed
// forms are written in: 16 KB pages, tR 5 us, 2400 MT/s x 8 bit, tPROG 500 us,
// no command or status cycles.
#pragma once

#include <cmath>
#include <cstdint>
#include <systemc>

#include "models/nand/bus_protocol.h"
#include "traces/trace.pb.h"
#include "schema/resolve.h"

namespace ispsim::ssd::testing {

inline schema::NandParams tiny_flash(unsigned channels, unsigned dies, unsigned planes, bool cache_read) {
  schema::NandParams p;
  p.set_channels(channels);
  p.set_dies_per_channel(dies);
  p.set_planes_per_die(planes);
  p.set_cache_read(cache_read);
  p.set_t_read_us(5);
  p.set_t_prog_us(500);
  p.set_page_bytes(16384);
  p.set_channel_rate_mtps(2400);
  p.set_channel_width_bits(8);
  p.set_pages_per_block(64);
  p.set_blocks_per_plane(64);  // enough lines for the FTL's default spare factor
  return schema::resolved(nand::data_only_bus(p), "nand");
}

// 2 layers, `kv_heads` KV heads of dimension 128 at FP16: 512 B of K and V per
// token and head, so a 16 KB page holds T = 32 tokens of one head.
inline trace::ModelShape tiny_shape(uint32_t kv_heads) {
  trace::ModelShape s;
  s.set_family(trace::ARCHITECTURE_LLAMA);
  s.set_layers(2);
  s.set_hidden(512);
  s.set_heads(4);
  s.set_kv_heads(kv_heads);
  s.set_head_dim(128);
  s.set_ffn_dim(1024);
  s.set_vocab(1000);
  s.set_weight_bits(16);
  s.set_kv_bits(16);
  s.set_activation_bits(16);
  return s;
}

constexpr uint64_t kPage = 16384;
inline const sc_core::sc_time kTout = sc_core::sc_time::from_value(std::llround(kPage * 1e12 / 2.4e9));
inline const sc_core::sc_time kTr(5, sc_core::SC_US);
inline const sc_core::sc_time kTprog(500, sc_core::SC_US);

}  // namespace ispsim::ssd::testing
