// Looks at a waveform as a person would: runs the demo's `ispsim run ... --vcd`,
// opens the view it wrote beside it (`gtkwave X.gtkw`) in a real GTKWave under
// Xvfb, takes a screenshot, and has GTKWave report through its Tcl interface
// (gtkwave_view_report.tcl) what it shows: the groups, the time window, the
// named markers, and the value it displays for every signal at a few times,
// which must be the VCD's value named through the filter files.
//
// Needs Xvfb, gtkwave, xwd and netpbm (tools/setup.sh installs them); if one
// is missing or Xvfb cannot start, the test fails with a one-line reason. The
// screenshot is left in the scratch directory (printed) as view.png.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/cli.h"
#include "tests/support/files.h"
#include "tests/support/vcd_check.h"

namespace ispsim::testing {
namespace {

namespace fs = std::filesystem;

// An X server of this test's own on a free display, stopped at the end.
class Xvfb {
 public:
  Xvfb() {
    int fds[2];
    if (::pipe(fds) != 0) {
      error_ = "cannot create a pipe for Xvfb";
      return;
    }
    const std::string fd = std::to_string(fds[1]);
    std::vector<std::string> args = {"Xvfb", "-displayfd", fd, "-screen", "0", "1300x820x24", "-nolisten", "tcp"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    const int spawned = ::posix_spawnp(&pid_, "Xvfb", &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    if (spawned != 0) {
      ::close(fds[0]);
      pid_ = -1;
      error_ = "Xvfb cannot start: not installed (bash tools/setup.sh installs xvfb)";
      return;
    }
    // Xvfb writes its display number and a newline, in separate writes, once it
    // accepts connections; the pipe stays open while it runs (a write into a
    // closed pipe would stop it).
    display_fd_ = fds[0];
    std::string number;
    pollfd ready{display_fd_, POLLIN, 0};
    char c;
    while (::poll(&ready, 1, 20000) == 1 && ::read(display_fd_, &c, 1) == 1 && c != '\n') number += c;
    if (!number.empty() && c == '\n') {
      display_ = ":" + number;
    } else {
      error_ = "Xvfb cannot start: it gave no display number within 20 s";
    }
  }
  ~Xvfb() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
    }
    if (display_fd_ >= 0) ::close(display_fd_);
  }
  const std::string& display() const { return display_; }
  const std::string& error() const { return error_; }

 private:
  pid_t pid_ = -1;
  int display_fd_ = -1;
  std::string display_;
  std::string error_;
};

// One displayed signal of the save file: the alias GTKWave shows, the VCD
// name, and its filter file ("" = a number).
struct Shown {
  std::string vcd_name;
  std::string filter;
};

std::map<std::string, Shown> shown_signals(const std::string& gtkw) {
  std::map<std::string, Shown> shown;
  std::istringstream in(read_text(gtkw));
  std::string filter;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("^", 0) == 0) {
      filter = line.substr(line.find(' ') + 1);
    } else if (line.rfind("@", 0) == 0) {
      filter.clear();
    } else if (line.rfind("+{", 0) == 0) {
      const size_t close = line.find("} ");
      const std::string alias = line.substr(2, close - 2);
      std::string facility = line.substr(close + 2);
      facility = facility.substr(0, facility.find('['));
      shown[alias] = {facility, filter};
    }
  }
  return shown;
}

std::map<std::string, std::string> read_filter(const fs::path& path) {
  std::map<std::string, std::string> names;
  std::istringstream in(read_text(path));
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.find(' ');
    names[line.substr(0, space)] = line.substr(space + 1);
  }
  return names;
}

// The value of every signal at `t` (the last change at or before it), binary.
std::map<std::string, std::string> values_at(const VcdContent& vcd, uint64_t t) {
  std::map<std::string, std::string> now;
  for (const auto& [time, changes] : vcd.values) {
    if (time > t) break;
    for (const auto& [name, value] : changes) now[name] = value;
  }
  return now;
}

struct Report {
  std::string dump;
  uint64_t window_begin = 0, window_end = 0;
  std::map<std::string, uint64_t> markers;
  size_t displayed = 0;
  std::vector<std::pair<uint64_t, std::string>> traces;       // flags, name
  std::map<std::pair<uint64_t, std::string>, std::string> values;  // (time, alias) -> shown value
};

Report read_report(const fs::path& path) {
  Report r;
  std::istringstream in(read_text(path));
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string what;
    words >> what;
    if (what == "dump") {
      words >> r.dump;
    } else if (what == "window") {
      words >> r.window_begin >> r.window_end;
    } else if (what == "marker") {
      std::string letter;
      uint64_t at;
      words >> letter >> at;
      r.markers[letter] = at;
    } else if (what == "displayed") {
      words >> r.displayed;
    } else if (what == "trace") {
      uint64_t flags;
      words >> flags >> std::ws;
      std::string name;
      std::getline(words, name);
      r.traces.push_back({flags, name});
    } else if (what == "value") {
      uint64_t at;
      std::string alias, value;
      words >> at >> alias >> value;
      r.values[{at, alias}] = value;
    }
  }
  return r;
}

std::string decimal(const std::string& binary) { return std::to_string(std::stoull(binary, nullptr, 2)); }

// Opens `gtkw` in GTKWave under Xvfb with the report script; returns the report.
Report look_at(const fs::path& dir, const fs::path& gtkw, const std::vector<uint64_t>& times) {
  Xvfb x;
  if (!x.error().empty()) {
    ADD_FAILURE() << x.error();
    return {};
  }
  std::string time_list;
  for (uint64_t t : times) time_list += std::to_string(t) + " ";
  const fs::path report = dir / "report.txt", shot = dir / "view.xwd", png = dir / "view.png";
  const std::string command = "DISPLAY=" + x.display() + " ISPSIM_GTKWAVE_REPORT=" + shell_quote(report.string()) +
                              " ISPSIM_GTKWAVE_SHOT=" + shell_quote(shot.string()) + " ISPSIM_GTKWAVE_TIMES=" +
                              shell_quote(time_list) + " timeout 120 gtkwave -S " +
                              shell_quote(std::string(ISPSIM_SOURCE_DIR) + "/tests/tools/gtkwave_view_report.tcl") +
                              " " + shell_quote(gtkw.string()) + " >" + shell_quote((dir / "gtkwave.log").string()) +
                              " 2>&1";
  const int rc = run_command(command);
  if (rc == 127) ADD_FAILURE() << "gtkwave not found (bash tools/setup.sh installs it)";
  EXPECT_EQ(rc, 0) << "gtkwave failed; its output: " << read_text(dir / "gtkwave.log");
  EXPECT_EQ(run_command("xwdtopnm " + shell_quote(shot.string()) + " 2>/dev/null | pnmcrop 2>/dev/null | pnmtopng >" +
                        shell_quote(png.string()) + " 2>/dev/null"),
            0)
      << "cannot turn the screenshot into a PNG (xwd and netpbm: bash tools/setup.sh)";
  EXPECT_GT(fs::exists(png) ? fs::file_size(png) : 0, 10000u) << "no screenshot of the view";
  std::cout << "screenshot: " << png.string() << "\n";
  return read_report(report);
}

// Every value GTKWave shows is the VCD's, named through the filter files;
// returns how often each shown value was seen.
std::map<std::string, int> expect_values_named(const Report& report, const fs::path& dir, const fs::path& vcd,
                                               const fs::path& gtkw, const std::vector<uint64_t>& times) {
  const VcdContent content = parse_vcd_file(vcd.string());
  const std::map<std::string, Shown> shown = shown_signals(gtkw.string());
  std::map<std::string, int> seen;
  for (uint64_t t : times) {
    const auto now = values_at(content, t);
    for (const auto& [alias, signal] : shown) {
      const auto it = report.values.find({t, alias});
      if (it == report.values.end()) continue;  // in a closed group
      if (!now.count(signal.vcd_name)) {
        ADD_FAILURE() << "the view shows " << signal.vcd_name << ", which the VCD does not have";
        continue;
      }
      std::string expected = decimal(now.at(signal.vcd_name));
      if (!signal.filter.empty()) {
        const auto names = read_filter(dir / signal.filter);
        if (names.count(expected)) expected = names.at(expected);
      }
      EXPECT_EQ(it->second, expected) << alias << " at " << t << " ps";
      ++seen[it->second];
    }
  }
  return seen;
}

std::vector<std::string> group_titles(const Report& report) {
  std::vector<std::string> titles;
  for (const auto& [flags, name] : report.traces)
    if (flags & 0x800000) titles.push_back(name);  // group begin
  return titles;
}

TEST(GtkwaveView, DemoWaveformOpensGroupedNamedAndZoomed) {
  const fs::path dir = scratch_dir() / "demo";
  fs::create_directories(dir);
  const fs::path vcd = dir / "nand_pipelined.vcd", gtkw = dir / "nand_pipelined.gtkw";
  // The demo's command (tools/demo.sh).
  const CliResult run = run_cli(
      "run --platform nand_stream --trace traces/samples/nand_stream.trace --set stream.read_mode=PIPELINED "
      "--vcd " + shell_quote(vcd.string()) + " --vcd-window 0us:200us");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const VcdContent content = parse_vcd_file(vcd.string());
  const uint64_t end = content.end_time;
  const std::vector<uint64_t> times = {end / 9 + 1, 2 * end / 9 + 1, 3 * end / 9 + 1, 5 * end / 9 + 1, 8 * end / 9 + 1};

  const Report report = look_at(dir, gtkw, times);
  EXPECT_EQ(report.dump, vcd.string());
  EXPECT_EQ(report.displayed, content.widths.size()) << "every signal of the VCD is in the view";
  EXPECT_EQ(group_titles(report), (std::vector<std::string>{"channel 0", "channel 1", "channel 2", "channel 3",
                                                            "channel 4", "channel 5", "channel 6", "channel 7"}));
  // The whole run is on screen, and little else.
  EXPECT_EQ(report.window_begin, 0u);
  EXPECT_GE(report.window_end, end);
  EXPECT_LE(report.window_end, end + end / 10);
  // A named marker where the first load begins.
  EXPECT_EQ(report.markers.count("A"), 1u);
  const std::map<std::string, int> seen = expect_values_named(report, dir, vcd, gtkw, times);
  // The filters were used: die states and channel owners read by name.
  EXPECT_GT(seen.count("sense") + seen.count("sense+transfer") + seen.count("holding"), 0u);
  EXPECT_GT(seen.count("transfer") + seen.count("sense+transfer"), 0u);
  EXPECT_GT(seen.count("die0") + seen.count("die1") + seen.count("die2") + seen.count("die3"), 0u);
  size_t compared = 0;
  for (const auto& [value, n] : seen) compared += n;
  EXPECT_GE(compared, times.size() * 14) << "channels 0 and 1 (open groups) are all compared";
}

TEST(GtkwaveView, FstViewOpens) {
  const fs::path dir = scratch_dir() / "fst";
  fs::create_directories(dir);
  const fs::path fst = dir / "w.fst", gtkw = dir / "w.gtkw";
  const CliResult run = run_cli(
      "run --platform nand_stream --trace traces/samples/nand_stream.trace --vcd " + shell_quote(fst.string()) +
      " --vcd-filter dies,channels --vcd-window 0us:50us");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const Report report = look_at(dir, gtkw, {20000001});
  EXPECT_EQ(report.dump, fst.string());
  EXPECT_EQ(report.displayed, 8u * 6u) << "8 channels x (busy, owner, 4 dies)";
  size_t named = 0;
  for (const auto& [key, value] : report.values) named += value == "idle" || value == "sense" || value == "holding" ||
                                                          value == "transfer" || value == "sense+transfer" ||
                                                          value == "free" || value.rfind("die", 0) == 0;
  EXPECT_GE(named, 10u) << "die states and owners read by name";
}

}  // namespace
}  // namespace ispsim::testing
