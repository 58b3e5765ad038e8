// The GTKWave view beside every waveform (vcd_view.h), --vcd-filter roles and
// FST output (vcd.h). GTKWave itself reading the view: tests/tools/gtkwave_view_test.sh.
#include "models/core/vcd_view.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <stdexcept>
#include <systemc>
#include <vector>

#include "common/error.h"
#include "models/core/vcd.h"
#include "tests/support/files.h"
#include "tests/support/vcd_check.h"

namespace ispsim::vcd {
namespace {

using sc_core::SC_NS;
using sc_core::sc_time;
using ispsim::testing::file_exists;
using ispsim::testing::read_text;

std::string temp_path(const std::string& name) { return ::testing::TempDir() + "/core_vcd_view_" + name; }

const Encoding kState{"unit_state", {{0, "idle"}, {1, "sense"}, {2, "transfer"}}};

// A tiny system: a host counter, a PCIe counter, channel 0 with a bus and a
// die, channel 1 with a die. Every signal changes once, at 10 ns.
class Tiny : public sc_core::sc_module {
 public:
  Signal host, pcie, busy0, die0, die1;

  explicit Tiny(sc_core::sc_module_name name) : sc_module(name) {
    SC_HAS_PROCESS(Tiny);
    SC_THREAD(drive);
  }
  void trace(Writer& w) {
    const std::string n = name();
    w.add(n + ".gpu.outstanding", 16, host, {Role::kHost});
    w.add(n + ".pcie.h2d.outstanding", 16, pcie, {Role::kPcie});
    w.add(n + ".flash.ch1.die0.state", 3, die1, {Role::kDie, 1, &kState});
    w.add(n + ".flash.ch0.die0.state", 3, die0, {Role::kDie, 0, &kState});
    w.add(n + ".flash.ch0.busy", 1, busy0, {Role::kChannel, 0});
  }

 private:
  void drive() {
    wait(10, SC_NS);
    host.set(2);
    pcie.set(1);
    busy0.set(1);
    die0.set(1);
    die1.set(2);
  }
};

// Runs Tiny for 100 ns into `opts` and closes with `markers`.
void run_tiny(const Options& opts, const std::vector<Marker>& markers = {}) {
  Tiny tiny("sys");
  Writer writer(opts);
  tiny.trace(writer);
  sc_core::sc_start(sc_time(100, SC_NS));
  writer.close(markers);
}

// GTKWave's zoom that shows `span_ps` in `wave_px` pixels, with 3 % to spare.
std::string zoom_text(double span_ps, int wave_px) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6f", -std::log2(span_ps * 200.0 / (0.97 * (wave_px - 4))));
  return text;
}

std::string unset_markers(int n) {
  std::string text;
  for (int i = 0; i < n; ++i) text += " -1";
  return text;
}

TEST(VcdView, SaveFileGroupsFiltersZoomAndMarkers) {
  Options opts;
  opts.path = temp_path("tiny.vcd");
  run_tiny(opts, {{10000, "step one"}, {0, "start"}});
  // Signal list: longest name "sys.pcie.h2d.outstanding" (24 chars) -> 8 * 24 + 90 = 282 px;
  // wave area 1280 - 282 - 64 = 934 px for the 100 ns run.
  const std::string expected =
      "[*] ispsim waveform view: gtkwave core_vcd_view_tiny.gtkw\n"
      "[*] 5 signals in 4 groups; times in ps\n"
      "[dumpfile] \"core_vcd_view_tiny.vcd\"\n"
      "[savefile] \"core_vcd_view_tiny.gtkw\"\n"
      "[timestart] 0\n"
      "[size] 1280 760\n"
      "[pos] -1 -1\n"
      "*" + zoom_text(100000, 934) + " -1 0 10000" + unset_markers(24) + "\n"
      "[markername] Astart\n"
      "[markername] Bstep one\n"
      "[sst_expanded] 0\n"
      "[signals_width] 282\n"
      "@800200\n-host\n@4\n+{sys/gpu/outstanding} sys.gpu.outstanding[15:0]\n@1000200\n-host\n"
      "@800200\n-PCIe\n@4\n+{sys/pcie/h2d/outstanding} sys.pcie.h2d.outstanding[15:0]\n@1000200\n-PCIe\n"
      "@800200\n-channel 0\n@8\n+{sys/flash/ch0/busy} sys.flash.ch0.busy\n"
      "@2004\n^1 core_vcd_view_tiny.unit_state.filter\n+{sys/flash/ch0/die0/state} sys.flash.ch0.die0.state[2:0]\n"
      "@1000200\n-channel 0\n"
      "@800200\n-channel 1\n@2004\n^1 core_vcd_view_tiny.unit_state.filter\n"
      "+{sys/flash/ch1/die0/state} sys.flash.ch1.die0.state[2:0]\n@1000200\n-channel 1\n";
  EXPECT_EQ(read_text(temp_path("tiny.gtkw")), expected);
  EXPECT_EQ(read_text(temp_path("tiny.unit_state.filter")),
            "# ispsim unit_state: GTKWave translate filter (decimal value, name)\n0 idle\n1 sense\n2 transfer\n");
  ispsim::testing::expect_vcd_valid(opts.path);
}

TEST(VcdView, MarkersOutsideTheWindowAndBeyondTwentySixAreLeftOut) {
  View view;
  view.dump_path = "w.vcd";
  view.begin_ps = 1000;
  view.end_ps = 100000;
  view.markers.push_back({999, "before"});
  view.markers.push_back({100001, "after"});
  for (uint64_t i = 0; i < 30; ++i) view.markers.push_back({2000 + 100 * (29 - i), "m" + std::to_string(29 - i)});
  std::ostringstream out;
  write_view(out, view);
  const std::string text = out.str();
  EXPECT_NE(text.find("[*] 4 later markers left out (GTKWave has 26)\n"), std::string::npos);
  EXPECT_NE(text.find("[timestart] 1000\n"), std::string::npos);
  EXPECT_NE(text.find("[markername] Am0\n"), std::string::npos);
  EXPECT_NE(text.find("[markername] Zm25\n"), std::string::npos);
  EXPECT_EQ(text.find("m26"), std::string::npos);
  EXPECT_EQ(text.find("before"), std::string::npos);
  EXPECT_EQ(text.find("after"), std::string::npos);
}

TEST(VcdView, CrowdedViewsCloseChannelGroupsFromTheThirdOn) {
  View view;
  view.dump_path = "w.vcd";
  view.end_ps = 1000;
  for (int c = 0; c < 8; ++c)
    for (int d = 0; d < 4; ++d)
      view.signals.push_back({"s.ch" + std::to_string(c) + ".die" + std::to_string(d) + ".state", 3, Role::kDie, c, ""});
  std::ostringstream out;
  write_view(out, view);
  const std::string text = out.str();
  EXPECT_NE(text.find("@800200\n-channel 1\n"), std::string::npos);
  EXPECT_NE(text.find("@c00200\n-channel 2\n"), std::string::npos);
  EXPECT_NE(text.find("@1401200\n-channel 7\n"), std::string::npos);
}

TEST(VcdView, GroupsFollowRolesAndChannels) {
  EXPECT_EQ(group_of({"a.b", 1, Role::kHost, -1, ""}), "host");
  EXPECT_EQ(group_of({"a.b", 1, Role::kPcie, -1, ""}), "PCIe");
  EXPECT_EQ(group_of({"a.b", 1, Role::kController, -1, ""}), "controller");
  EXPECT_EQ(group_of({"a.b", 1, Role::kSimd, -1, ""}), "controller");  // centralized
  EXPECT_EQ(group_of({"a.b", 1, Role::kCoordinator, -1, ""}), "coordinator");
  EXPECT_EQ(group_of({"a.b", 1, Role::kSimd, 3, ""}), "channel 3");
  EXPECT_EQ(group_of({"a.b", 1, Role::kDie, -1, ""}), "flash");
  EXPECT_EQ(group_of({"a.b", 1, Role::kOther, -1, ""}), "other");
  EXPECT_EQ(view_path("out/x.y/run.vcd"), "out/x.y/run.gtkw");
  EXPECT_EQ(view_path("run.fst"), "run.gtkw");
  EXPECT_EQ(filter_path("out/run.vcd", "die_state"), "out/run.die_state.filter");
}

TEST(VcdFilter, RolesAndGlobs) {
  Options opts;
  add_filter("dies,simd", "--vcd-filter", opts);
  add_filter("*.ch0.*,pcie", "--vcd-filter", opts);
  add_filter("system.gpu.stream.outstanding", "--vcd-filter", opts);
  EXPECT_EQ(opts.roles, (std::vector<Role>{Role::kDie, Role::kSimd, Role::kPcie}));
  EXPECT_EQ(opts.filters, (std::vector<std::string>{"*.ch0.*", "system.gpu.stream.outstanding"}));
}

TEST(VcdFilter, UnknownRoleListsTheKnownOnes) {
  Options opts;
  try {
    add_filter("dies,disks", "--vcd-filter", opts);
    FAIL() << "no error";
  } catch (const BadInput& e) {
    EXPECT_EQ(std::string(e.what()),
              "--vcd-filter: unknown role 'disks' (known roles: host, pcie, controller, coordinator, channels, dies, "
              "scratchpad, simd; or a glob such as '*.ch0.*')");
  }
  EXPECT_THROW(add_filter("dies,", "--vcd-filter", opts), BadInput);
  EXPECT_THROW(add_filter(",dies", "--vcd-filter", opts), BadInput);
  EXPECT_THROW(add_filter("", "--vcd-filter", opts), BadInput);
}

TEST(VcdFilter, RolesSelectSignals) {
  Options opts;
  opts.path = temp_path("roles.vcd");
  add_filter("dies,host", "--vcd-filter", opts);
  run_tiny(opts);
  const auto content = ispsim::testing::parse_vcd_file(opts.path);
  std::vector<std::string> names;
  for (const auto& [name, width] : content.widths) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"sys.flash.ch0.die0.state", "sys.flash.ch1.die0.state",
                                             "sys.gpu.outstanding"}));
}

TEST(VcdFilter, GlobOrRole) {
  Options opts;
  opts.path = temp_path("glob_or_role.vcd");
  add_filter("pcie,*.ch1.*", "--vcd-filter", opts);
  run_tiny(opts);
  const auto content = ispsim::testing::parse_vcd_file(opts.path);
  EXPECT_EQ(content.widths.size(), 2u);
  EXPECT_EQ(content.widths.count("sys.pcie.h2d.outstanding"), 1u);
  EXPECT_EQ(content.widths.count("sys.flash.ch1.die0.state"), 1u);
}

TEST(VcdOutput, PathMustEndInVcdOrFst) {
  Options opts;
  opts.path = temp_path("wave.txt");
  try {
    Writer w(opts);
    FAIL() << "no error";
  } catch (const BadInput& e) {
    EXPECT_EQ(std::string(e.what()), opts.path + ": waveform file must end in .vcd or .fst");
  }
}

TEST(VcdOutput, NothingIsLeftWithoutClose) {
  Options opts;
  opts.path = temp_path("unclosed.vcd");
  {
    Tiny tiny("sys");
    Writer writer(opts);
    tiny.trace(writer);
    sc_core::sc_start(sc_time(20, SC_NS));
  }
  EXPECT_FALSE(file_exists(opts.path));
  EXPECT_FALSE(file_exists(temp_path("unclosed.gtkw")));
  EXPECT_FALSE(file_exists(temp_path("unclosed.unit_state.filter")));
  for (const auto& entry : std::filesystem::directory_iterator(::testing::TempDir()))
    EXPECT_EQ(entry.path().filename().string().find("core_vcd_view_unclosed"), std::string::npos) << entry.path();
}

TEST(VcdOutput, FstThroughVcd2fst) {
  Options opts;
  opts.path = temp_path("wave.fst");
  run_tiny(opts);
  ASSERT_TRUE(file_exists(opts.path));
  EXPECT_EQ(read_text(opts.path).substr(0, 1), std::string(1, '\0'));  // an FST header block, not VCD text
  const std::string back = temp_path("wave_back.vcd");
  ASSERT_EQ(ispsim::testing::run_command("fst2vcd '" + opts.path + "' > '" + back + "' 2>/dev/null"), 0);
  const auto content = ispsim::testing::parse_vcd_file(back);
  EXPECT_TRUE(content.errors.empty());
  EXPECT_EQ(content.widths, (std::map<std::string, unsigned>{{"sys.flash.ch0.busy", 1},
                                                             {"sys.flash.ch0.die0.state", 3},
                                                             {"sys.flash.ch1.die0.state", 3},
                                                             {"sys.gpu.outstanding", 16},
                                                             {"sys.pcie.h2d.outstanding", 16}}));
  EXPECT_EQ(content.values.at(10000), (std::map<std::string, std::string>{{"sys.flash.ch0.busy", "1"},
                                                                          {"sys.flash.ch0.die0.state", "1"},
                                                                          {"sys.flash.ch1.die0.state", "10"},
                                                                          {"sys.gpu.outstanding", "10"},
                                                                          {"sys.pcie.h2d.outstanding", "1"}}));
  EXPECT_EQ(content.end_time, 100000u);
  EXPECT_NE(read_text(temp_path("wave.gtkw")).find("[dumpfile] \"core_vcd_view_wave.fst\"\n"), std::string::npos);
  // Only the three outputs are left: no scratch VCD text, no conversion file.
  for (const auto& entry : std::filesystem::directory_iterator(::testing::TempDir())) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("core_vcd_view_wave.", 0) == 0) {
      EXPECT_TRUE(name == "core_vcd_view_wave.fst" || name == "core_vcd_view_wave.gtkw" ||
                  name == "core_vcd_view_wave.unit_state.filter")
          << name;
    }
  }
}

TEST(VcdOutput, FstWithoutVcd2fstIsRejected) {
  const std::string empty_dir = temp_path("no_tools");
  std::filesystem::create_directories(empty_dir);
  ::setenv("PATH", empty_dir.c_str(), 1);
  Options opts;
  opts.path = temp_path("refused.fst");
  try {
    Writer w(opts);
    FAIL() << "no error";
  } catch (const BadInput& e) {
    EXPECT_EQ(std::string(e.what()), opts.path +
                                         ": FST output needs GTKWave's vcd2fst, which is not on PATH (Debian package "
                                         "gtkwave); write a .vcd instead");
  }
  EXPECT_FALSE(file_exists(opts.path));
}

TEST(VcdOutput, EncodingsAreChecked) {
  Options opts;
  opts.path = temp_path("encodings.vcd");
  Writer writer(opts);
  Signal a, b, c;
  const Encoding bad_name{"Die State", {{0, "idle"}}};
  const Encoding spaced{"ok", {{0, "two words"}}};
  const Encoding other_state{"unit_state", {{0, "off"}}};
  EXPECT_THROW(writer.add("x.a", 2, a, {Role::kDie, 0, &bad_name}), std::logic_error);
  EXPECT_THROW(writer.add("x.b", 2, b, {Role::kDie, 0, &spaced}), std::logic_error);
  EXPECT_TRUE(writer.add("x.c", 2, c, {Role::kDie, 0, &kState}));
  Signal d;
  EXPECT_THROW(writer.add("x.d", 2, d, {Role::kDie, 0, &other_state}), std::logic_error);
  EXPECT_EQ(kState.name_of(2), "transfer");
  EXPECT_EQ(kState.name_of(7), "7");
}

}  // namespace
}  // namespace ispsim::vcd
