// The comparison report: exact text, CSV and JSON for hand-made summaries
// (every expected number below is worked out from the summary by hand).
#include "platforms/systems/report.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>

#include "common/error.h"
#include "platforms/systems/metrics.h"

namespace ispsim::systems {
namespace {

// A latency as the systems declare it, in ns.
Statistic ns(double v) { return {v, "ns", stats::SiUnit{"s", 1, 1e9}}; }

// The statistics a system declares for its phases and its energy (run_stats.h).
void phase_times(RunSummary& r, const std::map<std::string, double>& ns_by_phase) {
  for (const auto& [name, v] : ns_by_phase) r.stats[family_member(kRunPhaseTime, phase_key(name))] = ns(v);
}
void energy(RunSummary& r, const std::map<std::string, double>& j_by_component,
            const std::map<std::string, double>& j_by_phase) {
  for (const auto& [name, j] : j_by_component) r.stats[family_member(kComponentEnergy, name)] = j;
  for (const auto& [name, j] : j_by_phase) r.stats[family_member(kRunPhaseEnergy, phase_key(name))] = j;
}

RunSummary gpu() {
  RunSummary r;
  r.platform = "gpu_fullcompute";
  r.program = "FULL_PREFILL";
  r.stats = {{kPrefillExposedNandTime, 0.0015}, {kPrefillComputeTime, 0.0085}, {kIspComputeTime, 0},
             {kNandStreamTime, 0}, {kNandBytesRead, 300'000'000},
             {kNandBytesProgrammed, 4'000'000}, {kControllerDramBytes, 0},
             {kPcieHostToDeviceBytes, 4'001'234}, {kPcieDeviceToHostBytes, 300'000'000},
             {"system.pcie.device_to_host.kv_read_bytes", 300'000'000},
             {"system.pcie.host_to_device.kv_write_bytes", 4'000'000},
             {"system.pcie.host_to_device.command_bytes", 1'234},
             {kRunLatency, ns(12'000'000)},  // 12.000 ms
             {kRunEnergy, 5.5},
             {kRunAveragePower, 458.3333333},  // 5.5 J / 12 ms
             {kRunPeakPower, 700.25}};
  phase_times(r, {{"full prefill", 10'000'000}, {"decode", 2'000'000}});
  energy(r, {{"system.gpu", 5.0}, {"system.ssd", 0.5}}, {{"full prefill", 4.5}, {"decode", 1.0}});
  return r;
}

RunSummary memllm() {
  RunSummary r;
  r.platform = "memllm_fused";
  r.program = "PRECOMPUTED_BLEND_FUSED";
  r.stats = {{kPrefillExposedNandTime, 0}, {kPrefillComputeTime, 0.0035}, {kIspComputeTime, 0.002},
             {kNandStreamTime, 0.00125}, {kNandBytesRead, 150'000'000},
             {kNandBytesProgrammed, 2'000'000}, {kControllerDramBytes, 1'048'576},
             {kPcieHostToDeviceBytes, 65'536}, {kPcieDeviceToHostBytes, 65'536},
             {"system.pcie.host_to_device.q_bytes", 65'536}, {"system.pcie.device_to_host.o_bytes", 65'536},
             {kRunLatency, ns(4'800'000)},  // 12 / 4.8 = 2.50x
             {kRunEnergy, 0.0123456789},
             {kRunAveragePower, 2.572016},
             {kRunPeakPower, 3.0}};
  phase_times(r, {{"decode", 1'300'000}, {"fused prefill", 2'500'000}, {"HKVD identification", 1'000'000}});
  energy(r, {{"system.ssd.ch0.simd", 0.01}, {"system.ssd", 0.0023456789}}, {{"fused prefill", 0.0123456789}});
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

TEST(Report, CsvHasTheMetricsInSiUnitsUnderTheirNames) {
  // Every metric of the list is a column whatever ran; families (phase.*,
  // pcie.*, energy.*, energy_phase.*) have the keys present, in natural order.
  const std::string expected =
      "platform,program,status,failure,speedup,latency_s,phase.decode_s,phase.full_prefill_s,phase.fused_prefill_s,"
      "phase.hkvd_identification_s,exposed_nand_s,compute_s,isp_compute_s,nand_stream_s,pcie_host_to_device_bytes,"
      "pcie_device_to_host_bytes,pcie.device_to_host.kv_read_bytes,pcie.device_to_host.o_bytes,"
      "pcie.host_to_device.command_bytes,pcie.host_to_device.kv_write_bytes,pcie.host_to_device.q_bytes,"
      "nand_read_bytes,nand_written_bytes,controller_dram_bytes,ssd_attention_macs,energy_j,energy.system.gpu_j,"
      "energy.system.ssd.ch0.simd_j,energy.system.ssd_j,energy_phase.decode_j,energy_phase.full_prefill_j,"
      "energy_phase.fused_prefill_j,average_power_w,peak_power_w,tbt_s,tbt_eq4_s,energy_per_token_j,end_to_end_s,"
      "nand_stream_read_bandwidth_bytes_per_s,nand_stream_read_bytes,ftl_waf,gc_pages_read,gc_pages_programmed,"
      "gc_block_erases,gc_time_s,gc_energy_j,gc_read_wait_s\n"
      "gpu_fullcompute,FULL_PREFILL,ok,,,0.012,0.002,0.01,,,0.0015,0.0085,0,0,4001234,300000000,300000000,,1234,"
      "4000000,,300000000,4000000,0,,5.5,5,,0.5,1,4.5,,458.3333333,700.25,,,,,,,,,,,,,\n"
      "memllm_fused,PRECOMPUTED_BLEND_FUSED,ok,,,0.0048,0.0013,,0.0025,0.001,0,0.0035,0.002,0.00125,65536,65536,,"
      "65536,,,65536,150000000,2000000,1048576,,0.0123456789,,0.01,0.0023456789,,,0.0123456789,2.572016,3,,,,,,,,,,,,,"
      "\n"
      "gpu_precompute,PRECOMPUTED_BLEND,out_of_memory,KV cache 17.2 GB exceeds GPU memory 16 GB"
      ",,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,,\n";  // speedup and 42 metrics empty
  // No baseline: the speedup column stays empty.
  EXPECT_EQ(report({gpu(), memllm(), oom()}, "", Format::CSV), expected);
}

TEST(Report, ProvenanceFollowsTheMetrics) {
  Provenance p{"1.2.3+gabc", "ispsim compare --trace 'a b.trace'", "a b.trace", std::string(40, 'f'), "7"};
  RunSummary r = gpu();
  r.configuration = "name: \"x\"\n";
  std::ostringstream csv, json;
  write_comparison(csv, {r}, "", Format::CSV, default_text_columns(), &p);
  write_comparison(json, {r}, "", Format::JSON, default_text_columns(), &p);
  // sha1("name: \"x\"\n") as printed by sha1sum.
  EXPECT_NE(csv.str().find(",700.25,,,,,,,,,,,,,,1,1.2.3+gabc," + std::string(40, 'f') +
                           ",7,610e3021a6358d63958a1c5e9205d5ad9b69f52c\n"),
            std::string::npos)
      << csv.str();
  const boost::json::value v = boost::json::parse(json.str());
  EXPECT_EQ(v.at("schema_version").to_number<int>(), kResultSchemaVersion);
  EXPECT_EQ(v.at("provenance").at("trace_seed").to_number<int>(), 7);
  EXPECT_EQ(v.at("provenance").at("command_line").as_string(), p.command_line);
  EXPECT_EQ(v.at("runs").at(0).at("configuration").as_string(), r.configuration);
}

TEST(Report, CsvQuotesCellsWithCommasAndQuotes) {
  RunSummary r = oom();
  r.failure = "needs 17,2 \"GB\"";
  const std::string csv = report({r}, "", Format::CSV);
  EXPECT_NE(csv.find("\ngpu_precompute,PRECOMPUTED_BLEND,out_of_memory,\"needs 17,2 \"\"GB\"\"\",,"),
            std::string::npos)
      << csv;
}

TEST(Report, JsonHasTheMetricsInSiUnitsUnderTheirNames) {
  const std::string expected =
      "{\n"
      "  \"baseline\": \"gpu_fullcompute\",\n"
      "  \"runs\": [\n"
      "    {\"platform\": \"gpu_fullcompute\", \"program\": \"FULL_PREFILL\", \"status\": \"ok\", \"speedup\": 1,\n"
      "     \"metrics\": {\"latency_s\": 0.012, \"phase.decode_s\": 0.002, \"phase.full_prefill_s\": 0.01, "
      "\"exposed_nand_s\": 0.0015, \"compute_s\": 0.0085, \"isp_compute_s\": 0, \"nand_stream_s\": 0, "
      "\"pcie_host_to_device_bytes\": 4001234, \"pcie_device_to_host_bytes\": 300000000, "
      "\"pcie.device_to_host.kv_read_bytes\": 300000000, \"pcie.host_to_device.command_bytes\": 1234, "
      "\"pcie.host_to_device.kv_write_bytes\": 4000000, \"nand_read_bytes\": 300000000, "
      "\"nand_written_bytes\": 4000000, \"controller_dram_bytes\": 0, \"energy_j\": 5.5, "
      "\"energy.system.gpu_j\": 5, \"energy.system.ssd_j\": 0.5, \"energy_phase.decode_j\": 1, "
      "\"energy_phase.full_prefill_j\": 4.5, \"average_power_w\": 458.3333333, \"peak_power_w\": 700.25}},\n"
      "    {\"platform\": \"gpu_precompute\", \"program\": \"PRECOMPUTED_BLEND\", \"status\": \"out_of_memory\", "
      "\"failure\": \"KV cache 17.2 GB exceeds GPU memory 16 GB\", \"speedup\": null,\n"
      "     \"metrics\": {}}\n"
      "  ]\n"
      "}\n";
  EXPECT_EQ(report({gpu(), oom()}, "gpu_fullcompute", Format::JSON), expected);

  // It parses, and the numbers read back.
  const boost::json::value v = boost::json::parse(report({gpu(), memllm(), oom()}, "memllm_fused", Format::JSON));
  const auto& runs = v.at("runs").as_array();
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_DOUBLE_EQ(runs[0].at("speedup").to_number<double>(), 0.4);
  EXPECT_DOUBLE_EQ(runs[1].at("speedup").to_number<double>(), 1.0);
  const auto& m = runs[1].at("metrics");
  EXPECT_DOUBLE_EQ(m.at("phase.hkvd_identification_s").to_number<double>(), 0.001);
  EXPECT_EQ(m.at("controller_dram_bytes").to_number<uint64_t>(), 1048576u);
  EXPECT_DOUBLE_EQ(m.at("isp_compute_s").to_number<double>(), 0.002);
  EXPECT_DOUBLE_EQ(m.at("nand_stream_s").to_number<double>(), 0.00125);
  EXPECT_EQ(runs[2].at("status").as_string(), "out_of_memory");
  EXPECT_TRUE(runs[2].at("metrics").as_object().empty());
}

TEST(Report, JsonWithoutBaselineOrRuns) {
  EXPECT_EQ(report({}, "", Format::JSON), "{\n  \"baseline\": null,\n  \"runs\": []\n}\n");
  const boost::json::value v = boost::json::parse(report({memllm()}, "", Format::JSON));
  EXPECT_TRUE(v.at("runs").as_array()[0].at("speedup").is_null());
}

TEST(Report, UnknownPhasesFollowTheKnownOnesAlphabetically) {
  RunSummary a = gpu(), b = memllm();
  phase_times(a, {{"zeta", 1}});
  phase_times(b, {{"alpha", 1}});
  // Machine outputs list family members in natural order.
  const std::string csv = report({a, b}, "", Format::CSV);
  EXPECT_LT(csv.find("phase.alpha_s"), csv.find("phase.decode_s"));
  EXPECT_LT(csv.find("phase.decode_s"), csv.find("phase.zeta_s"));
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
  r.stats[kPrefillExposedNandTime] = 1e-18;  // rounds to 0.000 ms
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
  r.stats[kNandBytesRead] = -1;
  EXPECT_THROW(report({r}, "", Format::CSV), std::logic_error);
  r = gpu();
  r.stats[kRunEnergy] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(report({r}, "", Format::JSON), std::logic_error);
  r = gpu();
  phase_times(r, {{"decode", -1}});
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
