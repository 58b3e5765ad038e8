// The comparison report: exact text, CSV and JSON for hand-made summaries
// (every expected number below is worked out from the summary by hand).
#include "platforms/systems/report.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "common/error.h"

namespace ispsim::systems {
namespace {

RunSummary gpu() {
  RunSummary r;
  r.platform = "gpu_fullcompute";
  r.program = "FULL_PREFILL";
  r.latency_ns = 12'000'000;  // 12.000 ms
  r.phase_ns = {{"full prefill", 10'000'000}, {"decode", 2'000'000}};
  r.exposed_nand_ns = 1'500'000;
  r.compute_ns = 8'500'000;
  r.pcie_bytes = {{"device_to_host.kv_read", 300'000'000}, {"host_to_device.kv_write", 4'000'000},
                  {"host_to_device.command", 1'234}};
  r.nand_read_bytes = 300'000'000;
  r.nand_written_bytes = 4'000'000;
  r.controller_dram_bytes = 0;
  r.energy_j = 5.5;
  r.energy_j_by_component = {{"system.gpu", 5.0}, {"system.ssd", 0.5}};
  r.energy_j_by_phase = {{"full prefill", 4.5}, {"decode", 1.0}};
  r.average_w = 458.3333333;  // 5.5 J / 12 ms
  r.peak_w = 700.25;
  return r;
}

RunSummary memllm() {
  RunSummary r;
  r.platform = "memllm_fused";
  r.program = "PRECOMPUTED_BLEND_FUSED";
  r.latency_ns = 4'800'000;  // 12 / 4.8 = 2.50x
  r.phase_ns = {{"decode", 1'300'000}, {"fused prefill", 2'500'000}, {"HKVD identification", 1'000'000}};
  r.exposed_nand_ns = 0;
  r.compute_ns = 3'500'000;
  r.isp_compute_ns = 2'000'000;
  r.nand_stream_ns = 1'250'000;
  r.pcie_bytes = {{"host_to_device.q", 65'536}, {"device_to_host.o", 65'536}};
  r.nand_read_bytes = 150'000'000;
  r.nand_written_bytes = 2'000'000;
  r.controller_dram_bytes = 1'048'576;
  r.energy_j = 0.0123456789;
  r.energy_j_by_component = {{"system.ssd.ch0.simd", 0.01}, {"system.ssd", 0.0023456789}};
  r.energy_j_by_phase = {{"fused prefill", 0.0123456789}};
  r.average_w = 2.572016;
  r.peak_w = 3.0;
  return r;
}

RunSummary oom() {
  RunSummary r;
  r.platform = "gpu_precompute";
  r.program = "PRECOMPUTED_BLEND";
  r.out_of_memory = true;
  r.failure = "KV cache 17.2 GB exceeds GPU memory 16 GB";
  return r;
}

std::string report(const std::vector<RunSummary>& runs, const std::string& baseline, Format format,
                   const std::vector<std::string>& columns = parse_text_columns("all")) {
  std::ostringstream os;
  write_comparison(os, runs, baseline, format, columns);
  return os.str();
}

TEST(Report, TextIsAnAlignedTableWithUnitsAndOomRow) {
  // Phase columns: known phases in execution order; h2d = 4'000'000 + 1'234 B.
  const std::string expected =
      "platform         program                  latency (ms)  speedup (×)  prefill (ms)  HKVD identification (ms)  fused prefill (ms)"
      "  full prefill (ms)  decode (ms)  exposed NAND (ms)  compute (ms)  ISP compute (ms)  NAND stream (ms)  PCIe h2d (MB)  PCIe d2h (MB)  NAND read (MB)"
      "  NAND written (MB)  ctrl DRAM (MB)  energy (J)  avg power (W)  peak power (W)\n"
      "---------------  -----------------------  ------------  -----------  ------------  ------------------------  ------------------"
      "  -----------------  -----------  -----------------  ------------  ----------------  ----------------  -------------  -------------  --------------"
      "  -----------------  --------------  ----------  -------------  --------------\n"
      "gpu_fullcompute  FULL_PREFILL                   12.000         1.00        10.000                         -                   -"
      "             10.000        2.000              1.500         8.500             0.000             0.000          4.001        300.000         300.000"
      "              4.000           0.000       5.500        458.333         700.250\n"
      "memllm_fused     PRECOMPUTED_BLEND_FUSED         4.800         2.50         3.500                     1.000               2.500"
      "                  -        1.300              0.000         3.500             2.000             1.250          0.066          0.066         150.000"
      "              2.000           1.049       0.012          2.572           3.000\n"
      "gpu_precompute   PRECOMPUTED_BLEND                 OOM\n"
      "gpu_precompute: KV cache 17.2 GB exceeds GPU memory 16 GB\n";
  EXPECT_EQ(report({gpu(), memllm(), oom()}, "gpu_fullcompute", Format::TEXT), expected);  // --columns all
}

TEST(Report, TextDefaultsToLatencyPrefillDecodeAndEnergy) {
  // prefill = the phases before decode: 10.000 ms; 1.000 + 2.500 = 3.500 ms.
  const std::string expected =
      "platform         program                  latency (ms)  speedup (×)  prefill (ms)  decode (ms)  energy (J)\n"
      "---------------  -----------------------  ------------  -----------  ------------  -----------  ----------\n"
      "gpu_fullcompute  FULL_PREFILL                   12.000         1.00        10.000        2.000       5.500\n"
      "memllm_fused     PRECOMPUTED_BLEND_FUSED         4.800         2.50         3.500        1.300       0.012\n"
      "gpu_precompute   PRECOMPUTED_BLEND                 OOM\n"
      "gpu_precompute: KV cache 17.2 GB exceeds GPU memory 16 GB\n";
  EXPECT_EQ(report({gpu(), memllm(), oom()}, "gpu_fullcompute", Format::TEXT, default_text_columns()), expected);
}

TEST(Report, TextColumnsAreChosenByNameInTableOrder) {
  const std::string expected =
      "platform         latency (ms)  NAND read (MB)  peak power (W)\n"
      "---------------  ------------  --------------  --------------\n"
      "gpu_fullcompute        12.000         300.000         700.250\n"
      "memllm_fused            4.800         150.000           3.000\n"
      "gpu_precompute            OOM\n"
      "gpu_precompute: KV cache 17.2 GB exceeds GPU memory 16 GB\n";
  EXPECT_EQ(report({gpu(), memllm(), oom()}, "", Format::TEXT, parse_text_columns("peak_power,latency,nand_read")),
            expected);
}

TEST(Report, UnknownTextColumnIsRefusedWithTheKnownNames) {
  try {
    parse_text_columns("latency,latncy");
    FAIL() << "no exception";
  } catch (const BadInput& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("--columns"), std::string::npos) << what;
    EXPECT_NE(what.find("'latncy'"), std::string::npos) << what;
    EXPECT_NE(what.find("program, latency, speedup, prefill, phases, decode, exposed_nand"), std::string::npos) << what;
  }
  EXPECT_THROW(parse_text_columns(""), BadInput);
  EXPECT_EQ(parse_text_columns("all").size(), 18u);
}

TEST(Report, CsvHasOneRowPerPlatformAndUnitsInTheHeader) {
  const std::string expected =
      "platform,program,status,failure,latency (ms),speedup (x),HKVD identification (ms),fused prefill (ms),"
      "full prefill (ms),decode (ms),exposed NAND (ms),compute (ms),ISP compute (ms),NAND stream (ms),"
      "PCIe device_to_host.kv_read (bytes),PCIe device_to_host.o (bytes),PCIe host_to_device.command (bytes),"
      "PCIe host_to_device.kv_write (bytes),PCIe host_to_device.q (bytes),"
      "PCIe host_to_device (bytes),PCIe device_to_host (bytes),NAND read (bytes),NAND written (bytes),"
      "ctrl DRAM (bytes),energy (J),energy decode (J),energy full prefill (J),energy fused prefill (J),"
      "energy system.gpu (J),energy system.ssd (J),energy system.ssd.ch0.simd (J),avg power (W),peak power (W)\n"
      "gpu_fullcompute,FULL_PREFILL,ok,,12.000000,,,,10.000000,2.000000,1.500000,8.500000,0.000000,0.000000,"
      "300000000,,1234,4000000,,4001234,300000000,300000000,4000000,0,5.500000000,1.000000000,4.500000000,,"
      "5.000000000,0.500000000,,458.333333,700.250000\n"
      "memllm_fused,PRECOMPUTED_BLEND_FUSED,ok,,4.800000,,1.000000,2.500000,,1.300000,0.000000,3.500000,2.000000,1.250000,"
      ",65536,,,65536,65536,65536,150000000,2000000,1048576,0.012345679,,,0.012345679,"
      ",0.002345679,0.010000000,2.572016,3.000000\n"
      "gpu_precompute,PRECOMPUTED_BLEND,out_of_memory,KV cache 17.2 GB exceeds GPU memory 16 GB"
      ",,,,,,,,,,,,,,,,,,,,,,,,,,,,,\n";  // 33 columns, 4 filled
  // No baseline: the speedup column stays empty.
  EXPECT_EQ(report({gpu(), memllm(), oom()}, "", Format::CSV), expected);
}

TEST(Report, CsvQuotesCellsWithCommasAndQuotes) {
  RunSummary r = oom();
  r.failure = "needs 17,2 \"GB\"";
  const std::string csv = report({r}, "", Format::CSV);
  EXPECT_NE(csv.find("\ngpu_precompute,PRECOMPUTED_BLEND,out_of_memory,\"needs 17,2 \"\"GB\"\"\",,"),
            std::string::npos)
      << csv;
}

TEST(Report, JsonIsStructuredWithUnitsInTheKeys) {
  const std::string expected =
      "{\n"
      "  \"baseline\": \"gpu_fullcompute\",\n"
      "  \"runs\": [\n"
      "    {\"platform\": \"gpu_fullcompute\", \"program\": \"FULL_PREFILL\", \"status\": \"ok\",\n"
      "     \"latency_ms\": 12.000000, \"speedup\": 1.000000,\n"
      "     \"phase_ms\": {\"decode\": 2.000000, \"full prefill\": 10.000000},\n"
      "     \"exposed_nand_ms\": 1.500000, \"compute_ms\": 8.500000, \"isp_compute_ms\": 0.000000, \"nand_stream_ms\": 0.000000,\n"
      "     \"pcie_bytes\": {\"device_to_host.kv_read\": 300000000, \"host_to_device.command\": 1234, "
      "\"host_to_device.kv_write\": 4000000},\n"
      "     \"pcie_host_to_device_bytes\": 4001234, \"pcie_device_to_host_bytes\": 300000000,\n"
      "     \"nand_read_bytes\": 300000000, \"nand_written_bytes\": 4000000, \"controller_dram_bytes\": 0,\n"
      "     \"energy_j\": 5.500000000,\n"
      "     \"energy_j_by_phase\": {\"decode\": 1.000000000, \"full prefill\": 4.500000000},\n"
      "     \"energy_j_by_component\": {\"system.gpu\": 5.000000000, \"system.ssd\": 0.500000000},\n"
      "     \"average_power_w\": 458.333333, \"peak_power_w\": 700.250000},\n"
      "    {\"platform\": \"gpu_precompute\", \"program\": \"PRECOMPUTED_BLEND\", \"status\": \"out_of_memory\", "
      "\"failure\": \"KV cache 17.2 GB exceeds GPU memory 16 GB\"}\n"
      "  ]\n"
      "}\n";
  EXPECT_EQ(report({gpu(), oom()}, "gpu_fullcompute", Format::JSON), expected);

  // It parses, and the numbers read back.
  const boost::json::value v = boost::json::parse(report({gpu(), memllm(), oom()}, "memllm_fused", Format::JSON));
  const auto& runs = v.at("runs").as_array();
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_DOUBLE_EQ(runs[0].at("speedup").to_number<double>(), 0.4);
  EXPECT_DOUBLE_EQ(runs[1].at("speedup").to_number<double>(), 1.0);
  EXPECT_DOUBLE_EQ(runs[1].at("phase_ms").at("HKVD identification").to_number<double>(), 1.0);
  EXPECT_EQ(runs[1].at("controller_dram_bytes").to_number<uint64_t>(), 1048576u);
  EXPECT_DOUBLE_EQ(runs[1].at("isp_compute_ms").to_number<double>(), 2.0);
  EXPECT_DOUBLE_EQ(runs[1].at("nand_stream_ms").to_number<double>(), 1.25);
  EXPECT_EQ(runs[2].at("status").as_string(), "out_of_memory");
  EXPECT_FALSE(runs[2].as_object().contains("latency_ms"));
}

TEST(Report, JsonWithoutBaselineOrRuns) {
  EXPECT_EQ(report({}, "", Format::JSON), "{\n  \"baseline\": null,\n  \"runs\": []\n}\n");
  const boost::json::value v = boost::json::parse(report({memllm()}, "", Format::JSON));
  EXPECT_TRUE(v.at("runs").as_array()[0].at("speedup").is_null());
}

TEST(Report, UnknownPhasesFollowTheKnownOnesAlphabetically) {
  RunSummary a = gpu(), b = memllm();
  a.phase_ns["zeta"] = 1;
  b.phase_ns["alpha"] = 1;
  const std::string csv = report({a, b}, "", Format::CSV);
  EXPECT_LT(csv.find("decode (ms)"), csv.find("alpha (ms)"));
  // The text table keeps decode after the phases before it.
  const std::string text = report({a, b}, "", Format::TEXT);
  const std::string header = text.substr(0, text.find('\n'));
  EXPECT_LT(header.find("alpha (ms)"), header.find("zeta (ms)"));
  EXPECT_LT(header.find("zeta (ms)"), header.find("decode (ms)"));
  EXPECT_LT(header.find("HKVD identification (ms)"), header.find("fused prefill (ms)"));
}

TEST(Report, BaselineOutOfMemoryLeavesSpeedupEmpty) {
  const std::string text = report({oom(), memllm()}, "gpu_precompute", Format::TEXT);
  EXPECT_NE(text.find("memllm_fused    PRECOMPUTED_BLEND_FUSED         4.800            -"), std::string::npos) << text;
}

TEST(Report, FailedRunIsNotCalledOom) {
  RunSummary r = memllm();
  r.failure = "trace program FULL_PREFILL has no attention placement on this platform";
  const std::string text = report({r}, "", Format::TEXT);
  EXPECT_NE(text.find("memllm_fused  PRECOMPUTED_BLEND_FUSED        FAILED\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("OOM"), std::string::npos);
  EXPECT_NE(report({r}, "", Format::CSV).find(",failed,"), std::string::npos);
}

TEST(Report, NumbersAreDeterministicAndNeverNegativeZero) {
  RunSummary r = memllm();
  r.exposed_nand_ns = 1e-9;  // rounds to 0.000
  const std::string text = report({r}, "", Format::TEXT);
  EXPECT_EQ(text.find("-0.000"), std::string::npos);
  EXPECT_EQ(report({r, gpu()}, "gpu_fullcompute", Format::TEXT), report({r, gpu()}, "gpu_fullcompute", Format::TEXT));
}

TEST(Report, UnknownBaselineIsBadInput) {
  try {
    report({gpu(), memllm()}, "gpu", Format::TEXT);
    FAIL() << "no exception";
  } catch (const BadInput& e) {
    EXPECT_STREQ(e.what(), "--baseline: no run of platform 'gpu' (runs: gpu_fullcompute, memllm_fused)");
  }
}

TEST(Report, ProducerBugsAreLogicErrors) {
  RunSummary r = gpu();
  r.pcie_bytes["kv_read"] = 1;  // no direction
  EXPECT_THROW(report({r}, "", Format::TEXT), std::logic_error);
  r = gpu();
  r.pcie_bytes["host_to_device."] = 1;  // no purpose
  EXPECT_THROW(report({r}, "", Format::CSV), std::logic_error);
  r = gpu();
  r.energy_j = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(report({r}, "", Format::JSON), std::logic_error);
  r = gpu();
  r.phase_ns["decode"] = -1;
  EXPECT_THROW(report({r}, "", Format::TEXT), std::logic_error);
}

TEST(Report, ParseFormat) {
  EXPECT_EQ(parse_format("text"), Format::TEXT);
  EXPECT_EQ(parse_format("csv"), Format::CSV);
  EXPECT_EQ(parse_format("json"), Format::JSON);
  try {
    parse_format("xml", "--format");
    FAIL() << "no exception";
  } catch (const BadInput& e) {
    EXPECT_STREQ(e.what(), "--format: unknown format 'xml' (expected text, csv or json)");
  }
}

}  // namespace
}  // namespace ispsim::systems
