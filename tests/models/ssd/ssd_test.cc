// The SSD facade: exact completion times of host reads (NAND-bound and
// PCIe-bound), host writes and appends against closed forms written out here,
// FIFO ordering of flash jobs, byte conservation, drain, bad input, energy and
// the attention engine's DRAM/bus traffic per organisation.
// Every TEST runs in its own process (SystemC elaborates once per process).
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <sstream>
#include <string>
#include <systemc>

#include "common/error.h"
#include "models/core/energy_ledger.h"
#include "models/core/timeline.h"
#include "models/link/nvme.h"
#include "models/link/pcie_link.h"
#include "models/nand/nand_energy.h"
#include "models/ssd/ssd.h"
#include "tests/models/ssd/tiny_flash.h"

namespace ispsim::ssd {
namespace {

using sc_core::sc_time;
using sc_core::SC_NS;
using sc_core::SC_US;

using testing::kPage;
using testing::kTout;
using testing::kTprog;
using testing::kTr;
using testing::tiny_flash;

// 2 KV heads (tiny_flash.h): 1024 B per token.
trace::ModelShape tiny_shape() { return testing::tiny_shape(2); }
constexpr uint64_t kEntryBytes = 1024;  // K and V of one token, both heads


struct Rig {
  core::EnergyLedger ledger;
  link::PcieLink pcie;
  link::Nvme nvme;
  Ssd ssd;
  Rig(const schema::NandParams& nand, const schema::SsdParams& params = schema::resolved(schema::SsdParams(), "ssd"),
      const schema::LinkParams& link_params = schema::resolved(schema::LinkParams(), "link"), uint64_t context = 256,
      uint64_t appended = 128, const schema::FtlParams& ftl = schema::FtlParams(), uint32_t slots = 1,
      uint64_t store_pages = 0)
      : pcie("pcie", link::LinkConfig::from_params(schema::resolved(link_params, "link")), &ledger),
        nvme("nvme", pcie),
        ssd("ssd", schema::resolved(nand, "nand"), schema::resolved(params, "ssd"), schema::resolved(schema::IspParams(), "isp"), schema::resolved(schema::FlashCoordinatorParams(), "flash_coordinator"),
            KvSpace{tiny_shape(), context, appended, slots, store_pages}, nvme, &ledger, true,
            schema::resolved(schema::ModuleSelection(), "modules"), schema::resolved(ftl, "ftl")) {}
  const link::LinkConfig& link() const { return pcie.config(); }
  // Occupancy + latency of one internal bus / DRAM transfer on an idle server.
  sc_time bus_time(uint64_t bytes) { return ssd.bus().occupancy(bytes) + ssd.bus().latency(); }
  sc_time dram_time(uint64_t bytes) { return ssd.dram().occupancy(bytes) + ssd.dram().latency(); }
  // Doorbell + SQE of the commands for `bytes`, then the firmware of one command.
  sc_time command_time(uint64_t bytes) {
    return link().transfer_time(nvme.io_overhead_bytes_host_to_device(bytes)) + sc_time(1, SC_US);
  }
  // After the last data occupancy ends: the CQEs, then the host's completion.
  sc_time completion_tail(uint64_t bytes) {
    return link().occupancy(nvme.io_overhead_bytes_device_to_host(bytes)) + link().latency +
           link().interrupt_and_completion;
  }
};

// One channel, one die, no cache read: page k (1-based) is at the controller
// at t0 + k (tR + tOut); PCIe (about 7.2 GB/s) is idle when each page arrives.
TEST(SsdHostRead, NandBoundClosedForm) {
  Rig rig(tiny_flash(1, 1, 1, false));
  sc_time done_at;
  rig.ssd.host_read(0, trace::KV_REGION_PRECOMPUTED, 0, 64, [&] { done_at = sc_core::sc_time_stamp(); });
  sc_core::sc_start();
  const uint64_t useful = 64 * kEntryBytes;  // 2 tiles x 2 heads = 4 full pages
  const sc_time t0 = rig.command_time(useful);
  const sc_time last_arrival = t0 + (kTr + kTout) * 4.0;
  const sc_time expected = last_arrival + rig.bus_time(kPage) + rig.link().occupancy(kPage) +
                           rig.completion_tail(useful);
  EXPECT_EQ(done_at, expected);
  EXPECT_EQ(rig.ssd.host_read_pages(), 4u);
  EXPECT_EQ(rig.ssd.nand_bytes_read(), 4 * kPage);
  EXPECT_EQ(rig.ssd.kv_read_bytes(), useful);
  EXPECT_EQ(rig.pcie.bytes(link::Direction::DEVICE_TO_HOST, link::Purpose::KV_READ), useful);
  EXPECT_EQ(rig.ssd.bus_bytes(), 4 * kPage);
  EXPECT_EQ(rig.ssd.dram_bytes(), 0u);  // not staged in DRAM by default
  EXPECT_EQ(rig.ssd.nvme_commands(), 1u);
  EXPECT_EQ(rig.ssd.outstanding(), 0u);
}

// Eight dies on two channels feed a PCIe Gen3 x1 link (about 0.9 GB/s): after the
// first page the link never idles, so
//   done = first arrival + bus + N x occ(page) + CQE + latency + completion.
TEST(SsdHostRead, PcieBoundClosedForm) {
  schema::LinkParams slow;
  slow.set_pcie_generation(3);
  slow.set_lanes(1);
  Rig rig(tiny_flash(2, 4, 2, true), schema::resolved(schema::SsdParams(), "ssd"), slow);
  sc_time done_at;
  rig.ssd.host_read(1, trace::KV_REGION_PRECOMPUTED, 0, 256, [&] { done_at = sc_core::sc_time_stamp(); });
  sc_core::sc_start();
  const uint64_t useful = 256 * kEntryBytes;  // 8 tiles x 2 heads = 16 pages
  const uint64_t n = 16;
  const sc_time first_arrival = rig.command_time(useful) + kTr + kTout;
  const sc_time expected = first_arrival + rig.bus_time(kPage) + rig.link().occupancy(kPage) * double(n) +
                           rig.completion_tail(useful);
  EXPECT_EQ(done_at, expected);
  EXPECT_EQ(rig.nvme.io_command_count(useful), 2u);  // 256 KiB at MDTS 128 KiB
  EXPECT_EQ(rig.ssd.nvme_commands(), 2u);
  EXPECT_EQ(rig.pcie.bytes(link::Direction::HOST_TO_DEVICE, link::Purpose::NVME_COMMAND),
            2 * (link::Nvme::kDoorbellBytes + link::Nvme::kSqeBytes));
  EXPECT_EQ(rig.pcie.bytes(link::Direction::DEVICE_TO_HOST, link::Purpose::NVME_COMPLETION),
            2 * link::Nvme::kCqeBytes);
}

// A range that starts and ends inside tiles: whole pages from NAND, only the
// requested entries over PCIe.
TEST(SsdHostRead, BytesConservationOnPartialTiles) {
  Rig rig(tiny_flash(2, 2, 1, true));
  rig.ssd.host_read(0, trace::KV_REGION_PRECOMPUTED, 10, 75, nullptr);  // tiles 0, 1, 2
  rig.ssd.host_read(1, trace::KV_REGION_PRECOMPUTED, 31, 33, nullptr);  // tiles 0, 1
  sc_core::sc_start();
  const uint64_t pages = (3 + 2) * 2;
  EXPECT_EQ(rig.ssd.host_read_pages(), pages);
  EXPECT_EQ(rig.ssd.nand_pages_read(), pages);
  EXPECT_EQ(rig.ssd.nand_bytes_read(), pages * kPage);
  EXPECT_EQ(rig.ssd.kv_read_bytes(), (65 + 2) * kEntryBytes);
  EXPECT_EQ(rig.pcie.bytes(link::Direction::DEVICE_TO_HOST, link::Purpose::KV_READ), (65 + 2) * kEntryBytes);
  EXPECT_EQ(rig.ssd.jobs().history(), (std::vector<std::string>{"read", "read"}));
}

// Staged in DRAM: each page is written to DRAM whole and its useful bytes read
// back before PCIe; one page per arrival, so no DRAM queueing.
TEST(SsdHostRead, StagedInDramClosedFormAndBytes) {
  schema::SsdParams staged;
  staged.set_stage_host_reads_in_dram(true);
  Rig rig(tiny_flash(1, 1, 1, false), staged);
  sc_time done_at;
  rig.ssd.host_read(0, trace::KV_REGION_PRECOMPUTED, 16, 32, [&] { done_at = sc_core::sc_time_stamp(); });
  sc_core::sc_start();
  const uint64_t useful = 16 * kEntryBytes;  // 2 pages, 8 KB useful each
  const uint64_t per_page = useful / 2;
  const sc_time last_arrival = rig.command_time(useful) + (kTr + kTout) * 2.0;
  const sc_time expected = last_arrival + rig.bus_time(kPage) + rig.dram_time(kPage) +
                           rig.dram_time(per_page) + rig.link().occupancy(per_page) +
                           rig.completion_tail(useful);
  EXPECT_EQ(done_at, expected);
  EXPECT_EQ(rig.ssd.dram_write_bytes(), 2 * kPage);
  EXPECT_EQ(rig.ssd.dram_read_bytes(), useful);
  EXPECT_EQ(rig.ssd.dram_bytes(), 2 * kPage + useful);
}

// host_write of two full tiles: command, data over PCIe, bus, DRAM, then the
// program batch: one die programs its 4 pages one after another (tIn + tPROG each).
TEST(SsdHostWrite, ClosedFormAndBytes) {
  Rig rig(tiny_flash(1, 1, 1, false));
  sc_time done_at;
  const uint64_t bytes = 64 * kEntryBytes;
  rig.ssd.host_write(0, 0, 64, bytes, [&] { done_at = sc_core::sc_time_stamp(); });
  sc_core::sc_start();
  const sc_time buffered = rig.command_time(bytes) + rig.link().transfer_time(bytes) + rig.bus_time(bytes) +
                           rig.dram_time(bytes);
  EXPECT_EQ(done_at, buffered + (kTout + kTprog) * 4.0);
  EXPECT_EQ(rig.ssd.nand_pages_programmed(), 4u);
  EXPECT_EQ(rig.ssd.nand_bytes_programmed(), 4 * kPage);
  EXPECT_EQ(rig.ssd.kv_written_bytes(), bytes);
  EXPECT_EQ(rig.pcie.bytes(link::Direction::HOST_TO_DEVICE, link::Purpose::KV_WRITE), bytes);
  EXPECT_EQ(rig.ssd.dram_write_bytes(), bytes);
  EXPECT_EQ(rig.ssd.dram_read_bytes(), 4 * kPage);
  EXPECT_EQ(rig.ssd.bus_bytes(), bytes + 4 * kPage);
  EXPECT_EQ(rig.ssd.appended_entries(0), 64u);
}

// A document written to the store takes host_write's path for its bytes
// (commands, PCIe, bus, write buffer), then its pages are programmed: on one
// die the same time as a write-back of as many bytes and pages. The KV space
// is logical pages 0-47 (2 layers x (8 + 4) tiles x 2 heads), the store 48-57.
TEST(SsdStore, AWriteTakesTheHostWritePathAndATrimUnmapsIt) {
  Rig rig(tiny_flash(1, 1, 1, false), schema::resolved(schema::SsdParams(), "ssd"),
          schema::resolved(schema::LinkParams(), "link"), 256, 128, schema::FtlParams(), 1, 10);
  const uint64_t bytes = 64 * kEntryBytes, first = rig.ssd.placement().total_pages();
  ASSERT_EQ(first, 48u);
  sc_time done_at;
  rig.ssd.store_write(first + 3, 4, bytes, [&] { done_at = sc_core::sc_time_stamp(); });
  sc_core::sc_start();
  const sc_time buffered = rig.command_time(bytes) + rig.link().transfer_time(bytes) + rig.bus_time(bytes) +
                           rig.dram_time(bytes);
  EXPECT_EQ(done_at, buffered + (kTout + kTprog) * 4.0);
  EXPECT_EQ(rig.ssd.nand_pages_programmed(), 4u);
  EXPECT_EQ(rig.pcie.bytes(link::Direction::HOST_TO_DEVICE, link::Purpose::KV_WRITE), bytes);
  const ftl::Ftl& ftl = rig.ssd.translation().ftl();
  for (uint64_t lpn = first + 3; lpn < first + 7; ++lpn) EXPECT_TRUE(ftl.lookup(lpn).has_value()) << lpn;
  rig.ssd.store_trim(first + 3, 4);
  for (uint64_t lpn = first + 3; lpn < first + 7; ++lpn) EXPECT_FALSE(ftl.lookup(lpn).has_value()) << lpn;
  EXPECT_EQ(ftl.counters().trimmed_pages, 4u);
  EXPECT_THROW(rig.ssd.store_write(first + 8, 3, bytes, nullptr), BadInput);  // past the store
  EXPECT_THROW(rig.ssd.store_trim(first - 1, 2), BadInput);                   // in the KV space
}

// Masked write-back: fewer entries than the token range holds.
TEST(SsdHostWrite, MaskedEntriesAndBadInput) {
  Rig rig(tiny_flash(1, 1, 1, false));
  rig.ssd.host_write(1, 0, 256, 40 * kEntryBytes, nullptr);  // 40 HKVD tokens of [0, 256)
  EXPECT_THROW(rig.ssd.host_write(1, 0, 10, 11 * kEntryBytes, nullptr), BadInput);  // more than the range
  EXPECT_THROW(rig.ssd.host_write(1, 0, 10, 100, nullptr), BadInput);               // not whole entries
  EXPECT_THROW(rig.ssd.host_write(2, 0, 10, kEntryBytes, nullptr), BadInput);       // no layer 2
  EXPECT_THROW(rig.ssd.host_write(1, 0, 200, 89 * kEntryBytes, nullptr), BadInput);  // 40 + 89 > 128
  EXPECT_THROW(rig.ssd.host_read(0, trace::KV_REGION_PRECOMPUTED, 5, 5, nullptr), BadInput);
  EXPECT_THROW(rig.ssd.host_read(0, trace::KV_REGION_PRECOMPUTED, 0, 257, nullptr), BadInput);
  EXPECT_THROW(rig.ssd.append(0, 2, 3 * kEntryBytes, nullptr), BadInput);
  EXPECT_THROW(rig.ssd.host_read(1, trace::KV_REGION_APPENDED, 0, 41, nullptr), BadInput);  // 40 written
  rig.ssd.host_read(1, trace::KV_REGION_APPENDED, 0, 40, nullptr);
  sc_core::sc_start();
  EXPECT_EQ(rig.ssd.appended_entries(1), 40u);
  EXPECT_EQ(rig.ssd.nand_pages_programmed(), 2u);  // one full tile (32 entries) x 2 heads
  EXPECT_EQ(rig.ssd.host_read_pages(), 4u);         // entries 0..39: tiles 0 and 1 x 2 heads
  EXPECT_EQ(rig.ssd.kv_read_bytes(), 40 * kEntryBytes);
}

// append: 40 entries fill one tile (programmed, `done` after it); 8 wait in the
// write buffer until drain programs the partial tile; 24 more complete that tile,
// which is programmed again.
TEST(SsdAppend, FullTilesNowPartialTilesAtDrain) {
  Rig rig(tiny_flash(1, 1, 1, false));
  sc_time first_done, drained, second_done;
  rig.ssd.append(0, 40, 40 * kEntryBytes, [&] { first_done = sc_core::sc_time_stamp(); });
  sc_core::sc_start();
  const sc_time buffered = rig.bus_time(40 * kEntryBytes) + rig.dram_time(40 * kEntryBytes);
  EXPECT_EQ(first_done, buffered + (kTout + kTprog) * 2.0);
  EXPECT_EQ(rig.ssd.nand_pages_programmed(), 2u);

  const sc_time t1 = sc_core::sc_time_stamp();
  rig.ssd.drain([&] { drained = sc_core::sc_time_stamp(); });
  sc_core::sc_start();
  EXPECT_EQ(drained, t1 + (kTout + kTprog) * 2.0);  // the partial tile's 2 pages
  EXPECT_EQ(rig.ssd.nand_pages_programmed(), 4u);

  rig.ssd.append(0, 24, 24 * kEntryBytes, [&] { second_done = sc_core::sc_time_stamp(); });
  sc_core::sc_start();
  EXPECT_EQ(rig.ssd.nand_pages_programmed(), 6u);
  EXPECT_EQ(rig.ssd.appended_entries(0), 64u);
  EXPECT_EQ(rig.ssd.jobs().history(), (std::vector<std::string>{"program", "program", "program"}));
}

// Two slots of the appended region on 2 channels x 2 dies: the precomputed KV
// is logical pages 0-31 (2 layers x 8 tiles x 2 heads), slot 0 pages 32-47,
// slot 1 pages 48-63 (a stride of 16 pages, a whole number of 4-page cycles).
// Slot 1's appends are mapped there and read from there; releasing the slot
// TRIMs exactly those pages, and the next request's appends reuse them.
TEST(SsdAppendedSlots, AReleasedSlotIsTrimmedAndItsPagesReused) {
  Rig rig(tiny_flash(2, 2, 1, false), schema::resolved(schema::SsdParams(), "ssd"),
          schema::resolved(schema::LinkParams(), "link"), 256, 128, schema::FtlParams(), 2);
  const ftl::Ftl& ftl = rig.ssd.translation().ftl();
  const auto mapped = [&](uint64_t first, uint64_t count) {
    uint64_t n = 0;
    for (uint64_t lpn = first; lpn < first + count; ++lpn) n += ftl.lookup(lpn).has_value();
    return n;
  };
  const auto valid_pages = [&] {
    uint64_t n = 0;
    for (uint64_t block = 0; block < ftl.geometry().blocks(); ++block) n += ftl.valid_pages(block);
    return n;
  };
  ASSERT_EQ(rig.ssd.appended_base(1), 128u);
  bool done = false;
  rig.ssd.append(0, 64, 64 * kEntryBytes, [&] { done = true; }, 1);  // 2 full tiles x 2 heads
  sc_core::sc_start();
  ASSERT_TRUE(done);
  EXPECT_EQ(rig.ssd.appended_entries(0, 1), 64u);
  EXPECT_EQ(rig.ssd.appended_entries(0, 0), 0u);
  EXPECT_EQ(mapped(48, 4), 4u);
  EXPECT_EQ(mapped(32, 16), 0u);
  EXPECT_THROW(rig.ssd.host_read(0, trace::KV_REGION_APPENDED, 0, 64, nullptr, 0), BadInput);  // slot 0 is empty
  rig.ssd.host_read(0, trace::KV_REGION_APPENDED, 0, 64, nullptr, 1);
  sc_core::sc_start();
  EXPECT_EQ(rig.ssd.host_read_pages(), 4u);

  rig.ssd.release_slot(1);
  EXPECT_EQ(mapped(48, 16), 0u);
  EXPECT_EQ(ftl.counters().trimmed_pages, 4u);
  EXPECT_EQ(ftl.mapping().mapped_pages(), 32u);  // the precomputed KV only
  EXPECT_EQ(valid_pages(), 32u);
  EXPECT_EQ(rig.ssd.appended_entries(0, 1), 0u);

  rig.ssd.append(1, 32, 32 * kEntryBytes, nullptr, 1);  // the next request: layer 1, tile 0
  sc_core::sc_start();
  EXPECT_EQ(mapped(48 + 8, 2), 2u);  // layer 1 of slot 1: pages 56-57
  EXPECT_EQ(ftl.counters().host_pages, 32u + 4 + 2);
  EXPECT_EQ(ftl.mapping().mapped_pages(), 34u);
  EXPECT_EQ(valid_pages(), 34u);
}

// Garbage collection in time, on a drive of 8 lines of 4 pages (1 unit, 4
// pages per block) that keeps 4 lines free (gc_foreground_free_ratio 0.5):
// logical pages 0-3 hold the precomputed KV (line 0), 4-11 the appended tiles
// (layer 0 tiles 0-1: 4-5, 6-7; layer 1: 8-9, 10-11), each page's home in
// lines 1-2. Tile 0 of each layer is written twice, first its partial tile at
// drain (at home), then the full tile (at the frontier, line 7, physical
// 28-31); tile 1 of layer 0 is written once, at home, so line 1 keeps 2 valid
// pages (6-7); layer 1's partial tile 1 goes home once (10-11), and once more
// at the next drain, which opens line 6 and leaves 3 lines free: greedy GC
// reclaims line 1 (its valid pages 6-7 are read, programmed at 24-25, block 1
// erased), then the host pages go to 26-27. The drain takes the GC job, then
// the program batch:
//   2 (tR + tOut) + 2 (tOut + tPROG) + tBERS + 2 (tOut + tPROG).
// Energy of the GC: 2 reads, 2 programs, 4 pages over the channel and one
// erase of 3.3 V x 20 mA x 15 ms = 0.99 mJ.
TEST(SsdGc, AGcOfALineWithTwoValidPagesReadsProgramsAndErasesInTime) {
  schema::NandParams nand = tiny_flash(1, 1, 1, false);
  nand.set_pages_per_block(4);
  nand.set_blocks_per_plane(8);
  nand.set_program_suspend(false);
  schema::FtlParams ftl;
  ftl.set_spare_factor(0.625);  // 12 logical pages
  ftl.set_gc_foreground_free_ratio(0.5);
  Rig rig(nand, schema::resolved(schema::SsdParams(), "ssd"), schema::resolved(schema::LinkParams(), "link"), 32, 64,
          ftl);
  auto append_and_drain = [&](uint32_t layer) {
    rig.ssd.append(layer, 1, kEntryBytes, nullptr);
    rig.ssd.drain(nullptr);
    sc_core::sc_start();
  };
  for (uint32_t layer : {0, 1}) {
    append_and_drain(layer);
    rig.ssd.append(layer, 31, 31 * kEntryBytes, nullptr);
    sc_core::sc_start();
  }
  rig.ssd.append(0, 32, 32 * kEntryBytes, nullptr);
  sc_core::sc_start();
  append_and_drain(1);
  const ftl::Ftl& f = rig.ssd.translation().ftl();
  EXPECT_EQ(*f.lookup(6), 6u);
  EXPECT_EQ(*f.lookup(10), 10u);
  EXPECT_EQ(*f.lookup(9), 31u);
  EXPECT_EQ(rig.ssd.gc_block_erases(), 0u);
  rig.ssd.append(1, 1, kEntryBytes, nullptr);
  sc_core::sc_start();
  const sc_time t0 = sc_core::sc_time_stamp();
  sc_time drained;
  core::Timeline timeline;
  rig.ssd.set_timeline(&timeline);
  rig.ssd.drain([&] { drained = sc_core::sc_time_stamp(); });
  sc_core::sc_start();
  const sc_time t_bers(15000, SC_US);
  EXPECT_EQ(drained, t0 + (kTr + kTout) * 2.0 + (kTout + kTprog) * 2.0 + t_bers + (kTout + kTprog) * 2.0);
  // The GC job on the timeline: its reads, programs and erase, the erase tBERS long.
  ASSERT_EQ(timeline.size(), 3u);
  std::ostringstream json;
  timeline.write(json);
  EXPECT_NE(json.str().find(R"("name":"gc read","cat":"gc")"), std::string::npos);
  EXPECT_NE(json.str().find(R"("name":"gc erase","cat":"gc")"), std::string::npos);
  EXPECT_NE(json.str().find(R"("dur":15000.000000)"), std::string::npos);
  EXPECT_EQ(f.counters().gc_pages, 2u);
  EXPECT_EQ(f.counters().block_erases, 1u);
  EXPECT_EQ(*f.lookup(6), 24u);
  EXPECT_EQ(*f.lookup(10), 26u);
  EXPECT_EQ(rig.ssd.gc_block_erases(), 1u);
  const nand::NandEnergy energy = nand::NandEnergy::from_params(schema::resolved(nand, "nand"), rig.ssd.flash().config());
  const double expected = 3.3 * 20e-3 * 15e-3 + energy.read_joules(2) + energy.program_joules(2) +
                          energy.transfer_joules(4 * kPage);
  EXPECT_NEAR(rig.ssd.gc_joules(), expected, expected * 1e-12);
  EXPECT_EQ(rig.ssd.jobs().history().back(), "program");
}

// Background GC on a drive like the test above's, of 5 lines of 4 pages (1
// unit, no program suspend), that wants ceil(0.5 x 5) = 3 lines free: layer
// 0's tile 0 is written at home (logical 4-5, line 1) at a drain, then again
// in full at the frontier (line 4, physical 16-17); its tile 1 goes home
// (6-7). Line 1 then holds 2 valid pages, lines 2-3 are free. Background GC
// reclaims line 1 when the drive has been idle for gc_idle_us and more work is
// to come: page by page (one unit: chunks of one page), a read, then a
// program, of pages 6 and 7 to 18-19, then the erase of block 1.
struct BackgroundGcRig : Rig {
  static schema::NandParams nand() {
    schema::NandParams n = tiny_flash(1, 1, 1, false);
    n.set_pages_per_block(4);
    n.set_blocks_per_plane(5);
    n.set_program_suspend(false);
    return n;
  }
  static schema::FtlParams ftl(double idle_us) {
    schema::FtlParams f;
    f.set_spare_factor(0.4);  // 12 logical pages
    f.set_gc_background_free_ratio(0.5);
    f.set_gc_idle_us(idle_us);
    return f;
  }
  explicit BackgroundGcRig(double idle_us = 10000)
      : Rig(nand(), schema::resolved(schema::SsdParams(), "ssd"), schema::resolved(schema::LinkParams(), "link"), 32,
            64, ftl(idle_us)) {
    ssd.append(0, 1, kEntryBytes, nullptr);
    ssd.drain(nullptr);
    sc_core::sc_start();
    ssd.append(0, 31, 31 * kEntryBytes, nullptr);
    sc_core::sc_start();
    ssd.append(0, 32, 32 * kEntryBytes, nullptr);
    sc_core::sc_start();
  }
  const ftl::Ftl& ftl() const { return ssd.translation().ftl(); }
  // A partial append (no program): the drive is idle again when it is buffered.
  sc_time touch() {
    sc_time done;
    ssd.append(1, 1, kEntryBytes, [&done] { done = sc_core::sc_time_stamp(); });
    sc_core::sc_start(sc_time(1, SC_US));
    return done;
  }
  sc_core::sc_event work_to_come;  // keeps the simulation going past the GC
};

TEST(SsdBackgroundGc, AnIdleDriveReclaimsALinePageByPageAfterTheIdleTime) {
  BackgroundGcRig rig;
  ASSERT_EQ(*rig.ftl().lookup(4), 16u);
  ASSERT_EQ(*rig.ftl().lookup(6), 6u);
  ASSERT_EQ(rig.ftl().free_lines(), 2u);
  EXPECT_EQ(rig.ssd.gc_block_erases(), 0u);  // nothing was to come while the setup ran
  rig.work_to_come.notify(sc_time(1, sc_core::SC_SEC));
  rig.touch();
  sc_core::sc_start(sc_time(5, sc_core::SC_MS));
  const sc_time idle_from = rig.touch();  // a command within the idle time starts it again
  const sc_time t_bers(15000, SC_US);
  const sc_time end = idle_from + sc_time(10, sc_core::SC_MS) + (kTr + kTout) * 2.0 + (kTout + kTprog) * 2.0 + t_bers;
  sc_core::sc_start(end - sc_core::sc_time_stamp() - sc_time(1, SC_NS));
  EXPECT_EQ(rig.ssd.gc_block_erases(), 0u);
  sc_core::sc_start(sc_time(2, SC_NS));
  EXPECT_EQ(rig.ssd.gc_block_erases(), 1u);
  EXPECT_EQ(*rig.ftl().lookup(6), 18u);
  EXPECT_EQ(*rig.ftl().lookup(7), 19u);
  EXPECT_EQ(rig.ftl().free_lines(), 3u);
  EXPECT_EQ(rig.ssd.gc_background_lines(), 1u);  // 3 lines free: enough
  EXPECT_EQ(rig.ssd.gc_background_yields(), 0u);
}

// No work to come: the drive stays as it is and the run ends when its last command does.
TEST(SsdBackgroundGc, NothingRunsWhenTheRunHasNoWorkToCome) {
  BackgroundGcRig rig;
  rig.touch();
  EXPECT_FALSE(sc_core::sc_pending_activity());  // no idle timer holds the simulation open
  EXPECT_EQ(rig.ssd.gc_block_erases(), 0u);
  EXPECT_EQ(rig.ftl().free_lines(), 2u);
}

// A program arriving during the first chunk waits for that chunk only: GC
// yields the lane, the program batch runs, then GC copies page 7 and erases.
TEST(SsdBackgroundGc, GcYieldsToAProgramBetweenChunks) {
  BackgroundGcRig rig(0);
  rig.work_to_come.notify(sc_time(1, sc_core::SC_SEC));
  const sc_time gc_from = rig.touch();
  sc_core::sc_start(kTr);  // GC is sensing page 6
  sc_time appended;
  rig.ssd.append(1, 31, 31 * kEntryBytes, [&] { appended = sc_core::sc_time_stamp(); });  // layer 1's tile 0: 2 pages
  const sc_time chunk = kTr + kTout + kTout + kTprog;
  const sc_time gc_end = gc_from + chunk + (kTout + kTprog) * 2.0 + chunk + sc_time(15000, SC_US);
  sc_core::sc_start(gc_end - sc_core::sc_time_stamp() - sc_time(1, SC_NS));
  EXPECT_EQ(appended, gc_from + chunk + (kTout + kTprog) * 2.0);
  EXPECT_EQ(rig.ssd.gc_block_erases(), 0u);
  sc_core::sc_start(sc_time(2, SC_NS));
  EXPECT_EQ(rig.ssd.gc_block_erases(), 1u);
  EXPECT_EQ(rig.ssd.gc_background_yields(), 1u);
  EXPECT_EQ(*rig.ftl().lookup(7), 19u);
}

// An append that completes no tile is done when it is in the write buffer.
TEST(SsdAppend, PartialOnlyIsDoneWhenBuffered) {
  Rig rig(tiny_flash(1, 1, 1, false));
  sc_time done_at;
  rig.ssd.append(1, 1, kEntryBytes, [&] { done_at = sc_core::sc_time_stamp(); });
  sc_core::sc_start();
  EXPECT_EQ(done_at, rig.bus_time(kEntryBytes) + rig.dram_time(kEntryBytes));
  EXPECT_EQ(rig.ssd.nand_pages_programmed(), 0u);
  EXPECT_TRUE(rig.ssd.jobs().history().empty());
}

// Without program suspend (one FIFO, the old behaviour): a read queued behind
// a program batch waits for the whole batch.
TEST(SsdQueue, ReadWaitsForTheProgramBatchAhead) {
  schema::NandParams nand = tiny_flash(1, 1, 1, false);
  nand.set_program_suspend(false);
  Rig rig(nand);
  sc_time append_done, read_done;
  rig.ssd.append(0, 64, 64 * kEntryBytes, [&] { append_done = sc_core::sc_time_stamp(); });
  // The batch starts once the data is buffered (bus + DRAM, about 13.4 us); the
  // read comes later and its job is queued behind the batch.
  sc_core::sc_start(sc_time(20, SC_US));
  rig.ssd.host_read(0, trace::KV_REGION_PRECOMPUTED, 0, 32, [&] { read_done = sc_core::sc_time_stamp(); });
  sc_core::sc_start();
  const sc_time program_end =
      rig.bus_time(64 * kEntryBytes) + rig.dram_time(64 * kEntryBytes) + (kTout + kTprog) * 4.0;
  EXPECT_EQ(append_done, program_end);
  const uint64_t useful = 32 * kEntryBytes;
  const sc_time last_arrival = program_end + (kTr + kTout) * 2.0;
  EXPECT_EQ(read_done, last_arrival + rig.bus_time(kPage) + rig.link().occupancy(kPage) +
                           rig.completion_tail(useful));
  EXPECT_EQ(rig.ssd.jobs().history(), (std::vector<std::string>{"program", "read"}));
}

// With program suspend (the default): the read runs beside the program batch;
// the die suspends the program under way (tSUS = 100 us), the read's two pages
// are sensed and transferred, the program resumes with the tPROG it had left
// and the batch's other three pages follow.
TEST(SsdQueue, ReadSuspendsTheProgramBatchUnderWay) {
  Rig rig(tiny_flash(1, 1, 1, false));
  const sc_time tSus(100, SC_US);
  sc_time append_done, read_done;
  rig.ssd.append(0, 64, 64 * kEntryBytes, [&] { append_done = sc_core::sc_time_stamp(); });
  sc_core::sc_start(sc_time(20, SC_US));
  const uint64_t useful = 32 * kEntryBytes;
  rig.ssd.host_read(0, trace::KV_REGION_PRECOMPUTED, 0, 32, [&] { read_done = sc_core::sc_time_stamp(); });
  sc_core::sc_start();
  const sc_time batch_start = rig.bus_time(64 * kEntryBytes) + rig.dram_time(64 * kEntryBytes);
  const sc_time read_start = sc_time(20, SC_US) + rig.command_time(useful);  // page 1 is in tPROG then
  ASSERT_GT(read_start, batch_start + kTout);
  const sc_time last_arrival = read_start + tSus + (kTr + kTout) * 2.0;
  EXPECT_EQ(read_done, last_arrival + rig.bus_time(kPage) + rig.link().occupancy(kPage) +
                           rig.completion_tail(useful));
  // Page 1's tPROG was frozen at read_start and resumes after the read: the
  // batch ends tSUS + 2 (tR + tOut) later than it would have.
  EXPECT_EQ(append_done, batch_start + (kTout + kTprog) * 4.0 + tSus + (kTr + kTout) * 2.0);
  EXPECT_EQ(rig.ssd.flash().die(0, 0).suspends(), 1u);
  EXPECT_EQ(rig.ssd.nand_pages_programmed(), 4u);
  EXPECT_EQ(rig.ssd.jobs().history(), (std::vector<std::string>{"program", "read"}));
}

// drain waits for calls still in flight (a host write still on PCIe) and then
// flushes the partial tiles they leave.
TEST(SsdDrain, WaitsForCallsInFlightThenFlushes) {
  Rig rig(tiny_flash(1, 1, 1, false));
  sc_time write_done, drained;
  const uint64_t bytes = 40 * kEntryBytes;
  rig.ssd.host_write(0, 0, 40, bytes, [&] { write_done = sc_core::sc_time_stamp(); });
  rig.ssd.drain([&] { drained = sc_core::sc_time_stamp(); });
  sc_core::sc_start();
  const sc_time buffered = rig.command_time(bytes) + rig.link().transfer_time(bytes) + rig.bus_time(bytes) +
                           rig.dram_time(bytes);
  EXPECT_EQ(write_done, buffered + (kTout + kTprog) * 2.0);
  EXPECT_EQ(drained, write_done + (kTout + kTprog) * 2.0);
  EXPECT_EQ(rig.ssd.nand_pages_programmed(), 4u);
  EXPECT_EQ(rig.ssd.outstanding(), 0u);
}

TEST(SsdDrain, NothingToDoCompletesAtOnce) {
  Rig rig(tiny_flash(1, 1, 1, false));
  bool drained = false;
  rig.ssd.drain([&] { drained = true; });
  sc_core::sc_start();
  EXPECT_TRUE(drained);
  EXPECT_EQ(sc_core::sc_time_stamp(), sc_core::SC_ZERO_TIME);
}

// Energy: NAND reads and programs as NandEnergy says, bus/DRAM per byte,
// firmware per command; static power declared for controller, DRAM, dies.
TEST(SsdEnergy, RecordsMatchTheByteCounts) {
  schema::NandParams nand = tiny_flash(1, 1, 1, false);
  Rig rig(nand);
  rig.ssd.host_read(0, trace::KV_REGION_PRECOMPUTED, 0, 32, nullptr);
  rig.ssd.append(1, 32, 32 * kEntryBytes, nullptr);
  sc_core::sc_start();
  const nand::NandEnergy e = nand::NandEnergy::from_params(schema::resolved(nand, "nand"));
  const uint64_t duration = sc_core::sc_time_stamp().value();
  const core::EnergyLedger::Summary s = rig.ledger.summarize(duration, {});
  const double nand_j = e.read_joules(2) + e.program_joules(2) + e.transfer_joules(4 * kPage);
  EXPECT_NEAR(s.dynamic_j_by_component.at("ssd.nand"), nand_j, nand_j * 1e-12);
  const SsdConfig& c = rig.ssd.config();
  const double bus_j = double(2 * kPage + 32 * kEntryBytes + 2 * kPage) * c.bus_joules_per_byte;
  EXPECT_NEAR(s.dynamic_j_by_component.at("ssd.bus"), bus_j, bus_j * 1e-12);
  const double dram_j = double(32 * kEntryBytes + 2 * kPage) * c.dram_joules_per_byte;
  EXPECT_NEAR(s.dynamic_j_by_component.at("ssd.dram"), dram_j, dram_j * 1e-12);
  EXPECT_NEAR(s.dynamic_j_by_component.at("ssd.controller"), 1e-6 * c.controller_active_w, 1e-18);
  EXPECT_NEAR(s.static_j_by_component.at("ssd.controller"), c.controller_static_w * duration * 1e-12, 1e-15);
  EXPECT_NEAR(s.static_j_by_component.at("ssd.nand"), e.static_watts() * duration * 1e-12, 1e-15);
  for (const auto& [component, joules] : s.dynamic_j_by_component) EXPECT_GE(joules, 0) << component;
}

// Attention through the FIFO: the engine's NAND pages count as NAND reads; the
// DRAM and bus traffic of each organisation is what the engine's plan says
// (CENTRALIZED: every page over the bus into DRAM; PER_CHANNEL + GLOBAL_SRAM: none).
void attention_bytes(schema::SsdParams::Organization organization, schema::SsdParams::Reduction reduction) {
  schema::SsdParams params;
  params.set_organization(organization);
  params.set_reduction(reduction);
  Rig rig(tiny_flash(2, 2, 1, true), params);
  isp::AttentionWork work;
  work.layer = 1;
  work.query_rows = 1;
  work.shape = tiny_shape();
  work.context_tokens = 256;
  work.causal = true;
  work.appended_tokens_supplied = 1;
  const isp::AttentionPlan plan = rig.ssd.engine().plan(work);
  bool done = false;
  rig.ssd.attention(work, [&] { done = true; });
  rig.ssd.host_read(0, trace::KV_REGION_PRECOMPUTED, 0, 32, nullptr);
  sc_core::sc_start();
  EXPECT_TRUE(done);
  EXPECT_EQ(rig.ssd.jobs().history(), (std::vector<std::string>{"attention", "read"}));
  EXPECT_EQ(plan.pages_per_pass * plan.passes, 16u);  // 8 tiles x 2 heads
  EXPECT_EQ(rig.ssd.nand_pages_read(), 16u + 2u);
  EXPECT_EQ(rig.ssd.nand_bytes_read(), 18 * kPage);
  EXPECT_EQ(rig.ssd.engine().dram_bytes(), plan.dram_bytes);
  EXPECT_EQ(rig.ssd.dram_bytes(), plan.dram_bytes);  // the read is not staged
  EXPECT_EQ(rig.ssd.bus_bytes(), plan.bus_bytes + 2 * kPage);
  if (organization == schema::SsdParams::CENTRALIZED) {
    EXPECT_GE(plan.bus_bytes, 16 * kPage);
    EXPECT_GE(plan.dram_bytes, 2 * 16 * kPage);  // pages written to DRAM and read back
  } else if (reduction == schema::SsdParams::GLOBAL_SRAM) {
    EXPECT_EQ(plan.bus_bytes, 0u);
    EXPECT_EQ(plan.dram_bytes, 0u);
  } else {
    EXPECT_EQ(plan.bus_bytes, 0u);
    EXPECT_GT(plan.dram_bytes, 0u);  // partials (and Q) through DRAM
  }
}

TEST(SsdAttention, CentralizedMovesPagesThroughBusAndDram) {
  attention_bytes(schema::SsdParams::CENTRALIZED, schema::SsdParams::CONTROLLER_DRAM);
}
TEST(SsdAttention, PerChannelControllerDramMovesOnlyPartials) {
  attention_bytes(schema::SsdParams::PER_CHANNEL, schema::SsdParams::CONTROLLER_DRAM);
}
TEST(SsdAttention, PerChannelGlobalSramIsDramLess) {
  attention_bytes(schema::SsdParams::PER_CHANNEL, schema::SsdParams::GLOBAL_SRAM);
}

TEST(SsdAttention, BadWorkIsBadInputBeforeQueueing) {
  Rig rig(tiny_flash(1, 1, 1, false));
  isp::AttentionWork work;
  work.layer = 5;  // the model has 2 layers
  work.query_rows = 1;
  work.shape = tiny_shape();
  work.context_tokens = 256;
  work.appended_tokens_supplied = 1;
  EXPECT_THROW(rig.ssd.attention(work, nullptr), BadInput);
  EXPECT_EQ(rig.ssd.outstanding(), 0u);
}

// AiF's in-flash GEMV, closed form: 2 channels x 2 dies x 2 planes = 8 pages
// per wave. A 1024 x 512 FP16 weight (1 MiB = 64 pages) takes 8 waves of
// tR / speedup, after the input broadcast and before each channel's half of
// the output.
TEST(InFlashGemv, WavesOfAllDiesSensingAtOnce) {
  const nand::FlashConfig flash = nand::FlashConfig::from_params(schema::resolved(tiny_flash(2, 2, 2, true), "nand"));
  const nand::NandEnergy energy = nand::NandEnergy::from_params(schema::resolved(tiny_flash(2, 2, 2, true), "nand"));
  const InFlashGemv gemv(flash, energy, 4.0, 1.5);
  const uint64_t elements = 1024 * 512, bytes = elements * 2;
  const InFlashGemvCost c = gemv.cost(bytes, elements, 1, 1024 * 2, 512 * 2);
  EXPECT_EQ(c.pages, 64u);
  EXPECT_EQ(c.waves, 8u);
  EXPECT_EQ(c.macs, elements);
  EXPECT_EQ(c.time, flash.transfer_time(2048) + sc_time(8 * 1250, SC_NS) + flash.transfer_time(512));
  EXPECT_DOUBLE_EQ(c.nand_joules, energy.read_joules(64) + energy.transfer_joules(2048 * 2 + 1024));
  EXPECT_DOUBLE_EQ(c.pe_joules, double(elements) * 1.5e-12);
  // A partial wave costs a whole tR; with no speedup tR itself.
  const InFlashGemv plain(flash, energy, 1.0, 1.5);
  EXPECT_EQ(plain.cost(65 * kPage, 65 * kPage / 2, 1, 0, 0).time, sc_time(9 * 5, SC_US));
}

// The SSD runs it as one flash job of that length.
TEST(InFlashGemv, SsdHoldsTheFlashForTheClosedFormTime) {
  schema::SsdParams params;
  params.set_in_flash_read_speedup(2);
  Rig rig(tiny_flash(1, 1, 1, false), params);
  sc_time done;
  rig.ssd.gemv_in_flash(4 * kPage, 4 * kPage / 2, 1, 0, 0, [&] { done = sc_core::sc_time_stamp(); });
  sc_core::sc_start();
  EXPECT_EQ(done, sc_time(4 * 2.5, SC_US));
  EXPECT_EQ(rig.ssd.gemv_ops(), 1u);
  EXPECT_EQ(rig.ssd.jobs().history(), (std::vector<std::string>{"gemv"}));
}

}  // namespace
}  // namespace ispsim::ssd
