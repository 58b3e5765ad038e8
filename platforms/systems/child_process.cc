#include "platforms/systems/child_process.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "common/error.h"
#include "common/termination.h"

namespace ispsim::systems {
namespace {

// A fresh temporary file, registered for removal on a signal before a signal can
// arrive: otherwise one between mkstemp() and the registration leaves it behind.
std::string registered_temp(int& slot) {
  const termination::SignalsBlocked blocked;
  const char* dir = std::getenv("TMPDIR");
  std::string pattern = std::string(dir && *dir ? dir : "/tmp") + "/ispsim-child-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  const int fd = mkstemp(buf.data());
  if (fd < 0) throw std::runtime_error("cannot create a temporary file in " + pattern);
  close(fd);
  slot = termination::register_temp(buf.data());
  return buf.data();
}

[[noreturn]] void child(const std::function<std::string()>& task, const std::string& path) {
  // Dies with the parent (PR_SET_PDEATHSIG, set by fork_child) and then removes its result file.
  termination::register_temp(path.c_str());
  int code = 0;
  std::string out;
  try {
    out = task();
  } catch (const BadInput& e) {
    code = 2;
    out = e.what();
  } catch (const std::exception& e) {
    code = 1;
    out = e.what();
  }
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << out;
  f.close();
  std::fflush(nullptr);
  // _exit: no atexit handlers or static destructors of the parent's state.
  _exit(f ? code : 1);
}

// The next child to end, and its CPU time: blocks, or with `tick` polls and
// ticks meanwhile.
pid_t wait_any(int& status, rusage& usage, const std::function<void()>& tick) {
  if (!tick) return wait4(-1, &status, 0, &usage);
  for (;;) {
    const pid_t pid = wait4(-1, &status, WNOHANG, &usage);
    if (pid != 0) return pid;
    tick();
    usleep(100'000);
  }
}

double seconds(const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) * 1e-6; }

}  // namespace

std::vector<ChildResult> run_in_children(const std::vector<std::function<std::string()>>& tasks, unsigned jobs,
                                         const ChildDone& on_done, const std::function<void()>& tick) {
  std::vector<ChildResult> results(tasks.size());
  std::vector<std::string> paths(tasks.size());
  std::map<pid_t, size_t> running;
  size_t next = 0;
  if (jobs == 0) jobs = 1;
  std::fflush(nullptr);
  std::vector<int> temp_slots(tasks.size(), -1);
  auto forget = [&](size_t i) {
    std::remove(paths[i].c_str());
    termination::forget_temp(temp_slots[i]);
  };
  try {
    while (next < tasks.size() || !running.empty()) {
      while (next < tasks.size() && running.size() < jobs) {
        paths[next] = registered_temp(temp_slots[next]);
        const pid_t pid = termination::fork_child();
        if (pid < 0) throw std::runtime_error("fork failed");
        if (pid == 0) child(tasks[next], paths[next]);
        running[pid] = next++;
      }
      // Any child: the process has no children but ours (a pid we did not
      // start is not waited for by anyone else either, so it is skipped).
      int status = 0;
      rusage usage{};
      const pid_t pid = wait_any(status, usage, tick);
      if (pid < 0) throw std::runtime_error("waitpid failed");
      if (!running.count(pid)) continue;
      const size_t i = running.at(pid);
      running.erase(pid);
      termination::forget_child(pid);
      std::ifstream f(paths[i], std::ios::binary);
      std::ostringstream text;
      text << f.rdbuf();
      forget(i);
      results[i].output = text.str();
      results[i].cpu_s = seconds(usage.ru_utime) + seconds(usage.ru_stime);
      if (WIFEXITED(status)) {
        results[i].exit_code = WEXITSTATUS(status);
      } else {
        results[i].exit_code = 1;
        results[i].output = "child process killed by signal " + std::to_string(WTERMSIG(status));
      }
      if (on_done) on_done(i, results[i]);
    }
  } catch (...) {
    // No child outlives the call, and no temporary file either.
    for (const auto& [pid, i] : running) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
      termination::forget_child(pid);
      forget(i);
    }
    throw;
  }
  return results;
}

}  // namespace ispsim::systems
