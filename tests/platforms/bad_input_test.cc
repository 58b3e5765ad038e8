// Bad platform input, through the loader API and through the CLI: each case
// must give exit code 2 and exactly one stderr line naming the file and the
// problem, with nothing on stdout.
#include <gtest/gtest.h>


#include "common/error.h"
#include "schema/platform_loader.h"
#include "tests/platforms/test_util.h"

namespace {

using ispsim::testing::run_cli;
using ispsim::testing::shell_quote;

struct BadCase {
  std::string label;
  std::string text;                    // platform file content
  std::vector<std::string> overrides;  // --set arguments
  std::string problem;                 // expected after "<file>" in the message
};

// gtest prints parameters of failing cases; the label says it all.
void PrintTo(const BadCase& c, std::ostream* os) { *os << c.label; }

const std::string kHeader = "name: \"bad\"\nprogram: MICROBENCHMARK\n";

// `problem` starts with ":" for parse errors (file:line:col: message, with
// protobuf's column, which points at or just after the offending token) and
// with ": " for every other error (file: message).
std::vector<BadCase> cases() {
  return {
      {"unknown_field", kHeader + "nand { chanels: 8 }\n", {},
       ":3:15: Message type \"ispsim.schema.NandParams\" has no field named \"chanels\"."},
      {"unknown_top_level_field", kHeader + "frequency_mhz: 800\n", {},
       ":3:14: Message type \"ispsim.schema.Platform\" has no field named \"frequency_mhz\"."},
      {"negative_tR", kHeader + "nand { t_read_us: -1 }\n", {},
       ": nand.t_read_us = -1 us is outside the allowed range [0.001, 1000] us"},
      {"zero_channels", kHeader + "nand { channels: 0 }\n", {},
       ": nand.channels = 0 count is outside the allowed range [1, 64] count"},
      {"type_error", kHeader + "nand { channels: \"eight\" }\n", {},
       ":3:18: Expected integer, got: \"eight\""},
      {"fraction_for_integer", kHeader + "nand { channels: 2.5 }\n", {},
       ":3:18: Expected integer, got: 2.5"},
      {"unknown_enum_value", kHeader + "stream { read_mode: FAST }\n", {},
       ":3:26: Unknown enumeration value of \"FAST\" for field \"read_mode\"."},
      {"unspecified_enum_value", kHeader + "stream { read_mode: READ_MODE_UNSPECIFIED }\n", {},
       ": stream.read_mode = READ_MODE_UNSPECIFIED is not a valid choice; use one of "
       "SEQUENTIAL, PIPELINED"},
      {"not_a_number", kHeader + "nand { t_read_us: nan }\n", {},
       ": nand.t_read_us = nan is not a finite number"},
      {"invalid_utf8_text", "name: \"a\xff\"\nprogram: MICROBENCHMARK\n", {},
       ": the text of 'name' is not valid UTF-8"},
      {"multi_line_text", kHeader + "description: \"two\\nlines\"\n", {},
       ": the text of 'description' contains a control character"},
      {"malformed_text", kHeader + "nand { channels: 8\n", {},
       ":4:1: Expected identifier, got: "},
      {"duplicate_field", kHeader + "nand { channels: 8 channels: 4 }\n", {},
       ":3:28: Non-repeated field \"channels\" is specified multiple times."},
      {"empty_file", "", {},
       ": 'name' is required (display name used in reports and comparison tables, e.g. "
       "\"MemLLM-Base\")"},
      {"missing_program", "name: \"bad\"\n", {},
       ": 'program' is required (trace program this platform runs: FULL_PREFILL, "
       "PRECOMPUTED_BLEND, PRECOMPUTED_BLEND_FUSED, DECODE_ONLY, DECODE_ONLY_DICTIONARY or MICROBENCHMARK)"},
      {"unknown_set_path", kHeader, {"nand.t_rd=20"},
       ": --set nand.t_rd=20: unknown parameter 'nand.t_rd' (NandParams has: "},
      {"unknown_set_group", kHeader, {"power.channels=2"},
       ": --set power.channels=2: unknown parameter 'power' (Platform has: name, description, "
       "program, group, group_rank, host_preset, ssd_preset, modules, nand, stream, ssd, isp, flash_coordinator, "
       "host, link, ftl, placement, cim)"},
      {"set_on_a_group", kHeader, {"nand=3"},
       ": --set nand=3: 'nand' is a group of parameters, not a single value; use "
       "nand.<parameter> ("},
      {"set_below_a_parameter", kHeader, {"nand.channels.x=3"},
       ": --set nand.channels.x=3: 'nand.channels' is a single parameter and has no 'x'"},
      {"bad_set_value", kHeader, {"nand.channels=abc"},
       ": --set nand.channels=abc: 'abc' is not a non-negative integer (32-bit) (channels)"},
      {"negative_set_for_unsigned", kHeader, {"nand.channels=-8"},
       ": --set nand.channels=-8: '-8' is not a non-negative integer (32-bit) (channels)"},
      {"bad_set_enum", kHeader, {"stream.read_mode=FAST"},
       ": --set stream.read_mode=FAST: 'FAST' is not one of SEQUENTIAL, PIPELINED (read_mode)"},
      {"set_without_equals", kHeader, {"nand.channels"},
       ": --set nand.channels: expected path=value, e.g. nand.t_read_us=20"},
      {"set_out_of_range", kHeader, {"nand.t_read_us=-3"},
       ": nand.t_read_us = -3 us is outside the allowed range [0.001, 1000] us"},
  };
}

std::string file_for(const BadCase& c) {
  return ispsim::testing::write_file(c.label + ".textproto", c.text);
}

void expect_problem(const std::string& message, const std::string& file, const BadCase& c) {
  const std::string expected = file + c.problem;
  // Messages whose tail lists schema fields are compared up to that list.
  EXPECT_EQ(message.substr(0, expected.size()), expected) << "got: " << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << "not one line: " << message;
}

class BadPlatform : public testing::TestWithParam<BadCase> {};

TEST_P(BadPlatform, LoaderThrowsBadInputNamingFileAndProblem) {
  const BadCase& c = GetParam();
  const std::string file = file_for(c);
  try {
    ispsim::schema::load_platform_file(file, c.overrides);
    FAIL() << "accepted";
  } catch (const ispsim::BadInput& e) {
    expect_problem(e.what(), file, c);
  }
}

TEST_P(BadPlatform, CliExitsWithCode2AndOneStderrLine) {
  const BadCase& c = GetParam();
  const std::string file = file_for(c);
  std::string args = "describe " + shell_quote(file);
  for (const auto& o : c.overrides) args += " --set " + shell_quote(o);
  const auto result = run_cli(args);
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.out, "");
  ASSERT_EQ(result.err_lines(), 1) << result.err;
  const std::string prefix = "ispsim: error: ";
  ASSERT_EQ(result.err.rfind(prefix, 0), 0u) << result.err;
  expect_problem(result.err.substr(prefix.size(), result.err.size() - prefix.size() - 1), file,
                 c);
}

INSTANTIATE_TEST_SUITE_P(Cases, BadPlatform, testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.label; });

TEST(BadPlatformFile, MissingFile) {
  const std::string file = (ispsim::testing::scratch_dir() / "absent.textproto").string();
  try {
    ispsim::schema::load_platform_file(file);
    FAIL() << "accepted";
  } catch (const ispsim::BadInput& e) {
    EXPECT_EQ(std::string(e.what()), file + ": no such file");
  }
  const auto result = run_cli("describe " + shell_quote(file));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.err, "ispsim: error: " + file + ": no such file\n");
}

TEST(BadPlatformFile, DirectoryInsteadOfFile) {
  const auto dir = ispsim::testing::scratch_dir() / "dir.textproto";
  std::filesystem::create_directories(dir);
  const auto result = run_cli("describe " + shell_quote(dir.string()));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.err, "ispsim: error: " + dir.string() + ": not a regular file\n");
}

TEST(BadPlatformFile, UnknownPlatformName) {
  const auto result = run_cli("describe no_such_platform");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.err_lines(), 1);
  EXPECT_EQ(result.err.rfind("ispsim: error: no_such_platform: no platform of this name in ", 0),
            0u)
      << result.err;
  // `describe` also takes module names, so a mistyped one lists those too.
  EXPECT_NE(result.err.find("; nor a module (known: modules, nand, stream, ssd, isp, flash_coordinator, host, link, ftl, placement, cim)\n"), std::string::npos)
      << result.err;
}

TEST(BadPlatformFile, BinaryGarbage) {
  const std::string file =
      ispsim::testing::write_file("garbage.textproto", std::string("\x00\xff\x13garbage\x01", 11));
  const auto result = run_cli("describe " + shell_quote(file));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.err_lines(), 1) << result.err;
  EXPECT_EQ(result.err.rfind("ispsim: error: " + file + ":1:", 0), 0u) << result.err;
}

}  // namespace
