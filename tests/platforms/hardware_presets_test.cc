// Hardware presets (platforms/hardware): each applies to the platforms that use
// its groups, --set still wins, the wrong kind or an unknown name is one line,
// and the derived datasheet values hold in closed form. Every preset simulates
// a tiny request through the CLI.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "common/error.h"
#include "schema/hardware_presets.h"
#include "schema/platform_loader.h"
#include "tests/support/cli.h"

using namespace ispsim::schema;
using ispsim::testing::CliResult;
using ispsim::testing::run_cli;
using ispsim::testing::scratch_dir;

namespace {

std::map<std::string, HardwarePreset> presets_by_name() {
  std::map<std::string, HardwarePreset> by_name;
  for (const HardwarePreset& p : list_hardware_presets()) by_name.emplace(p.name, p);
  return by_name;
}

}  // namespace

TEST(HardwarePresets, FourHostsAndThreeSsdsWithDescriptions) {
  const auto presets = presets_by_name();
  for (const char* host : {"jetson_agx_orin_64gb", "jetson_orin_nano_8gb", "nvidia_l4", "nvidia_h100_pcie"})
    EXPECT_EQ(presets.at(host).kind, "host") << host;
  for (const char* ssd : {"samsung_990_pro_2tb", "crucial_t705_2tb", "samsung_pm1743_7t68"})
    EXPECT_EQ(presets.at(ssd).kind, "ssd") << ssd;
  for (const auto& [name, p] : presets) EXPECT_FALSE(p.description.empty()) << name;
}

TEST(HardwarePresets, ReplaceTheFileAndYieldToSet) {
  const LoadedPlatform file = load_platform("gpu_fullcompute");
  const LoadedPlatform l4 = load_platform("gpu_fullcompute", {"host_preset=nvidia_l4"});
  EXPECT_DOUBLE_EQ(l4.platform.host().gpu_peak_tflops(), 121);
  EXPECT_EQ(l4.platform.host().dram_capacity_bytes(), 24ull << 30);
  EXPECT_EQ(l4.origin("host.gpu_peak_tflops"), "preset");
  // What the preset leaves alone keeps the platform's value (the fitted efficiency).
  EXPECT_DOUBLE_EQ(l4.platform.host().gemm_efficiency(), file.platform.host().gemm_efficiency());
  const LoadedPlatform set = load_platform("gpu_fullcompute", {"host.gpu_peak_tflops=50", "host_preset=nvidia_l4"});
  EXPECT_DOUBLE_EQ(set.platform.host().gpu_peak_tflops(), 50);
  EXPECT_EQ(set.origin("host.gpu_peak_tflops"), "--set");
  EXPECT_DOUBLE_EQ(set.platform.host().dram_bandwidth_gbps(), 300);

  const LoadedPlatform t705 = load_platform("memllm", {"ssd_preset=crucial_t705_2tb"});
  EXPECT_EQ(t705.platform.nand().planes_per_die(), 6u);
  EXPECT_EQ(t705.platform.link().pcie_generation(), 5u);
  // The NAND microbenchmark has no link: the preset's nand part applies, the rest is skipped.
  const LoadedPlatform stream = load_platform("nand_stream", {"ssd_preset=crucial_t705_2tb"});
  EXPECT_EQ(stream.platform.nand().dies_per_channel(), 2u);
  EXPECT_EQ(stream.origin("link.pcie_generation"), "default");
}

TEST(HardwarePresets, WrongKindOrUnknownNameIsOneLine) {
  try {
    load_platform("gpu_fullcompute", {"host_preset=samsung_990_pro_2tb"});
    FAIL() << "an SSD preset was taken as a host";
  } catch (const ispsim::BadInput& e) {
    EXPECT_EQ(std::string(e.what()), "host_preset: 'samsung_990_pro_2tb' is a ssd preset (host presets: "
                                     "jetson_agx_orin_64gb, jetson_orin_nano_8gb, nvidia_h100_pcie, nvidia_l4)");
  }
  EXPECT_THROW(load_platform("memllm", {"ssd_preset=../nvidia_l4"}), ispsim::BadInput);
  EXPECT_THROW(load_platform("memllm", {"ssd_preset=wd_black"}), ispsim::BadInput);
}

// The derived values of the preset files, from the datasheet numbers they cite.
TEST(HardwarePresets, DerivedValuesInClosedForm) {
  auto host = [](const char* preset) {
    return load_platform("gpu_fullcompute", {std::string("host_preset=") + preset}).platform.host();
  };
  // Dense FP16 tensor peak: SMs x 1024 FP16 FMA per clock x 2 FLOP x clock.
  EXPECT_NEAR(host("jetson_agx_orin_64gb").gpu_peak_tflops(), 16 * 1024 * 2 * 1.3e9 / 1e12, 0.05);
  EXPECT_NEAR(host("jetson_orin_nano_8gb").gpu_peak_tflops(), 8 * 1024 * 2 * 1.02e9 / 1e12, 0.05);
  // Swap copy of a discrete GPU: PCIe lanes x rate x 128/130 / 8 x 0.9143 payload efficiency.
  EXPECT_NEAR(host("nvidia_h100_pcie").swap_read_gbps(), 32.0 * 16 * 128 / 130 / 8 * 0.9143, 0.05);
  EXPECT_NEAR(host("nvidia_l4").swap_read_gbps(), 16.0 * 16 * 128 / 130 / 8 * 0.9143, 0.05);
  // Energy per FLOP: (TDP - idle - DRAM bandwidth x 8 x pJ/bit) / peak.
  const auto l4 = host("nvidia_l4");
  EXPECT_NEAR(l4.energy_pj_per_flop(),
              (72 - l4.idle_power_w() - l4.dram_bandwidth_gbps() * 8 * l4.dram_energy_pj_per_bit() / 1000) /
                  l4.gpu_peak_tflops(),
              0.005);
  const auto h100 = host("nvidia_h100_pcie");
  EXPECT_NEAR(h100.energy_pj_per_flop(),
              (350 - h100.idle_power_w() - h100.dram_bandwidth_gbps() * 8 * h100.dram_energy_pj_per_bit() / 1000) /
                  h100.gpu_peak_tflops(),
              0.005);
}

// Each host preset on a GPU platform, each SSD preset on MemLLM and on a GPU
// platform: a tiny Llama-3.2-1B request simulates (exit 0).
TEST(HardwarePresetsCli, EveryPresetSimulatesATinyRequest) {
  const std::string trace = (scratch_dir() / "tiny.trace").string();
  ASSERT_EQ(run_cli("trace gen --shape Llama-3.2-1B --dataset hpt --docs 1 --context-tokens 64 --query-tokens 4 "
                    "--answer-tokens 2 --out " + trace).exit_code, 0);
  for (const auto& [name, p] : presets_by_name()) {
    for (const char* platform : {p.kind == "host" ? "gpu_fullcompute" : "memllm", "gpu_precompute"}) {
      const CliResult r = run_cli(std::string("run --platform ") + platform + " --trace " + trace + " --set " +
                                  p.kind + "_preset=" + name);
      EXPECT_EQ(r.exit_code, 0) << name << " on " << platform << ": " << r.err;
    }
  }
}
