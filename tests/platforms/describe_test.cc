// `ispsim describe`: the listing, a platform's parameters with values and
// origins, a module's parameters, and deterministic output.
#include <gtest/gtest.h>

#include <sstream>

#include "schema/nand.pb.h"
#include "schema/parameter_table.h"
#include "schema/platform.pb.h"
#include "tests/platforms/test_util.h"

namespace {

using ispsim::testing::run_cli;

// The output line whose first column is `key`, or "".
std::string line_of(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key + " ", 0) == 0) return line;
  }
  return "";
}

// The cells of a table line (columns are separated by two or more spaces).
std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::string::size_type pos = 0;
  while (pos < line.size()) {
    auto gap = line.find("  ", pos);
    if (gap == std::string::npos) gap = line.size();
    out.push_back(line.substr(pos, gap - pos));
    pos = line.find_first_not_of(' ', gap);
    if (pos == std::string::npos) break;
  }
  return out;
}

TEST(Describe, WithoutArgumentsListsPlatformsAndModules) {
  const auto r = run_cli("describe");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const auto platform = cells(line_of(r.out, "nand_stream"));
  ASSERT_EQ(platform.size(), 4u) << r.out;
  EXPECT_EQ(platform[1], "MICROBENCHMARK");
  EXPECT_EQ(platform[2], "NAND-Stream");
  EXPECT_EQ(cells(line_of(r.out, "nand"))[1], "NandParams");
  EXPECT_EQ(cells(line_of(r.out, "stream"))[1], "NandStreamParams");
  EXPECT_EQ(cells(line_of(r.out, "modules"))[1], "ModuleSelection");
  EXPECT_EQ(cells(line_of(r.out, "stream"))[2], "3");  // parameter count
}

TEST(Describe, RolesListTheirImplementationsAndTheParametersEachReads) {
  const auto list = run_cli("describe");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  const auto role = cells(line_of(list.out, "isp_accelerator"));
  ASSERT_GE(role.size(), 4u) << list.out;
  EXPECT_EQ(role[1], "elastic_no_filter, elastic_simd, systolic_pair");
  EXPECT_EQ(role[2], "elastic_simd");

  const auto r = run_cli("describe isp_accelerator");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Each implementation's section holds its own parameters and not the others'.
  const std::string::size_type no_filter = r.out.find("\nelastic_no_filter: "),
                               simd = r.out.find("\nelastic_simd: "), pair = r.out.find("\nsystolic_pair: ");
  ASSERT_TRUE(no_filter != std::string::npos && simd != std::string::npos && pair != std::string::npos) << r.out;
  const std::string no_filter_part = r.out.substr(no_filter, simd - no_filter);
  const std::string simd_part = r.out.substr(simd, pair - simd), pair_part = r.out.substr(pair);
  EXPECT_NE(no_filter_part.find("isp.staging.bytes_per_cycle"), std::string::npos);
  EXPECT_EQ(no_filter_part.find("isp.stream_filter_tokens_per_cycle"), std::string::npos);
  EXPECT_NE(simd_part.find("isp.stream_filter_tokens_per_cycle"), std::string::npos);
  EXPECT_EQ(simd_part.find("isp.staging"), std::string::npos);
  EXPECT_NE(pair_part.find("isp.systolic_pair.simd_lanes"), std::string::npos);
  EXPECT_EQ(pair_part.find("isp.pes "), std::string::npos);
  // One power budget at the defaults.
  for (const std::string& part : {no_filter_part, simd_part, pair_part})
    EXPECT_NE(part.find("power budget at the defaults: 0.292 W peak (0.100 W static)"), std::string::npos) << part;
  EXPECT_EQ(run_cli("describe isp_accelerator --set isp.pes=3").exit_code, 2);
}

TEST(Describe, PlatformPrintsEveryParameterWithValueUnitOriginAndSource) {
  const auto r = run_cli("describe nand_stream");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto header = cells(line_of(r.out, "PARAMETER"));
  EXPECT_EQ(header, (std::vector<std::string>{"PARAMETER", "VALUE", "UNIT", "FROM", "DEFAULT",
                                              "RANGE", "MEANING", "SOURCE"}));
  for (const auto& row :
       ispsim::schema::parameter_rows(*ispsim::schema::Platform::descriptor(), nullptr)) {
    const std::string line = line_of(r.out, row.path);
    ASSERT_FALSE(line.empty()) << row.path << " missing in\n" << r.out;
    EXPECT_NE(line.find("  " + row.doc.unit + "  "), std::string::npos) << line;
    EXPECT_NE(line.find(row.doc.source), std::string::npos) << line;
    EXPECT_NE(line.find(row.doc.doc), std::string::npos) << line;
  }
  const auto consumer = cells(line_of(r.out, "stream.consumer_ns_per_page"));
  ASSERT_GE(consumer.size(), 6u);
  EXPECT_EQ(consumer[1], "64");
  EXPECT_EQ(consumer[2], "ns");
  EXPECT_EQ(consumer[3], "default");
  EXPECT_EQ(consumer[4], "64");
  EXPECT_EQ(consumer[5], "[0, 1e+09]");
  const auto mode = cells(line_of(r.out, "stream.read_mode"));
  EXPECT_EQ(mode[1], "PIPELINED");
  EXPECT_EQ(mode[3], "file");
  const auto name = cells(line_of(r.out, "name"));
  EXPECT_EQ(name[1], "\"NAND-Stream\"");
  EXPECT_EQ(name[4], "(required)");
}

TEST(Describe, OverridesShowAsSetFromTheCommandLine) {
  const auto r = run_cli("describe nand_stream --set nand.t_read_us=20 --set stream.read_mode=SEQUENTIAL");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto tr = cells(line_of(r.out, "nand.t_read_us"));
  EXPECT_EQ(tr[1], "20");
  EXPECT_EQ(tr[2], "us");
  EXPECT_EQ(tr[3], "--set");
  EXPECT_EQ(cells(line_of(r.out, "stream.read_mode"))[1], "SEQUENTIAL");
}

TEST(Describe, ModuleByFieldNameOrMessageName) {
  const auto by_field = run_cli("describe nand");
  const auto by_message = run_cli("describe NandParams");
  ASSERT_EQ(by_field.exit_code, 0) << by_field.err;
  EXPECT_EQ(by_field.out, by_message.out);
  EXPECT_EQ(cells(line_of(by_field.out, "PARAMETER")),
            (std::vector<std::string>{"PARAMETER", "UNIT", "DEFAULT", "RANGE", "MEANING", "SOURCE"}));
  const auto* nand = ispsim::schema::NandParams::descriptor();
  for (int i = 0; i < nand->field_count(); ++i) {
    const auto doc = ispsim::schema::parameter_doc(*nand->field(i));
    const auto row = cells(line_of(by_field.out, nand->field(i)->name()));
    ASSERT_GE(row.size(), 5u) << nand->field(i)->name();
    EXPECT_EQ(row[1], doc.unit);
    EXPECT_EQ(row[2], doc.default_value);
    EXPECT_EQ(row.back(), doc.source);
  }
}

TEST(Describe, OutputIsDeterministic) {
  EXPECT_EQ(run_cli("describe nand_stream").out, run_cli("describe nand_stream").out);
  EXPECT_EQ(run_cli("describe").out, run_cli("describe").out);
}

TEST(Describe, HelpAndUsageErrors) {
  const auto help = run_cli("describe --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("usage: ispsim describe"), std::string::npos);

  const auto two = run_cli("describe nand_stream nand");
  EXPECT_EQ(two.exit_code, 2);
  EXPECT_EQ(two.err_lines(), 1) << two.err;

  const auto set_on_module = run_cli("describe nand --set nand.channels=2");
  EXPECT_EQ(set_on_module.exit_code, 2);
  EXPECT_EQ(set_on_module.err, "ispsim: error: describe: --set applies to platforms, not modules\n");
}

TEST(Describe, ListingReportsABrokenPlatformFile) {
  const auto dir = ispsim::testing::scratch_dir() / "broken";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "broken.textproto") << "name: \"b\"\nprogram: MICROBENCHMARK\nbogus: 1\n";
  const auto r = run_cli("describe", "ISPSIM_PLATFORM_PATH=" + dir.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(line_of(r.out, "broken").find("INVALID: "), std::string::npos) << r.out;
  EXPECT_FALSE(line_of(r.out, "nand_stream").empty()) << r.out;  // the rest is still listed
  EXPECT_EQ(r.err, "ispsim: error: " + (dir / "broken.textproto").string() +
                       ":3:6: Message type \"ispsim.schema.Platform\" has no field named "
                       "\"bogus\".\n");
}

}  // namespace
