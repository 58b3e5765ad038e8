// Clean ends on SIGINT, SIGTERM and SIGHUP. The handler (async-signal-safe):
// removes every registered temporary file, forwards the signal to every
// registered child process and reaps it, prints one line (unless this process
// is such a child) and exits with 128 + signal (130, 143, 129). Finished outputs
// have been renamed into place already and stay.
#pragma once

#include <signal.h>
#include <sys/types.h>

namespace ispsim::termination {

// Installs the handlers (once, in main()).
void install_handlers();

// Temporary files to remove on a signal. Returns a slot for forget_temp(); -1
// when the table is full (the file is then only removed by its owner).
int register_temp(const char* path);
void forget_temp(int slot);

// Child processes to forward a signal to and reap.
void register_child(pid_t pid);
void forget_child(pid_t pid);

// While one exists, SIGINT, SIGTERM and SIGHUP wait: for steps that must not be
// split by a signal, such as creating a temporary file and registering it.
class SignalsBlocked {
 public:
  SignalsBlocked();
  ~SignalsBlocked();
  SignalsBlocked(const SignalsBlocked&) = delete;
  SignalsBlocked& operator=(const SignalsBlocked&) = delete;

 private:
  sigset_t old_;
};

// fork() for a child process that must not outlive this one: the termination
// signals are blocked across the fork, so a signal cannot slip in before the
// child is registered; in the child, become_child() runs before they are
// unblocked. Returns what fork() returns.
pid_t fork_child();

// In a freshly forked child: forgets the parent's temporaries and children,
// prints nothing on a signal, and dies with SIGTERM when the parent dies
// (PR_SET_PDEATHSIG). Exits at once if the parent is already gone.
void become_child(pid_t parent);

}  // namespace ispsim::termination
