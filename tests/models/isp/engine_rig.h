// A small flash + attention engine for tests of accelerators (PageCompute
// implementations) inside the engine: MemLLM's default NAND timing (16 KiB
// pages, 2400 MT/s x 8 bit, tR = 5 us, 2 planes, cache read) on a few
// channels and dies, one layer, d = 128, FP16.
#pragma once

#include <cmath>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include <gtest/gtest.h>

#include "models/core/energy_ledger.h"
#include "models/core/server.h"
#include "models/isp/attention_engine.h"
#include "models/isp/isp_config.h"
#include "schema/nand.pb.h"

namespace ispsim::isp::testing {

// An accelerator built as the SSD builds one: the parameters resolved, then
// converted once into the config it shares with the engine.
template <class Accelerator>
Accelerator accelerator_from(const schema::IspParams& params = {}) {
  const schema::IspParams resolved = schema::resolved(params, "isp");
  return Accelerator(IspConfig::from_params(resolved, "isp"), resolved, "isp");
}

inline const sc_core::sc_time kTout = sc_core::sc_time::from_value(std::llround(16384 * 1e12 / 2.4e9));
inline const sc_core::sc_time kTr(5, sc_core::SC_US);

inline nand::FlashConfig small_flash(unsigned channels, unsigned dies) {
  schema::NandParams p;
  p.set_channels(channels);
  p.set_dies_per_channel(dies);
  p.set_blocks_per_plane(4);
  p.set_pages_per_block(8);
  return nand::FlashConfig::from_params(schema::resolved(p, "nand"));
}

inline trace::ModelShape one_layer(uint32_t heads, uint32_t kv_heads) {
  trace::ModelShape s;
  s.set_layers(1);
  s.set_heads(heads);
  s.set_kv_heads(kv_heads);
  s.set_head_dim(128);
  s.set_kv_bits(16);
  s.set_activation_bits(16);
  return s;
}

inline trace::BitVector mask_of(uint64_t length, const std::vector<uint64_t>& set) {
  trace::BitVector v;
  std::string bytes((length + 7) / 8, '\0');
  for (uint64_t i : set) bytes[i / 8] = char(uint8_t(bytes[i / 8]) | (1u << (i % 8)));
  v.set_bits(bytes);
  v.set_bit_length(length);
  return v;
}

// One op of `query_rows` rows (the last appended entries) over `context`
// precomputed tokens and `in_flash` appended entries.
inline AttentionWork op(const trace::ModelShape& s, uint64_t query_rows, uint64_t context, uint64_t in_flash,
                        const trace::BitVector* mask = nullptr) {
  AttentionWork w;
  w.query_rows = query_rows;
  w.shape = s;
  w.context_tokens = context;
  w.appended_tokens_in_flash = in_flash;
  w.hkvd_mask = mask;
  return w;
}

struct EngineRig {
  nand::FlashArray flash;
  KvPlacement placement;
  core::Server dram;
  core::Server bus;
  core::EnergyLedger ledger;
  AttentionEngine engine;

  EngineRig(const std::string& name, unsigned channels, unsigned dies, const trace::ModelShape& s, uint64_t context,
            uint64_t appended, std::unique_ptr<const PageCompute> compute,
            Organization organization = Organization::PER_CHANNEL, Reduction reduction = Reduction::GLOBAL_SRAM,
            const CoordinatorConfig& coordinator = CoordinatorConfig::defaults(), uint32_t appended_slots = 1)
      : flash((name + "_nand").c_str(), small_flash(channels, dies)),
        placement(flash.config(), s, context, appended, "kv placement", appended_slots),
        dram((name + "_dram").c_str(), 16.0, sc_core::SC_ZERO_TIME),
        bus((name + "_bus").c_str(), 8.0, sc_core::SC_ZERO_TIME),
        engine(name.c_str(), flash, placement, IspConfig::defaults(), std::move(compute), coordinator, organization, reduction,
               dram, bus, &ledger) {}

  // Runs `work` now; the simulated time when `done` was called (once).
  sc_core::sc_time run(const AttentionWork& work) {
    const sc_core::sc_time start = sc_core::sc_time_stamp();
    sc_core::sc_time finished;
    int calls = 0;
    engine.run(work, [&] {
      finished = sc_core::sc_time_stamp();
      ++calls;
    });
    sc_core::sc_start();
    EXPECT_EQ(calls, 1);
    EXPECT_FALSE(engine.busy());
    return finished - start;
  }
};

}  // namespace ispsim::isp::testing
