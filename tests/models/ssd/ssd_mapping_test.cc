// The cached mapping (DFTL, models/ssd/ftl/mapping_residency.h) in the SSD's
// timing, on two drives side by side in one simulation: the whole table in
// controller DRAM, and a cache of one translation page that starts cold. The
// same calls, exact time differences: a miss reads its translation page on its
// die before the data, a hit costs one DRAM access of its entry.
// Every TEST runs in its own process (SystemC elaborates once per process).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <systemc>

#include "models/core/energy_ledger.h"
#include "models/core/stats.h"
#include "models/link/nvme.h"
#include "models/link/pcie_link.h"
#include "models/nand/nand_energy.h"
#include "models/ssd/ssd.h"
#include "tests/models/ssd/tiny_flash.h"

namespace ispsim::ssd {
namespace {

using sc_core::sc_time;
using sc_core::SC_US;

using testing::kPage;
using testing::kTout;
using testing::kTr;

// One channel, one die, one plane (tiny_flash.h): 4096 pages, 3809 logical.
schema::NandParams one_die() { return testing::tiny_flash(1, 1, 1, true); }

// 2 layers, one KV head of dimension 128 at FP16: 512 B per token, T = 32
// tokens per page, so a tile is one page.
trace::ModelShape one_kv_head() { return testing::tiny_shape(1); }
constexpr uint64_t kTokenBytes = 512;

// FULL: the whole table (3809 x 4 bytes) in the default DRAM. CACHED: one
// translation page, cold at the start: of 4096 entries (all 3809 logical
// pages), or of 1024 with 16-byte entries.
schema::FtlParams mapping(schema::FtlParams::Mapping m, uint32_t entry_bytes) {
  schema::FtlParams f;
  f.set_mapping(m);
  f.set_mapping_entry_bytes(entry_bytes);
  if (m == schema::FtlParams::CACHED) f.set_mapping_dram_bytes(kPage);
  return schema::resolved(f, "ftl");
}

struct Drive {
  core::EnergyLedger ledger;
  link::PcieLink pcie;
  link::Nvme nvme;
  Ssd ssd;
  Drive(const std::string& prefix, schema::FtlParams::Mapping m, uint32_t entry_bytes = 4, uint64_t store_pages = 0)
      : pcie((prefix + "_pcie").c_str(), link::LinkConfig::from_params(schema::resolved(schema::LinkParams(), "link")),
             &ledger),
        nvme((prefix + "_nvme").c_str(), pcie),
        ssd(prefix.c_str(), one_die(), schema::resolved(schema::SsdParams(), "ssd"),
            schema::resolved(schema::IspParams(), "isp"),
            schema::resolved(schema::FlashCoordinatorParams(), "flash_coordinator"),
            KvSpace{one_kv_head(), 256, 128, 1, store_pages}, nvme, &ledger, true,
            schema::resolved(schema::ModuleSelection(), "modules"), mapping(m, entry_bytes)) {}
  // A statistic of this drive; absent (nullptr) when not registered.
  const stats::Entry* stat(const std::string& name) const {
    return stats::Registry::global().find(std::string(ssd.name()) + "." + name);
  }
  uint64_t count(const std::string& name) const { return stat(name)->read_integer(); }
  sc_time read_one_page() {
    sc_time done;
    const sc_time start = sc_core::sc_time_stamp();
    ssd.host_read(0, trace::KV_REGION_PRECOMPUTED, 0, 32, [&done] { done = sc_core::sc_time_stamp(); });
    sc_core::sc_start();
    return done - start;
  }
};

// A read of one page: the whole table's closed form (SsdHostRead's), and on the
// cold cache exactly one page read (tR + data-out) longer, the translation
// page's; its energy is one page sensed and transferred more. A second read
// hits: one DRAM access of the 4-byte entry longer than the whole table's.
TEST(SsdMapping, AColdReadTakesTheTranslationReadThenTheDataReadAndAHitOneDramAccess) {
  Drive full("full", schema::FtlParams::FULL), cached("cached", schema::FtlParams::CACHED);
  const double full_nand_j_before = full.stat("nand_energy")->read();
  const double cached_nand_j_before = cached.stat("nand_energy")->read();
  const sc_time full_time = full.read_one_page();
  const sc_time cached_time = cached.read_one_page();
  const uint64_t useful = 32 * kTokenBytes;
  const link::LinkConfig& link = full.pcie.config();
  const sc_time command = link.transfer_time(full.nvme.io_overhead_bytes_host_to_device(useful)) + sc_time(1, SC_US);
  const sc_time tail = link.occupancy(full.nvme.io_overhead_bytes_device_to_host(useful)) + link.latency +
                       link.interrupt_and_completion;
  const sc_time bus = full.ssd.bus().occupancy(kPage) + full.ssd.bus().latency();
  EXPECT_EQ(full_time, command + kTr + kTout + bus + link.occupancy(useful) + tail);
  EXPECT_EQ(cached_time, full_time + kTr + kTout);
  EXPECT_EQ(cached.count("ftl_translation_pages_read"), 1u);
  EXPECT_EQ(cached.count("ftl_mapping_cache_misses"), 1u);
  EXPECT_EQ(cached.count("ftl_mapping_cache_hits"), 0u);
  const nand::NandEnergy energy = nand::NandEnergy::from_params(one_die(), cached.ssd.flash().config());
  EXPECT_NEAR(cached.stat("nand_energy")->read() - cached_nand_j_before,
              full.stat("nand_energy")->read() - full_nand_j_before + energy.read_joules(1) +
                  energy.transfer_joules(kPage),
              1e-15);

  const sc_time full_again = full.read_one_page();
  const sc_time cached_again = cached.read_one_page();
  const sc_time entry_access = cached.ssd.dram().occupancy(4) + cached.ssd.dram().latency();
  EXPECT_EQ(full_again, full_time);
  EXPECT_EQ(cached_again, full_again + entry_access);
  EXPECT_EQ(cached.count("ftl_mapping_cache_hits"), 1u);
  EXPECT_EQ(cached.count("ftl_translation_pages_read"), 1u);
  EXPECT_DOUBLE_EQ(cached.stat("ftl_mapping_cache_hit_rate")->read(), 0.5);
  // The whole table registers none of the cache's statistics (its outputs are unchanged).
  EXPECT_EQ(full.stat("ftl_mapping_cache_hits"), nullptr);
  EXPECT_EQ(full.stat("ftl_translation_pages_read"), nullptr);
}

// An append that completes a tile updates the mapping: on the cold cache its
// translation page is read before the program, one page read later.
TEST(SsdMapping, AnAppendReadsItsTranslationPageBeforeItsProgram) {
  Drive full("full", schema::FtlParams::FULL), cached("cached", schema::FtlParams::CACHED);
  sc_time full_done, cached_done;
  full.ssd.append(0, 32, 32 * kTokenBytes, [&] { full_done = sc_core::sc_time_stamp(); });
  cached.ssd.append(0, 32, 32 * kTokenBytes, [&] { cached_done = sc_core::sc_time_stamp(); });
  sc_core::sc_start();
  EXPECT_EQ(cached_done, full_done + kTr + kTout);
  EXPECT_EQ(cached.count("ftl_translation_pages_read"), 1u);
  EXPECT_EQ(cached.count("ftl_mapping_cache_misses"), 1u);
  EXPECT_EQ(cached.count("ftl_translation_pages_programmed"), 0u);  // one translation page: never evicted
  EXPECT_EQ(cached.ssd.nand_pages_programmed(), full.ssd.nand_pages_programmed());
}

// 16-byte entries: 1024 per translation page. A store write at logical page
// 1100 dirties translation page 1; a read of page 0 then evicts it: one
// translation page programmed (through the appender, beside the data page).
TEST(SsdMapping, ADirtyTranslationPageIsProgrammedWhenEvicted) {
  Drive cached("cached", schema::FtlParams::CACHED, 16, 2048);
  cached.ssd.store_write(1100, 1, kPage, nullptr);
  sc_core::sc_start();
  EXPECT_EQ(cached.count("ftl_translation_pages_read"), 1u);
  EXPECT_EQ(cached.count("ftl_translation_pages_programmed"), 0u);
  cached.read_one_page();
  EXPECT_EQ(cached.count("ftl_translation_pages_read"), 2u);
  EXPECT_EQ(cached.count("ftl_translation_pages_programmed"), 1u);
  EXPECT_EQ(cached.count("appender.pages_programmed"), 2u);
}

// An attention op over the 8 precomputed pages of layer 0 (one translation
// page): one miss and 7 hits, looked up before the op starts, so it ends one
// DRAM access of 7 entries and one page read after the whole table's.
TEST(SsdMapping, AnAttentionOpLooksUpItsPagesBeforeItStarts) {
  Drive full("full", schema::FtlParams::FULL), cached("cached", schema::FtlParams::CACHED);
  isp::AttentionWork work;
  work.layer = 0;
  work.query_rows = 1;
  work.shape = one_kv_head();
  work.context_tokens = 256;
  work.appended_tokens_supplied = 1;
  sc_time full_done, cached_done;
  full.ssd.attention(work, [&] { full_done = sc_core::sc_time_stamp(); });
  cached.ssd.attention(work, [&] { cached_done = sc_core::sc_time_stamp(); });
  sc_core::sc_start();
  EXPECT_EQ(cached.count("ftl_mapping_cache_misses"), 1u);
  EXPECT_EQ(cached.count("ftl_mapping_cache_hits"), 7u);
  const sc_time entries = cached.ssd.dram().occupancy(7 * 4) + cached.ssd.dram().latency();
  EXPECT_EQ(cached_done, full_done + entries + kTr + kTout);
}

}  // namespace
}  // namespace ispsim::ssd
