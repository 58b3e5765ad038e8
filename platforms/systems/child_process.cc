#include "platforms/systems/child_process.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sys/mman.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>

#include "common/error.h"
#include "common/termination.h"

namespace ispsim::systems {
namespace {

// The child's result goes into an anonymous in-memory file that the parent
// created before the fork: no name in TMPDIR, so nothing is left behind
// whoever is killed when.
int result_file() {
  const int fd = memfd_create("ispsim-child-result", MFD_CLOEXEC);
  if (fd < 0) throw std::runtime_error(std::string("cannot create a child's result file: ") + std::strerror(errno));
  return fd;
}

bool write_all(int fd, const std::string& text) {
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

std::string read_all(int fd) {
  std::string text;
  char buf[65536];
  for (off_t at = 0;;) {
    const ssize_t n = ::pread(fd, buf, sizeof buf, at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return text;
    text.append(buf, static_cast<size_t>(n));
    at += n;
  }
}

[[noreturn]] void child(const std::function<std::string()>& task, int fd) {
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
  const bool written = write_all(fd, out);
  std::fflush(nullptr);
  // _exit: no atexit handlers or static destructors of the parent's state.
  _exit(written ? code : 1);
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
  std::vector<int> fds(tasks.size(), -1);
  std::map<pid_t, size_t> running;
  size_t next = 0;
  if (jobs == 0) jobs = 1;
  std::fflush(nullptr);
  auto forget = [&](size_t i) {
    ::close(fds[i]);
    fds[i] = -1;
  };
  try {
    while (next < tasks.size() || !running.empty()) {
      while (next < tasks.size() && running.size() < jobs) {
        fds[next] = result_file();
        const pid_t pid = termination::fork_child();
        if (pid < 0) {
          forget(next);
          throw std::runtime_error("fork failed");
        }
        if (pid == 0) child(tasks[next], fds[next]);
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
      results[i].output = read_all(fds[i]);
      forget(i);
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
    // No child outlives the call.
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
