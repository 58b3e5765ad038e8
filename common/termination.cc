#include "common/termination.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <initializer_list>

namespace ispsim::termination {
namespace {

// Fixed tables: the handler may neither allocate nor lock. A slot's state is
// 0 free, 1 being filled, 2 holding a path the handler may unlink.
constexpr int kTempSlots = 64;
constexpr int kChildSlots = 256;
struct TempSlot {
  std::atomic<int> state{0};
  char path[PATH_MAX];
};
TempSlot g_temps[kTempSlots];
std::atomic<pid_t> g_children[kChildSlots];
std::atomic<bool> g_quiet{false};
std::atomic<bool> g_handling{false};

const char* signal_name(int sig) {
  switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    default: return "a signal";
  }
}

void write_all(const char* text) {
  size_t left = std::strlen(text);
  while (left > 0) {
    const ssize_t n = ::write(STDERR_FILENO, text, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text += n;
    left -= static_cast<size_t>(n);
  }
}

void on_signal(int sig) {
  // A second signal while cleaning up must not interrupt the cleanup.
  if (g_handling.exchange(true)) return;
  for (auto& child : g_children) {
    const pid_t pid = child.load();
    if (pid > 0) ::kill(pid, sig);
  }
  for (auto& child : g_children) {
    const pid_t pid = child.load();
    if (pid <= 0) continue;
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  // After the children: they may still have been writing files we remove.
  for (TempSlot& slot : g_temps)
    if (slot.state.load() == 2) ::unlink(slot.path);
  if (!g_quiet.load()) {
    write_all("ispsim: interrupted by ");
    write_all(signal_name(sig));
    write_all("; partial outputs removed\n");
  }
  ::_exit(128 + sig);
}

}  // namespace

void install_handlers() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  // Block the other termination signals while one is handled.
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&action.sa_mask, sig);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    sigaction(sig, nullptr, &old);
    // A shell running us in the background (nohup, '&') ignores some: keep that.
    if (old.sa_handler == SIG_IGN) continue;
    sigaction(sig, &action, nullptr);
  }
}

int register_temp(const char* path) {
  if (std::strlen(path) >= PATH_MAX) return -1;
  for (int i = 0; i < kTempSlots; ++i) {
    int expected = 0;
    if (!g_temps[i].state.compare_exchange_strong(expected, 1)) continue;
    std::strcpy(g_temps[i].path, path);
    g_temps[i].state.store(2);
    return i;
  }
  return -1;
}

void forget_temp(int slot) {
  if (slot >= 0 && slot < kTempSlots) g_temps[slot].state.store(0);
}

void register_child(pid_t pid) {
  for (auto& child : g_children) {
    pid_t expected = 0;
    if (child.compare_exchange_strong(expected, pid)) return;
  }
}

void forget_child(pid_t pid) {
  for (auto& child : g_children) {
    pid_t expected = pid;
    if (child.compare_exchange_strong(expected, 0)) return;
  }
}

SignalsBlocked::SignalsBlocked() {
  sigset_t block;
  sigemptyset(&block);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&block, sig);
  sigprocmask(SIG_BLOCK, &block, &old_);
}

SignalsBlocked::~SignalsBlocked() { sigprocmask(SIG_SETMASK, &old_, nullptr); }

pid_t fork_child() {
  const SignalsBlocked blocked;
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) become_child(parent);
  if (pid > 0) register_child(pid);
  return pid;
}

void become_child(pid_t parent) {
  for (TempSlot& slot : g_temps) slot.state.store(0);
  for (auto& child : g_children) child.store(0);
  g_quiet.store(true);
  g_handling.store(false);
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  // The parent may have died between fork() and prctl().
  if (::getppid() != parent) ::_exit(128 + SIGTERM);
}

}  // namespace ispsim::termination
