// SIGINT, SIGTERM and SIGHUP: a run ends with one line and exit code
// 128 + signal, removes its partial outputs, keeps nothing half-written; compare
// forwards the signal to its children and reaps them; a child never outlives
// its parent (PR_SET_PDEATHSIG), and nothing is left in TMPDIR, not even after
// a SIGKILL of the parent (the children's results travel through memfds).
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/cli.h"

namespace fs = std::filesystem;
using ispsim::testing::read_text;

namespace {

// Starts `ispsim args...` in the source tree with stderr to `err` and TMPDIR=`tmp`.
pid_t start(const std::vector<std::string>& args, const fs::path& err, const fs::path& tmp) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  if (::chdir(ISPSIM_SOURCE_DIR) != 0) ::_exit(127);
  ::setenv("TMPDIR", tmp.c_str(), 1);
  const int fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ::dup2(fd, STDERR_FILENO);
  const int null = ::open("/dev/null", O_RDWR);
  ::dup2(null, STDOUT_FILENO);
  ::dup2(null, STDIN_FILENO);
  std::vector<char*> argv = {const_cast<char*>(ISPSIM_CLI)};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execv(ISPSIM_CLI, argv.data());
  ::_exit(127);
}

// Waits (up to 60 s) until some file in `dir` has `part` in its name.
bool wait_for_file(const fs::path& dir, const std::string& part) {
  for (int i = 0; i < 6000; ++i) {
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().filename().string().find(part) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

int exit_code(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

// Processes (other than the test) whose command line mentions `marker`.
int processes_mentioning(const std::string& marker) {
  int n = 0;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos || std::stoi(name) == ::getpid()) continue;
    std::string cmdline = read_text(e.path() / "cmdline");
    for (char& c : cmdline) if (c == '\0') c = ' ';
    n += cmdline.find(marker) != std::string::npos;
  }
  return n;
}

// Waits (up to 60 s) until a command has forked a child: a second process
// mentioning `marker`.
bool wait_for_child(const std::string& marker) {
  for (int i = 0; i < 6000; ++i) {
    if (processes_mentioning(marker) >= 2) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

fs::path fresh_dir(const std::string& name) {
  const fs::path d = ispsim::testing::scratch_dir() / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void expect_empty(const fs::path& dir) {
  for (const auto& e : fs::directory_iterator(dir)) ADD_FAILURE() << "left behind: " << e.path();
}

// Only whole outputs: a child that finished before its parent died has written
// its timeline (finished outputs are kept); nothing half-written or temporary.
void expect_only_complete_timelines(const fs::path& dir) {
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    EXPECT_EQ(e.path().extension(), ".json") << "left behind: " << e.path();
    EXPECT_EQ(name.find(".tmp."), std::string::npos) << "temporary left behind: " << e.path();
    std::ifstream in(e.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t last = text.find_last_not_of(" \n");
    EXPECT_TRUE(last != std::string::npos && (text[last] == '}' || text[last] == ']'))
        << "incomplete timeline: " << e.path();
  }
}

struct SignalCase {
  int sig;
  int code;
  const char* name;
};

class TraceGenSignal : public ::testing::TestWithParam<SignalCase> {};

}  // namespace

TEST_P(TraceGenSignal, RemovesThePartialTraceAndSaysSoOnOneLine) {
  const SignalCase c = GetParam();
  const fs::path out = fresh_dir(std::string("gen_") + c.name), tmp = fresh_dir(std::string("tmp_") + c.name);
  const fs::path err = ispsim::testing::scratch_dir() / "gen.err";
  // About 100 MB: seconds of writing, so the signal arrives mid-file.
  const pid_t pid = start({"trace", "gen", "--shape", "SmolLM2-1.7B", "--dataset", "cov", "--out",
                           (out / "big.trace").string()}, err, tmp);
  ASSERT_TRUE(wait_for_file(out, ".tmp."));
  ::kill(pid, c.sig);
  EXPECT_EQ(exit_code(pid), c.code);
  EXPECT_EQ(read_text(err), std::string("ispsim: interrupted by ") + c.name + "; partial outputs removed\n");
  expect_empty(out);
  expect_empty(tmp);
}

INSTANTIATE_TEST_SUITE_P(Signals, TraceGenSignal,
                         ::testing::Values(SignalCase{SIGINT, 130, "SIGINT"}, SignalCase{SIGTERM, 143, "SIGTERM"},
                                           SignalCase{SIGHUP, 129, "SIGHUP"}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(CompareSignal, ForwardsToChildrenReapsThemAndLeavesNoPartialFiles) {
  const fs::path out = fresh_dir("compare_out"), tmp = fresh_dir("compare_tmp");
  const fs::path err = ispsim::testing::scratch_dir() / "compare.err";
  const pid_t pid = start({"compare", "--trace", "traces/samples/blend_small.trace", "-j", "2", "--timeline-dir",
                           out.string(), "--csv", (out / "c.csv").string()}, err, tmp);
  ASSERT_TRUE(wait_for_child(out.string()));
  ::kill(pid, SIGTERM);
  EXPECT_EQ(exit_code(pid), 143);
  EXPECT_EQ(read_text(err), "ispsim: interrupted by SIGTERM; partial outputs removed\n");
  // The children were reaped by the parent: none is left, none writes later.
  EXPECT_EQ(processes_mentioning(out.string()), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  // A child that finished before the signal has committed its whole timeline
  // (finished outputs are kept; with aggregated streams the sample's GPU
  // baselines finish within the first half second); the parent's CSV is not written.
  EXPECT_FALSE(fs::exists(out / "c.csv"));
  expect_only_complete_timelines(out);
  expect_empty(tmp);
}

TEST(CompareSignal, ChildrenDieWithAParentKilledOutright) {
  const fs::path out = fresh_dir("killed_out"), tmp = fresh_dir("killed_tmp"), tables = fresh_dir("killed_tables");
  const fs::path err = ispsim::testing::scratch_dir() / "killed.err";
  const pid_t pid = start({"compare", "--trace", "traces/samples/blend_small.trace", "-j", "2", "--timeline-dir",
                           out.string(), "--csv", (tables / "c.csv").string(), "--json", (tables / "c.json").string()},
                          err, tmp);
  ASSERT_TRUE(wait_for_child(out.string()));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ::kill(pid, SIGKILL);  // no handler runs in the parent
  ASSERT_EQ(::waitpid(pid, nullptr, 0), pid);
  // PR_SET_PDEATHSIG sends each child SIGTERM.
  for (int i = 0; i < 500 && processes_mentioning(out.string()) > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(processes_mentioning(out.string()), 0);
  // Fast platforms may finish within the 50 ms before the kill.
  expect_only_complete_timelines(out);
  // The parent's tables are written only at its end: nothing of them is on disk
  // for a SIGKILL to leave (no temporary held open through the run).
  expect_empty(tables);
  // The children's results are in memfds: nothing in TMPDIR, whoever died first.
  expect_empty(tmp);
}
