// ispsim: one CLI for the simulator, the trace tools and the functional engine.
#include <systemc>

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <algorithm>
#include <string>

#include "common/error.h"
#include "common/termination.h"
#include "tools/ispsim/cli.h"
#include "tools/ispsim/provenance.h"
#include "tools/ispsim/sweep/results.h"

namespace {

int dispatch(int argc, char** argv) {
  using ispsim::cli::commands;
  ispsim::cli::set_command_line(argc, argv);
  if (argc >= 2 && !std::strcmp(argv[1], "--version")) {
    std::cout << "ispsim " << ispsim::sweep::ispsim_version() << "\n";  // as every sweep result records it
    return 0;
  }
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    std::cout << ispsim::cli::usage();
    return argc < 2 ? 2 : 0;
  }
  auto it = std::find_if(commands().begin(), commands().end(),
                         [&](const ispsim::cli::Subcommand& c) { return c.name == std::string(argv[1]); });
  if (it == commands().end()) {
    // One line, like every bad input; `ispsim --help` prints the usage.
    std::cerr << "ispsim: error: unknown command '" << argv[1] << "' (commands: "
              << ispsim::cli::names_of(commands(), ", ", ", ") << "; see ispsim --help)\n";
    return 2;
  }
  try {
    return it->run(ispsim::cli::Args(argv + 2, argv + argc));
  } catch (const ispsim::BadInput& e) {
    std::cerr << "ispsim: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "ispsim: internal error: " << e.what() << "\n";
    return 1;
  }
}

// Every byte written to stdout must have arrived: `ispsim trace dump x > /dev/full`
// is an error (exit 2, one line), not a silent success. Returns the exit code.
int check_stdout(int code) {
  std::cout.flush();
  const bool stream_failed = !std::cout;
  errno = 0;
  const bool flush_failed = std::fflush(stdout) != 0 || std::ferror(stdout);
  const int flush_errno = errno;
  // close() reports what a deferred write (NFS) could not do; a duplicate is
  // closed so that static destructors may still print safely.
  const int dup_fd = ::dup(STDOUT_FILENO);
  const bool close_failed = dup_fd >= 0 && ::close(dup_fd) != 0 && errno != EINTR;
  if (!stream_failed && !flush_failed && !close_failed) return code;
  if (code != 0) return code;  // the command already said what went wrong
  const int e = flush_errno ? flush_errno : errno;
  std::cerr << "ispsim: error: stdout: write failed" << (e ? std::string(": ") + std::strerror(e) : "") << "\n";
  return 2;
}

}  // namespace

int sc_main(int argc, char** argv) { return dispatch(argc, argv); }

int main(int argc, char** argv) {
  // The SystemC banner would pollute every command's output.
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 1);
  ispsim::termination::install_handlers();
  return check_stdout(sc_core::sc_elab_and_sim(argc, argv));
}
