// Loading platforms: by name and by path, defaults, file values, --set
// overrides, the search path, and the helpers behind `ispsim describe`.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <cstdlib>

#include "common/error.h"
#include "schema/field_text.h"
#include "schema/parameter_table.h"
#include "schema/platform_loader.h"
#include "tests/platforms/test_util.h"

namespace {

using ispsim::schema::load_platform;
using ispsim::schema::load_platform_file;
using ispsim::schema::NandStreamParams;
using ispsim::schema::Platform;
using ispsim::testing::write_file;

const std::string kMinimal = "name: \"tiny\"\nprogram: DECODE_ONLY\n";

// The default of a NandParams field as the schema states it (the NAND models
// own those numbers; these tests only check that the loader applies them).
double nand_default(const std::string& field) {
  const auto* f = ispsim::schema::NandParams::descriptor()->FindFieldByName(field);
  return std::stod(ispsim::schema::parameter_doc(*f).default_value);
}

TEST(Loader, LoadsTheNandStreamPlatformByName) {
  const auto loaded = load_platform("nand_stream");
  EXPECT_EQ(loaded.file, std::string(ISPSIM_SOURCE_DIR) + "/platforms/nand_stream.textproto");
  const Platform& p = loaded.platform;
  EXPECT_EQ(p.name(), "NAND-Stream");
  EXPECT_EQ(p.program(), Platform::MICROBENCHMARK);
  EXPECT_EQ(p.stream().read_mode(), NandStreamParams::PIPELINED);
  EXPECT_EQ(p.stream().scratchpad_buffers_per_channel(), 2u);
  EXPECT_EQ(p.stream().consumer_ns_per_page(), 64.0);
  EXPECT_EQ(p.nand().channels(), nand_default("channels"));
  EXPECT_EQ(p.nand().t_read_us(), nand_default("t_read_us"));
  EXPECT_EQ(loaded.origin("stream.read_mode"), "file");
  EXPECT_EQ(loaded.origin("stream.consumer_ns_per_page"), "default");
  EXPECT_EQ(loaded.origin("nand.t_read_us"), "default");
}

TEST(Loader, LoadsByPathToo) {
  const std::string file = std::string(ISPSIM_SOURCE_DIR) + "/platforms/nand_stream.textproto";
  EXPECT_EQ(load_platform(file).platform.name(), "NAND-Stream");
}

TEST(Loader, DefaultsFillEveryUnsetParameter) {
  const auto loaded = load_platform_file(write_file("tiny.textproto", kMinimal));
  const Platform& p = loaded.platform;
  EXPECT_EQ(p.program(), Platform::DECODE_ONLY);
  EXPECT_TRUE(p.has_nand() && p.has_stream() && p.has_modules());
  EXPECT_EQ(p.nand().page_bytes(), nand_default("page_bytes"));
  EXPECT_EQ(p.stream().read_mode(), NandStreamParams::PIPELINED);
  EXPECT_EQ(p.modules().isp_accelerator(), "elastic_simd");
  EXPECT_EQ(loaded.from_file, (std::vector<std::string>{"name", "program"}));
}

TEST(Loader, FileValuesWinOverDefaults) {
  const auto p = load_platform_file(write_file("f.textproto", kMinimal +
                                                                  "nand { t_read_us: 12.5 channels: 2 }\n"
                                                                  "stream { read_mode: SEQUENTIAL }\n"))
                     .platform;
  EXPECT_EQ(p.nand().t_read_us(), 12.5);
  EXPECT_EQ(p.nand().channels(), 2u);
  EXPECT_EQ(p.stream().read_mode(), NandStreamParams::SEQUENTIAL);
}

TEST(Loader, OverridesWinOverFileAndDefaults) {
  const std::string file = write_file("o.textproto", kMinimal + "nand { t_read_us: 12.5 }\n");
  const auto loaded = load_platform_file(
      file, {"nand.t_read_us=20", "stream.read_mode=SEQUENTIAL", "nand.cache_read=false",
             "modules.isp_accelerator=systolic_pair", "stream.consumer_ns_per_page=0",
             "nand.channels=16", "nand.channels=4", "description=with spaces = and equals"});
  const Platform& p = loaded.platform;
  EXPECT_EQ(p.nand().t_read_us(), 20.0);
  EXPECT_EQ(p.stream().read_mode(), NandStreamParams::SEQUENTIAL);
  EXPECT_FALSE(p.nand().cache_read());
  EXPECT_EQ(p.modules().isp_accelerator(), "systolic_pair");
  EXPECT_EQ(p.stream().consumer_ns_per_page(), 0.0);
  EXPECT_EQ(p.nand().channels(), 4u);  // the last --set of a path wins
  EXPECT_EQ(p.description(), "with spaces = and equals");
  EXPECT_EQ(loaded.origin("nand.t_read_us"), "--set");
  EXPECT_EQ(loaded.origin("name"), "file");
  EXPECT_EQ(loaded.origin("nand.page_bytes"), "default");
}

TEST(Loader, OverridesAreRangeCheckedLikeFileValues) {
  const std::string file = write_file("r.textproto", kMinimal);
  try {
    load_platform_file(file, {"stream.scratchpad_buffers_per_channel=0"});
    FAIL() << "no range error";
  } catch (const ispsim::BadInput& e) {
    EXPECT_EQ(std::string(e.what()),
              file + ": stream.scratchpad_buffers_per_channel = 0 count is outside the allowed "
                     "range [1, 64] count");
  }
}

TEST(Loader, SearchPathPutsTheEnvironmentFirst) {
  const auto dir = ispsim::testing::scratch_dir() / "mine";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "nand_stream.textproto") << "name: \"shadow\"\nprogram: MICROBENCHMARK\n";
  std::ofstream(dir / "extra.textproto") << "name: \"extra\"\nprogram: FULL_PREFILL\n";
  std::ofstream(dir / "notes.txt") << "not a platform\n";
  const std::string env = "/nonexistent/dir::" + dir.string();
  ASSERT_EQ(setenv("ISPSIM_PLATFORM_PATH", env.c_str(), 1), 0);

  const auto search = ispsim::schema::platform_search_path();
  ASSERT_EQ(search.size(), 3u);  // the empty entry is skipped
  EXPECT_EQ(search[1], dir.string());
  EXPECT_EQ(search[2], std::string(ISPSIM_SOURCE_DIR) + "/platforms");

  EXPECT_EQ(load_platform("nand_stream").platform.name(), "shadow");
  EXPECT_EQ(load_platform("extra").platform.program(), Platform::FULL_PREFILL);
  int nand_stream_entries = 0;
  bool has_extra = false;
  for (const auto& entry : ispsim::schema::list_platform_files()) {
    nand_stream_entries += entry.name == "nand_stream";
    has_extra |= entry.name == "extra" && entry.file == (dir / "extra.textproto").string();
  }
  EXPECT_EQ(nand_stream_entries, 1);
  EXPECT_TRUE(has_extra);
  unsetenv("ISPSIM_PLATFORM_PATH");
}

TEST(Loader, UnknownNameListsTheKnownOnes) {
  try {
    load_platform("no_such_platform");
    FAIL() << "no error";
  } catch (const ispsim::BadInput& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("no_such_platform: no platform of this name in ", 0), 0u) << what;
    EXPECT_NE(what.find("known: "), std::string::npos) << what;
    EXPECT_NE(what.find("nand_stream"), std::string::npos) << what;
  }
}

TEST(Loader, EveryPlatformInTheTreeLoads) {
  const auto platforms = ispsim::schema::list_platform_files();
  EXPECT_FALSE(platforms.empty());
  for (const auto& entry : platforms) {
    SCOPED_TRACE(entry.file);
    EXPECT_NO_THROW(load_platform_file(entry.file));
  }
}

// MemLLM's ablation keeps the total compute budget (Sec. VI-A): the centralized
// Elastic-SIMD of MemLLM-Base and -Fused has the MAC rate, static power and
// Stream Filter throughput of MemLLM-PerCh's per-channel accelerators together.
TEST(Loader, TheAblationKeepsTheComputeBudget) {
  const auto perch = load_platform("memllm_perch").platform;
  const double channels = perch.nand().channels();
  const auto mac_rate = [](const ispsim::schema::IspParams& i) {
    return double(i.pes()) * i.macs_per_pe_per_cycle() * i.clock_ghz();
  };
  for (const char* name : {"memllm_base", "memllm_fused"}) {
    SCOPED_TRACE(name);
    const auto central = load_platform(name).platform;
    ASSERT_EQ(central.ssd().organization(), ispsim::schema::SsdParams::CENTRALIZED);
    EXPECT_EQ(central.nand().channels(), perch.nand().channels());
    EXPECT_DOUBLE_EQ(mac_rate(central.isp()), channels * mac_rate(perch.isp()));
    EXPECT_DOUBLE_EQ(central.isp().static_power_w(), channels * perch.isp().static_power_w());
    EXPECT_DOUBLE_EQ(central.isp().stream_filter_tokens_per_cycle(),
                     channels * perch.isp().stream_filter_tokens_per_cycle());
    EXPECT_DOUBLE_EQ(central.isp().mac_pj(), perch.isp().mac_pj());
  }
}

// The studies' systems come from the platform files' group, in their tables' order.
TEST(Loader, AGroupListsItsPlatformsByRank) {
  using ispsim::schema::platforms_in_group;
  EXPECT_EQ(platforms_in_group("memllm_study"),
            (std::vector<std::string>{"gpu_fullcompute", "gpu_precompute", "instattention", "aif", "memllm_base",
                                      "memllm_fused", "memllm_perch", "memllm"}));
  EXPECT_EQ(platforms_in_group("paper1"), (std::vector<std::string>{"b1", "b2", "s1", "s2"}));
  EXPECT_TRUE(platforms_in_group("no_such_group").empty());
  std::map<std::pair<std::string, uint32_t>, std::string> seen;  // a rank is one platform's in its group
  for (const auto& entry : ispsim::schema::list_platform_files()) {
    const auto p = load_platform_file(entry.file).platform;
    if (p.group().empty()) continue;
    const auto [it, fresh] = seen.emplace(std::make_pair(p.group(), p.group_rank()), entry.name);
    EXPECT_TRUE(fresh) << entry.name << " and " << it->second << " share rank " << p.group_rank() << " in " << p.group();
  }
}

TEST(FieldText, NumbersPrintInShortestRoundTripForm) {
  using ispsim::schema::format_number;
  EXPECT_EQ(format_number(5), "5");
  EXPECT_EQ(format_number(0.001), "0.001");
  EXPECT_EQ(format_number(16384.0 / 2.4), "6826.666666666667");
  EXPECT_EQ(format_number(-1.5), "-1.5");
}

TEST(FieldText, PrintableEscapesControlCharactersOnly) {
  EXPECT_EQ(ispsim::schema::printable("a\nb\x1b\x7f"), "a\\nb\\x1b\\x7f");
  EXPECT_EQ(ispsim::schema::printable("5 \xc2\xb5s"), "5 \xc2\xb5s");  // UTF-8 passes
}

TEST(FieldText, ValuesAreParsedStrictly) {
  ispsim::schema::NandParams nand;
  const auto* d = nand.GetDescriptor();
  const auto set = [&](const char* field, const char* text) {
    return ispsim::schema::set_field_from_text(nand, *d->FindFieldByName(field), text);
  };
  EXPECT_FALSE(set("channels", "12"));
  EXPECT_EQ(nand.channels(), 12u);
  EXPECT_TRUE(set("channels", "-1"));          // no wrap-around to 4294967295
  EXPECT_TRUE(set("channels", "4294967296"));  // does not fit in 32 bits
  EXPECT_TRUE(set("channels", "12x"));
  EXPECT_TRUE(set("channels", "1.5"));
  EXPECT_TRUE(set("channels", ""));
  EXPECT_EQ(nand.channels(), 12u);
  EXPECT_FALSE(set("t_read_us", "2.5e1"));
  EXPECT_EQ(nand.t_read_us(), 25.0);
  EXPECT_TRUE(set("t_read_us", "nan"));
  EXPECT_TRUE(set("t_read_us", "inf"));
  EXPECT_TRUE(set("t_read_us", " 3"));
  EXPECT_FALSE(set("cache_read", "false"));
  EXPECT_FALSE(nand.cache_read());
  EXPECT_TRUE(set("cache_read", "yes"));
  EXPECT_EQ(*set("channels", "abc"), "'abc' is not a non-negative integer (32-bit) (channels)");
}

TEST(ParameterTable, AlignsColumnsAndLeavesTheLastOneUnpadded) {
  EXPECT_EQ(ispsim::schema::aligned_table({{"A", "BB", "C"}, {"long", "x", "tail text"}, {"", "", ""}}),
            "A     BB  C\n"
            "long  x   tail text\n"
            "\n");
}

TEST(ParameterTable, ListsFullPathsInSchemaOrder) {
  const auto rows = ispsim::schema::parameter_rows(*Platform::descriptor(), nullptr);
  ASSERT_GE(rows.size(), 10u);
  EXPECT_EQ(rows[0].path, "name");
  EXPECT_EQ(rows[1].path, "description");
  EXPECT_EQ(rows[2].path, "program");
  EXPECT_EQ(rows[3].path, "group");
  EXPECT_EQ(rows[4].path, "group_rank");
  EXPECT_EQ(rows[5].path, "host_preset");
  EXPECT_EQ(rows[6].path, "ssd_preset");
  EXPECT_EQ(rows[7].path, "modules.isp_accelerator");
  EXPECT_EQ(rows[8].path, "nand.channels");
  EXPECT_EQ(rows.back().path, "cim.bus.energy_pj_per_bit");  // cim = 17, the last group
}

}  // namespace
