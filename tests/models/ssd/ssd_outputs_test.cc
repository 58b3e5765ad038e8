// The SSD on the default (MemLLM) flash: the host-read bandwidth (PCIe-bound,
// exact closed form), the attention pass of each organisation side by side
// (figures printed for the README), statistics and waveforms.
// Every TEST runs in its own process (SystemC elaborates once per process).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <systemc>

#include "models/core/energy_ledger.h"
#include "models/core/stats.h"
#include "models/link/nvme.h"
#include "models/link/pcie_link.h"
#include "models/ssd/ssd.h"
#include "tests/support/vcd_check.h"
#include "tests/models/nand/bus_times.h"

namespace ispsim::ssd {
namespace {

using sc_core::sc_time;
using sc_core::SC_US;

// Llama-3.1-8B's attention shape (32 layers, 32 query heads, 8 KV heads of 128,
// FP16): 16 KB pages hold 32 tokens of one head.
trace::ModelShape llama8b() {
  trace::ModelShape s;
  s.set_family(trace::ARCHITECTURE_LLAMA);
  s.set_layers(32);
  s.set_hidden(4096);
  s.set_heads(32);
  s.set_kv_heads(8);
  s.set_head_dim(128);
  s.set_ffn_dim(14336);
  s.set_vocab(128256);
  s.set_weight_bits(16);
  s.set_kv_bits(16);
  s.set_activation_bits(16);
  return s;
}
constexpr uint64_t kContext = 8192;
constexpr uint64_t kPage = 16384;

// One SSD with its own link, under a name prefix (several can run side by side).
struct Drive {
  link::PcieLink pcie;
  link::Nvme nvme;
  Ssd ssd;
  Drive(const std::string& prefix, const schema::SsdParams& params, core::EnergyLedger* ledger)
      : pcie((prefix + "_pcie").c_str(), link::LinkConfig::from_params(schema::resolved(schema::LinkParams(), "link")), ledger),
        nvme((prefix + "_nvme").c_str(), pcie),
        ssd(prefix.c_str(), schema::resolved(schema::NandParams(), "nand"), schema::resolved(params, "ssd"), schema::resolved(schema::IspParams(), "isp"), schema::resolved(schema::FlashCoordinatorParams(), "flash_coordinator"),
            KvSpace{llama8b(), kContext, 1024}, nvme, ledger) {}
};

// One layer's precomputed KV (8192 tokens x 8 heads = 2048 pages, 32 MiB) over
// PCIe Gen4 x4: the flash delivers 17.3 GB/s, the link 7.2 GB/s, so after the
// first page (its sense's first: tOut and its read's command and status cycles) the link never idles:
//   done = t_cmd + tR + tPage1 + bus(page) + 2048 occ(page) + occ(CQEs) + L + completion.
TEST(SsdDefaults, HostReadOfOneLayerIsPcieBound) {
  Drive d("ssd", schema::resolved(schema::SsdParams(), "ssd"), nullptr);
  sc_time done_at;
  d.ssd.host_read(3, trace::KV_REGION_PRECOMPUTED, 0, kContext, [&] { done_at = sc_core::sc_time_stamp(); });
  sc_core::sc_start();
  const uint64_t bytes = kContext * 8 * 512;
  const link::LinkConfig& link = d.pcie.config();
  const nand::FlashConfig& flash = d.ssd.flash().config();
  const sc_time t_cmd = link.transfer_time(d.nvme.io_overhead_bytes_host_to_device(bytes)) + sc_time(1, SC_US);
  const sc_time t_page1 = flash.t_page_transfer + nand::testing::kFirstPageExtra;
  const sc_time expected = t_cmd + flash.t_read + t_page1 + d.ssd.bus().occupancy(kPage) +
                           d.ssd.bus().latency() + link.occupancy(kPage) * 2048.0 +
                           link.occupancy(d.nvme.io_overhead_bytes_device_to_host(bytes)) + link.latency +
                           link.interrupt_and_completion;
  EXPECT_EQ(done_at, expected);
  EXPECT_EQ(d.ssd.nand_bytes_read(), 2048 * kPage);
  EXPECT_EQ(d.pcie.bytes(link::Direction::DEVICE_TO_HOST, link::Purpose::KV_READ), bytes);
  std::printf("[figure] host_read of 32 MiB (one layer, C=8192, Llama-3.1-8B KV) on the default SSD: "
              "%.3f us, %.3f GB/s (PCIe Gen4 x4 payload rate %.3f GB/s)\n",
              done_at.to_seconds() * 1e6, double(bytes) / done_at.to_seconds() / 1e9,
              link.effective_bytes_per_ns());
}

// One decode attention (1 row) over C = 8192 precomputed tokens of one layer,
// on the four organisations of the ablation ladder, side by side.
TEST(SsdDefaults, DecodeAttentionPerOrganisation) {
  struct Variant {
    const char* name;
    schema::SsdParams::Organization organization;
    schema::SsdParams::Reduction reduction;
  };
  const Variant variants[] = {
      {"base", schema::SsdParams::CENTRALIZED, schema::SsdParams::CONTROLLER_DRAM},
      {"perch", schema::SsdParams::PER_CHANNEL, schema::SsdParams::CONTROLLER_DRAM},
      {"memllm", schema::SsdParams::PER_CHANNEL, schema::SsdParams::GLOBAL_SRAM},
  };
  std::map<std::string, std::unique_ptr<Drive>> drives;
  std::map<std::string, sc_time> done_at;
  isp::AttentionWork work;
  work.layer = 1;
  work.query_rows = 1;
  work.shape = llama8b();
  work.context_tokens = kContext;
  work.appended_tokens_supplied = 1;
  work.causal = true;
  for (const Variant& v : variants) {
    schema::SsdParams p;
    p.set_organization(v.organization);
    p.set_reduction(v.reduction);
    auto drive = std::make_unique<Drive>(v.name, p, nullptr);
    drive->ssd.attention(work, [&done_at, name = std::string(v.name)] { done_at[name] = sc_core::sc_time_stamp(); });
    drives[v.name] = std::move(drive);
  }
  sc_core::sc_start();
  for (const Variant& v : variants) {
    Ssd& ssd = drives[v.name]->ssd;
    ASSERT_TRUE(done_at.count(v.name)) << v.name;
    EXPECT_EQ(ssd.nand_bytes_read(), 2048 * kPage) << v.name;
    std::printf("[figure] decode attention, C=8192, one layer, %-6s (%s, %s): %.3f us, NAND %.1f MiB, "
                "controller DRAM %.3f MiB, internal bus %.3f MiB\n",
                v.name, isp::to_string(ssd.config().organization), isp::to_string(ssd.config().reduction),
                done_at[v.name].to_seconds() * 1e6, ssd.nand_bytes_read() / 1048576.0,
                ssd.dram_bytes() / 1048576.0, ssd.bus_bytes() / 1048576.0);
  }
  // The centralised engine is bound by the 8 GB/s bus; per channel by the 19.2 GB/s flash.
  EXPECT_GT(done_at["base"], done_at["memllm"]);
  EXPECT_GE(drives["base"]->ssd.bus_bytes(), 2048 * kPage);
  EXPECT_EQ(drives["memllm"]->ssd.dram_bytes(), 0u);
  EXPECT_EQ(drives["memllm"]->ssd.bus_bytes(), 0u);
  EXPECT_GT(drives["perch"]->ssd.dram_bytes(), 0u);
}

// Energy is spread over the time it is spent: a 256-command read (32 MiB) draws
// its firmware energy (256 x 1 us x 1 W) over 256 us, not in one instant, so the
// peak (1 us windows) of the SSD + link stays at a few watts.
TEST(SsdOutputs, PeakPowerHasNoInstantBursts) {
  core::EnergyLedger ledger;
  Drive d("ssd", schema::resolved(schema::SsdParams(), "ssd"), &ledger);
  d.ssd.host_read(3, trace::KV_REGION_PRECOMPUTED, 0, kContext, nullptr);
  d.ssd.append(3, 512, 512 * 8 * 512, nullptr);
  sc_core::sc_start();
  const core::EnergyLedger::Summary s = ledger.summarize(sc_core::sc_time_stamp().value(), {});
  EXPECT_EQ(d.ssd.nvme_commands(), 256u);
  EXPECT_GT(s.dynamic_j_by_component.at("ssd.controller"), 255e-6);
  EXPECT_LT(s.peak_w, 10.0) << "peak window at " << s.peak_window_start_ps << " ps";
  EXPECT_GT(s.average_w, 0.0);
}

TEST(SsdOutputs, StatisticsHaveTheCountsOfTheRun) {
  Drive d("ssd", schema::resolved(schema::SsdParams(), "ssd"), nullptr);
  d.ssd.host_read(0, trace::KV_REGION_PRECOMPUTED, 0, 64, nullptr);   // 2 tiles x 8 heads
  d.ssd.append(0, 40, 40 * 8 * 512, nullptr);                          // one tile programmed
  d.ssd.drain(nullptr);                                                // the partial tile too
  sc_core::sc_start();
  std::map<std::string, double> v;
  std::map<std::string, std::string> unit;
  for (const stats::Entry* e : stats::Registry::global().sorted()) {
    v[e->name] = e->read();
    unit[e->name] = e->unit;
  }
  EXPECT_EQ(v.at("ssd.host_reads"), 1);
  EXPECT_EQ(v.at("ssd.appends"), 1);
  EXPECT_EQ(v.at("ssd.nvme_commands"), 2);  // 256 KiB at MDTS 128 KiB
  EXPECT_EQ(v.at("ssd.nand_pages_read"), 16);
  EXPECT_EQ(v.at("ssd.nand_bytes_read"), 16 * kPage);
  EXPECT_EQ(v.at("ssd.nand_pages_programmed"), 16);
  EXPECT_EQ(v.at("ssd.nand_bytes_programmed"), 16 * kPage);
  EXPECT_EQ(v.at("ssd.program_jobs"), 2);
  EXPECT_EQ(v.at("ssd.kv_read_bytes"), 64 * 8 * 512);
  EXPECT_EQ(v.at("ssd.kv_written_bytes"), 40 * 8 * 512);
  EXPECT_EQ(v.at("ssd.jobs.jobs"), 3);
  EXPECT_EQ(v.at("ssd.bus.bytes"), 16 * kPage + 40 * 8 * 512 + 16 * kPage);
  EXPECT_EQ(v.at("ssd.dram.bytes"), 40 * 8 * 512 + 16 * kPage);
  EXPECT_EQ(unit.at("ssd.nand_bytes_read"), "bytes");
  EXPECT_EQ(unit.at("ssd.nand_energy"), "J");
  EXPECT_GT(v.at("ssd.nand_energy"), 0);
}

TEST(SsdOutputs, WaveformIsValidVcd) {
  Drive d("ssd", schema::resolved(schema::SsdParams(), "ssd"), nullptr);
  const std::string path = ::testing::TempDir() + "ssd.vcd";
  vcd::Writer writer(vcd::Options{path, {}, 0, UINT64_MAX, {}});
  d.ssd.trace(writer);
  d.ssd.host_read(0, trace::KV_REGION_PRECOMPUTED, 0, 256, nullptr);
  d.ssd.append(0, 32, 32 * 8 * 512, nullptr);
  sc_core::sc_start();
  writer.close();
  ispsim::testing::expect_vcd_valid(path);
  const auto content = ispsim::testing::parse_vcd_file(path);
  EXPECT_EQ(content.widths.count("ssd.flash.ch0.die0.state"), 1u);
  EXPECT_EQ(content.widths.count("ssd.bus.outstanding"), 1u);
  EXPECT_EQ(content.widths.count("ssd.dram.outstanding"), 1u);
  EXPECT_EQ(content.widths.count("ssd.firmware.outstanding"), 1u);
}

}  // namespace
}  // namespace ispsim::ssd

namespace ispsim::ssd {
namespace {

// A pseudo-random mix of calls on two identical drives side by side: every call
// completes exactly once, both drives move the same bytes, and the bytes are
// conserved: PCIe KV_READ bytes = requested bytes, NAND bytes = pages x page
// bytes, programmed pages = the appended tiles (full ones, plus each layer's
// partial tile once, by drain). Both drives also finish every call at the same
// time, whole tiles or partial pages: pages whose senses end at the same time
// reach the channel in die order (nand::Channel), not in the order the kernel
// runs the dies' processes, which depends on the other drive.
void random_mix(bool aligned) {
  std::unique_ptr<Drive> drives[2] = {std::make_unique<Drive>("a", schema::resolved(schema::SsdParams(), "ssd"), nullptr),
                                      std::make_unique<Drive>("b", schema::resolved(schema::SsdParams(), "ssd"), nullptr)};
  std::vector<int> completions[2];
  std::vector<std::pair<int, sc_time>> times[2];
  uint64_t requested_read_bytes = 0;
  std::vector<uint64_t> appended(32, 0);
  std::mt19937 random(12345);
  const uint64_t entry_bytes = 8 * 512;
  isp::AttentionWork work;
  work.query_rows = 1;
  work.shape = llama8b();
  work.context_tokens = 1024;
  work.appended_tokens_supplied = 1;
  for (int call = 0; call < 40; ++call) {
    const uint32_t kind = random() % 4;
    const uint32_t layer = random() % 32;
    const uint64_t a = random() % kContext, b = random() % kContext;
    uint64_t begin = std::min(a, b), end = std::max(a, b) + 1;
    if (aligned) {
      begin = begin / 32 * 32;
      end = std::min<uint64_t>((end + 31) / 32 * 32, kContext);
    }
    const uint64_t tokens = 1 + random() % 100;
    if (kind == 0) requested_read_bytes += (end - begin) * entry_bytes;
    if (kind == 1 || kind == 2) appended[layer] += tokens;
    for (int d = 0; d < 2; ++d) {
      completions[d].push_back(0);
      auto done = [&, d, call] {
        ++completions[d][call];
        times[d].push_back({call, sc_core::sc_time_stamp()});
      };
      Ssd& ssd = drives[d]->ssd;
      if (kind == 0) ssd.host_read(layer, trace::KV_REGION_PRECOMPUTED, begin, end, done);
      if (kind == 1) ssd.host_write(layer, 0, tokens, tokens * entry_bytes, done);
      if (kind == 2) ssd.append(layer, tokens, tokens * entry_bytes, done);
      if (kind == 3) {
        work.layer = layer;
        ssd.attention(work, done);
      }
    }
  }
  int drained[2] = {0, 0};
  for (int d = 0; d < 2; ++d) drives[d]->ssd.drain([&, d] { ++drained[d]; });
  sc_core::sc_start();
  uint64_t expected_programmed = 0;
  for (uint64_t n : appended) expected_programmed += (n + 31) / 32 * 8;  // tiles of 32 entries x 8 heads
  for (int d = 0; d < 2; ++d) {
    Ssd& ssd = drives[d]->ssd;
    for (size_t call = 0; call < completions[d].size(); ++call) EXPECT_EQ(completions[d][call], 1) << call;
    EXPECT_EQ(drained[d], 1);
    EXPECT_EQ(ssd.outstanding(), 0u);
    EXPECT_EQ(ssd.kv_read_bytes(), requested_read_bytes);
    EXPECT_EQ(drives[d]->pcie.bytes(link::Direction::DEVICE_TO_HOST, link::Purpose::KV_READ), requested_read_bytes);
    EXPECT_EQ(ssd.nand_bytes_read(), ssd.nand_pages_read() * kPage);
    // drain runs after every call, so each tile is programmed once (the partial one by drain).
    EXPECT_EQ(ssd.nand_pages_programmed(), expected_programmed);
  }
  EXPECT_EQ(times[0], times[1]);
  EXPECT_EQ(drives[0]->ssd.nand_pages_read(), drives[1]->ssd.nand_pages_read());
  EXPECT_EQ(drives[0]->ssd.dram_bytes(), drives[1]->ssd.dram_bytes());
  EXPECT_EQ(drives[0]->ssd.bus_bytes(), drives[1]->ssd.bus_bytes());
  EXPECT_EQ(drives[0]->pcie.total_bytes(), drives[1]->pcie.total_bytes());
}

TEST(SsdInvariants, RandomMixCompletesEachCallOnceAndConservesBytes) { random_mix(false); }
TEST(SsdInvariants, TileAlignedMixTakesTheSameTimesOnTwoDrives) { random_mix(true); }

}  // namespace
}  // namespace ispsim::ssd
