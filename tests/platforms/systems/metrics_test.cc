// The metric list: names, SI conversion, statistics read from the registry by
// name, columns and natural order (every expected value worked out by hand).
#include "platforms/systems/metrics.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "common/output_files.h"
#include "common/sha1.h"
#include "models/core/stats.h"
#include "platforms/systems/run_stats.h"
#include "platforms/systems/stats_output.h"
#include "tests/support/files.h"

namespace ispsim::systems {
namespace {

TEST(Metrics, SiConversionIsOneRoundingOfAPowerOfTen) {
  EXPECT_EQ(si_unit("ns").unit, "s");
  EXPECT_EQ(si_unit("ns").of(12'000'000), 0.012);
  EXPECT_EQ(si_unit("pJ").of(5'500'000'000'000), 5.5);
  EXPECT_EQ(si_unit("GB/s").of(19.25), 19.25e9);
  EXPECT_EQ(si_unit("bytes").unit, "bytes");
  EXPECT_EQ(si_unit("bytes").of(7), 7);
}

TEST(Metrics, RegistryStatisticsAreReadByNameInSiUnits) {
  stats::Group attention("system.ssd.attention");
  attention.counter("macs", "count", "multiply-accumulates") += 12345;
  stats::Group run("run");
  run.scalar("end_to_end_time", "ns", "time") = 1500;
  RunSummary summary;
  capture_stats(summary);
  EXPECT_EQ(summary.statistic("system.ssd.attention.macs"), 12345);
  EXPECT_EQ(summary.stats.at("run.end_to_end_time").value, 1500);  // as declared, in ns
  EXPECT_EQ(summary.statistic("run.end_to_end_time"), 1.5e-6);
  EXPECT_EQ(summary.statistic("run.end_to_end_time", "ns"), 1500);
  EXPECT_EQ(summary.stats.count("run.read_bandwidth"), 0u);  // not registered: no value, no metric
  const MetricValues values = metric_values(summary);
  const MetricValues expected_stats = {{"ssd_attention_macs", 12345}, {"end_to_end_s", 1.5e-6}};
  for (const auto& v : expected_stats)
    EXPECT_NE(std::find(values.begin(), values.end(), v), values.end()) << v.first;
  EXPECT_EQ(statistic_values(metric_statistics()), expected_stats);
}

// `run --stats`: metrics under their names, then every statistic in SI units
// (counts exact), a statistic that a metric reads under both names.
TEST(Metrics, StatisticsFilesAreInSiUnitsWithTheMetricsByName) {
  stats::Group attention("system.ssd.attention");
  attention.counter("macs", "count", "multiply-accumulates") += 12345;
  attention.scalar("busy", "ns", "busy time") = 2500;
  attention.counter("bytes", "bytes", "bytes read") += (uint64_t{1} << 60) + 1;  // beyond a double's 2^53
  attention.scalar("energy", "pJ", "energy") = 7e12;
  stats::Group run("system.run");
  run.scalar("latency", "ns", "end-to-end latency") = 1.5e6;
  RunSummary summary;
  capture_stats(summary);
  StatsProvenance provenance;
  provenance.provenance.trace_sha1 = "abc";
  provenance.configuration = "name: \"x\"\n";
  const auto dir = ispsim::testing::scratch_dir();
  for (const char* name : {"s.json", "s.csv"}) {
    OutputFiles outputs;
    write_stats(*outputs.open((dir / name).string()), provenance, &summary);
    outputs.commit();
  }
  const boost::json::value v = boost::json::parse(ispsim::testing::read_text(dir / "s.json"));
  EXPECT_EQ(v.at("schema_version").to_number<int>(), kResultSchemaVersion);
  EXPECT_EQ(v.at("provenance").at("trace_sha1").as_string(), "abc");
  EXPECT_EQ(v.at("configuration").as_string(), "name: \"x\"\n");
  EXPECT_EQ(v.at("metrics").at("latency_s").to_number<double>(), 0.0015);
  EXPECT_EQ(v.at("metrics").at("ssd_attention_macs").to_number<double>(), 12345);
  const auto& a = v.at("system").at("ssd").at("attention").as_object();
  EXPECT_EQ(a.at("macs").at("value").to_number<double>(), 12345);  // and as ssd_attention_macs
  EXPECT_EQ(a.at("busy").at("unit").as_string(), "s");
  EXPECT_EQ(a.at("busy").at("value").to_number<double>(), 2.5e-6);
  EXPECT_EQ(a.at("energy").at("unit").as_string(), "J");
  EXPECT_EQ(a.at("energy").at("value").to_number<double>(), 7);
  const std::string csv = ispsim::testing::read_text(dir / "s.csv");
  const std::string tail = ",1,,abc,," + text_sha1("name: \"x\"\n") + "\n";
  EXPECT_EQ(csv.rfind("name,value,unit,description,schema_version,ispsim_version,trace_sha1,trace_seed,"
                      "configuration_sha1\nlatency_s,0.0015,s,end-to-end latency of the request" + tail, 0), 0u)
      << csv;
  EXPECT_NE(csv.find("\nssd_attention_macs,12345,count,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\nsystem.ssd.attention.bytes,1152921504606846977,bytes,bytes read" + tail), std::string::npos);
  EXPECT_NE(csv.find("\nsystem.ssd.attention.busy,2.5e-06,s,busy time" + tail), std::string::npos) << csv;
  EXPECT_NE(csv.find("\nsystem.ssd.attention.macs,12345,count,multiply-accumulates" + tail), std::string::npos);
}

TEST(Metrics, AStatisticInAnotherUnitThanItsMetricIsABug) {
  stats::Group run("run");
  run.scalar("read_bandwidth", "ns", "not a bandwidth") = 1;
  RunSummary summary;
  EXPECT_THROW(capture_stats(summary), std::logic_error);
}

TEST(Metrics, NaturalOrderComparesDigitRunsAsNumbers) {
  EXPECT_TRUE(natural_less("energy.ch8_j", "energy.ch10_j"));
  EXPECT_FALSE(natural_less("energy.ch10_j", "energy.ch8_j"));
  EXPECT_TRUE(natural_less("a", "b"));
  EXPECT_TRUE(natural_less("ch2", "ch2x"));
  EXPECT_FALSE(natural_less("ch2", "ch2"));
  EXPECT_TRUE(natural_less("ch02", "ch2") != natural_less("ch2", "ch02"));  // a strict order still
}

TEST(Metrics, ColumnsAreEveryPlainMetricAndThePresentFamilyMembers) {
  const MetricValues a = {{"latency_s", 1}, {"energy.system.ssd.ch10_j", 1}, {"phase.decode_s", 1}};
  const MetricValues b = {{"energy.system.ssd.ch8_j", 1}};
  const std::vector<std::string> columns = metric_columns({a, b});
  size_t plain = 0;
  for (const Metric& m : metric_list()) plain += !m.family();
  EXPECT_EQ(columns.size(), plain + 3);
  EXPECT_EQ(columns.front(), "latency_s");
  EXPECT_EQ(columns[1], "phase.decode_s");
  const auto at = [&](const std::string& name) { return std::find(columns.begin(), columns.end(), name); };
  EXPECT_LT(at("energy.system.ssd.ch8_j"), at("energy.system.ssd.ch10_j"));
  EXPECT_LT(at("energy_j"), at("energy.system.ssd.ch8_j"));
  EXPECT_NE(at("tbt_s"), columns.end());  // present whatever ran
  EXPECT_EQ(metric_columns({b}), metric_columns({b, {}}));
}

TEST(Metrics, KnownNamesAreTheListsAndItsFamilyMembers) {
  EXPECT_TRUE(is_known_metric("latency_s"));
  EXPECT_TRUE(is_known_metric("phase.fused_prefill_s"));
  EXPECT_TRUE(is_known_metric("stage_share.nonlinear"));
  EXPECT_FALSE(is_known_metric("phase._s"));
  EXPECT_FALSE(is_known_metric("latency_ms"));
  EXPECT_EQ(metric_key("KV read/attention"), "kv_read_attention");
}

TEST(Metrics, TheListIsMachineReadableWithOneSiUnitPerName) {
  std::ostringstream os;
  write_metric_list(os, Format::JSON);
  const boost::json::value v = boost::json::parse(os.str());
  EXPECT_EQ(v.at("schema_version").to_number<int>(), kResultSchemaVersion);
  const std::set<std::string> si = {"s", "bytes", "J", "W", "bytes/s", "count", "ratio"};
  std::set<std::string> names;
  for (const boost::json::value& m : v.at("metrics").as_array()) {
    const std::string name(m.at("name").as_string()), unit(m.at("unit").as_string());
    EXPECT_TRUE(names.insert(name).second) << name;
    EXPECT_TRUE(si.count(unit)) << name << " in " << unit;
    EXPECT_FALSE(m.at("description").as_string().empty()) << name;
  }
  EXPECT_EQ(names.size(), metric_list().size());
}

// Cells of a one-run CSV table by column name.
std::map<std::string, std::string> csv_row(const std::string& csv) {
  std::istringstream in(csv);
  std::string header, row, name, cell;
  std::getline(in, header);
  std::getline(in, row);
  std::istringstream names(header), cells(row);
  std::map<std::string, std::string> out;
  while (std::getline(names, name, ',') && std::getline(cells, cell, ',')) out[name] = cell;
  return out;
}

// What a statistic in the tables takes: its declaration (one line in its
// module, or run_stats.h's families) and its line in the metric list
// (gc_block_erases, phase.<phase>_s, energy.<component>_j, ...). Nothing else
// carries it to the sweep's row and columns, the compare CSV and the text table.
TEST(Metrics, ADeclaredStatisticShowsInEveryTableByItsName) {
  stats::Group ssd("system.ssd");
  ssd.counter("gc_block_erases", "count", "blocks erased") += 7;
  stats::Group root("");
  declare_phase_times(root, {{"fused prefill", 2'500'000}, {"decode", 0}});  // a phase of 0 ns is shown
  declare_energy(root, {{"system.ssd.nand", 0.25}, {"system.gpu", 0}}, {{"fused prefill", 1.5}});
  RunSummary summary;
  summary.platform = "p";
  summary.program = "PRECOMPUTED_BLEND_FUSED";
  capture_stats(summary);

  const MetricValues row = metric_values(summary);  // a sweep's row
  const std::vector<std::string> columns = metric_columns({row});
  std::ostringstream csv;
  write_comparison(csv, {summary}, "", Format::CSV);
  const std::map<std::string, std::string> cells = csv_row(csv.str());
  const std::vector<std::tuple<std::string, double, std::string>> expected = {
      {"phase.decode_s", 0, "0"},
      {"phase.fused_prefill_s", 0.0025, "0.0025"},
      {"energy.system.gpu_j", 0, "0"},
      {"energy.system.ssd.nand_j", 0.25, "0.25"},
      {"energy_phase.fused_prefill_j", 1.5, "1.5"},
      {"gc_block_erases", 7, "7"}};  // a count prints as an integer
  for (const auto& [name, value, text] : expected) {
    EXPECT_NE(std::find(row.begin(), row.end(), std::make_pair(name, value)), row.end()) << name;
    EXPECT_NE(std::find(columns.begin(), columns.end(), name), columns.end()) << name;
    EXPECT_EQ(cells.count(name) ? cells.at(name) : "missing", text) << name;
  }
  EXPECT_EQ(cells.at("gc_pages_read"), "");  // a metric whose statistic nobody declared: an empty cell
  std::ostringstream text;
  write_comparison(text, {summary}, "", Format::TEXT, parse_text_columns("prefill,phases,decode"));
  EXPECT_EQ(text.str(),
            "platform  prefill (ms)  fused prefill (ms)  decode (ms)\n"
            "--------  ------------  ------------------  -----------\n"
            "p                2.500               2.500        0.000\n");
}

// The decode systems' stages are a family per figure, read per decode step.
TEST(Metrics, StagesAreStatisticFamiliesReadPerDecodeStep) {
  stats::Group root("");
  root.formula_integer(kRunDecodeTokens, "count", "decode steps", [] { return uint64_t{4}; });
  root.formula(kRunLatency, "ns", "latency", [] { return 8000.0; });
  root.formula(family_member(kRunStageTime, "kv_read_attention"), "ns", "time", [] { return 6000.0; });
  root.formula(family_member(kRunStageTime, "pursuit"), "ns", "time", [] { return 0.0; });
  root.formula(family_member(kRunStageEnergy, "pursuit"), "J", "energy", [] { return 2.0; });
  RunSummary summary;
  capture_stats(summary);
  EXPECT_EQ(summary.statistic(kRunDecodeTokens), 4);  // captured for the tables, though no metric shows it
  const MetricValues row = metric_values(summary);
  for (const auto& v : MetricValues{{"tbt_s", 2e-6},
                                    {"stage.kv_read_attention_s", 1.5e-6},
                                    {"stage.pursuit_s", 0},
                                    {"stage_energy.pursuit_j", 0.5},
                                    {"stage_share.kv_read_attention", 0.75},
                                    {"stage_share.pursuit", 0}})
    EXPECT_NE(std::find(row.begin(), row.end(), v), row.end()) << v.first;
}

}  // namespace
}  // namespace ispsim::systems
