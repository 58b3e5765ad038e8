// `ispsim run --vcd`: the GTKWave view and filter files beside every waveform,
// --vcd-filter by role, FST output, and bad waveform options.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/support/cli.h"
#include "tests/support/vcd_check.h"

namespace ispsim::testing {
namespace {

namespace fs = std::filesystem;

const std::string kDemo = "run --platform nand_stream --trace traces/samples/nand_stream.trace";

std::string out_path(const std::string& name) { return (scratch_dir() / name).string(); }

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A bad invocation: exit code 2, one stderr line holding `needle`, no file written.
void expect_bad(const std::string& args, const std::string& needle, const std::string& env = "") {
  const CliResult r = run_cli(args, env);
  EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
  EXPECT_EQ(r.err_lines(), 1) << r.err;
  EXPECT_TRUE(has(r.err, needle)) << r.err;
  for (const auto& entry : fs::directory_iterator(scratch_dir())) ADD_FAILURE() << "left behind: " << entry.path();
}

TEST(WaveformCli, EveryVcdGetsItsViewAndFilters) {
  const std::string vcd = out_path("demo.vcd");
  const CliResult r = run_cli(kDemo + " --vcd " + shell_quote(vcd) + " --vcd-window 0us:200us");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "(open the ready view: gtkwave " + out_path("demo.gtkw") + ")")) << r.out;
  const std::string view = read_text(out_path("demo.gtkw"));
  EXPECT_TRUE(has(view, "[dumpfile] \"demo.vcd\"\n")) << view;
  EXPECT_TRUE(has(view, "-channel 0\n"));
  EXPECT_TRUE(has(view, "-channel 7\n"));
  EXPECT_TRUE(has(view, "^1 demo.channel_owner.filter\n+{ssd/nand/ch0/owner} ssd.nand.ch0.owner[5:0]\n")) << view;
  EXPECT_TRUE(has(view, "^2 demo.die_state.filter\n+{ssd/nand/ch0/die0/state} ssd.nand.ch0.die0.state[3:0]\n")) << view;
  EXPECT_TRUE(has(view, "[markername] Aload 0\n")) << view;
  EXPECT_TRUE(has(read_text(out_path("demo.die_state.filter")), "\n1 sense\n"));
  EXPECT_TRUE(has(read_text(out_path("demo.channel_owner.filter")), "\n0 free\n1 die0\n"));
  expect_vcd_valid(vcd);
}

TEST(WaveformCli, MemllmViewHasTheModulesAndPhaseMarkers) {
  const std::string vcd = out_path("memllm.vcd");
  const CliResult r = run_cli("run --platform memllm --trace traces/samples/blend_small.trace --vcd " + shell_quote(vcd) +
                              " --vcd-filter host,pcie,controller,coordinator,simd,'*.ch0.*'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string view = read_text(out_path("memllm.gtkw"));
  size_t at = 0;
  for (const char* group : {"-host\n", "-PCIe\n", "-controller\n", "-coordinator\n", "-channel 0\n", "-channel 7\n"}) {
    const size_t found = view.find(group, at);
    EXPECT_NE(found, std::string::npos) << group << " (in this order)\n" << view;
    if (found != std::string::npos) at = found;
  }
  EXPECT_TRUE(has(view, "+{system/ssd/attention/ch0/simd_mode} system.ssd.attention.ch0.simd_mode[1:0]\n")) << view;
  EXPECT_TRUE(has(view, "+{system/ssd/attention/reduction/outstanding}")) << view;
  EXPECT_TRUE(has(view, "[markername] AHKVD identification\n")) << view;
  EXPECT_TRUE(has(view, "fused prefill\n")) << view;
  EXPECT_TRUE(has(view, "decode step 0\n")) << view;
  EXPECT_TRUE(has(view, "decode step 3\n")) << view;
  EXPECT_EQ(read_text(out_path("memllm.simd_mode.filter")),
            "# ispsim simd_mode: GTKWave translate filter (decimal value, name)\n0 idle\n1 broadside\n2 cascaded\n");
  const VcdContent content = parse_vcd_file(vcd);
  EXPECT_EQ(content.widths.count("system.ssd.flash.ch1.die0.state"), 0u) << "dies only of channel 0 (by the glob)";
  EXPECT_EQ(content.widths.count("system.ssd.flash.ch0.die0.state"), 1u);
  EXPECT_EQ(content.widths.count("system.ssd.attention.ch5.simd_mode"), 1u) << "every SIMD (by the role)";
}

// The value of statistic `name` in a --stats CSV file (-1: absent).
double stat(const std::string& csv, const std::string& name) {
  const std::string text = read_text(csv);
  const size_t at = text.find("\n" + name + ",");
  return at == std::string::npos ? -1 : std::stod(text.substr(at + name.size() + 2));
}

// Aggregated streams have no die or channel events to draw: with --vcd the
// streams run page by page, unless --set chooses the stream model.
TEST(WaveformCli, AWaveformRunsTheStreamsPageByPageUnlessTheModelIsSet) {
  const std::string base = "run --platform memllm --trace traces/samples/blend_small.trace --vcd-filter dies";
  const std::string vcd = out_path("w.vcd"), csv = out_path("w.csv");
  CliResult r = run_cli(base + " --vcd " + shell_quote(vcd) + " --stats " + shell_quote(csv));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(stat(csv, "system.ssd.attention.aggregated_passes"), 0);
  EXPECT_GT(stat(csv, "system.ssd.attention.reader.streams"), 0);
  r = run_cli(base + " --vcd " + shell_quote(vcd) + " --stats " + shell_quote(csv) +
              " --set ssd.stream_model=AGGREGATED");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(stat(csv, "system.ssd.attention.aggregated_passes"), 0);
  r = run_cli("run --platform memllm --trace traces/samples/blend_small.trace --stats " + shell_quote(csv));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(stat(csv, "system.ssd.attention.aggregated_passes"), 0) << "AGGREGATED by default without --vcd";
}

TEST(WaveformCli, FilterByRole) {
  const std::string vcd = out_path("dies.vcd");
  ASSERT_EQ(run_cli(kDemo + " --vcd " + shell_quote(vcd) + " --vcd-filter dies --vcd-window 0us:20us").exit_code, 0);
  const VcdContent content = parse_vcd_file(vcd);
  EXPECT_EQ(content.widths.size(), 32u) << "8 channels x 4 dies";
  for (const auto& [name, width] : content.widths) EXPECT_TRUE(has(name, ".state")) << name;
}

TEST(WaveformCli, FstOutput) {
  const std::string fst = out_path("w.fst");
  const CliResult r = run_cli(kDemo + " --vcd " + shell_quote(fst) + " --vcd-window 0us:20us");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(file_exists(fst));
  EXPECT_EQ(run_command("fst2vcd " + shell_quote(fst) + " >/dev/null 2>&1"), 0);
  EXPECT_TRUE(has(read_text(out_path("w.gtkw")), "[dumpfile] \"w.fst\"\n"));
  EXPECT_FALSE(file_exists(out_path("w.vcd")));
}

TEST(WaveformCli, BadWaveformOptions) {
  expect_bad(kDemo + " --vcd " + shell_quote(out_path("w.vcd")) + " --vcd-filter dies,disks",
             "--vcd-filter: unknown role 'disks' (known roles: host, pcie, controller, coordinator, channels, dies, "
             "scratchpad, simd; or a glob such as '*.ch0.*')");
  expect_bad(kDemo + " --vcd " + shell_quote(out_path("w.txt")), "w.txt: waveform file must end in .vcd or .fst");
  expect_bad(kDemo + " --vcd " + shell_quote(out_path("missing/w.vcd")), "missing/w.");
  expect_bad(kDemo + " --vcd-filter dies", "need --vcd FILE");
  // FST without GTKWave's vcd2fst on PATH is refused before the run.
  expect_bad(kDemo + " --vcd " + shell_quote(out_path("w.fst")), "FST output needs GTKWave's vcd2fst",
             "PATH=" + shell_quote(out_path("no-tools")));
}

}  // namespace
}  // namespace ispsim::testing
