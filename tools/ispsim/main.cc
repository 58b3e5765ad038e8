// ispsim: one CLI for the simulator, the trace tools and the functional engine.
#include <systemc>

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <string>

#include "common/error.h"
#include "common/termination.h"
#include "tools/ispsim/cli.h"

namespace {

const char* kUsage =
    "usage: ispsim <command> [options]\n"
    "commands:\n"
    "  run       simulate a trace on a platform (--platform P --trace T [--stats F] [--vcd F])\n"
    "  compare   simulate a trace on several platforms and tabulate them (--trace T [--platforms ...])\n"
    "  trace     inspect or write a trace: dump | stats | pack\n"
    "  describe  print the parameters of a platform or module with unit, default and meaning\n"
    "  engine    functional integer-only LLM engine: ppl | generate\n"
    "  sweep     many simulations from a sweep file, locally (-j) or as a Slurm job array\n"
    "  reproduce a paper's figures and tables into one folder: memllm | cim\n"
    "run 'ispsim <command> --help' for the options of a command\n";

int dispatch(int argc, char** argv) {
  using Command = int (*)(const ispsim::cli::Args&);
  const std::map<std::string, Command> commands = {
      {"run", ispsim::cli::run},
      {"compare", ispsim::cli::compare},
      {"trace", ispsim::cli::trace},
      {"describe", ispsim::cli::describe},
      {"engine", ispsim::cli::engine},
      {"sweep", ispsim::cli::sweep},
      {"reproduce", ispsim::cli::reproduce},
  };
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    std::cout << kUsage;
    return argc < 2 ? 2 : 0;
  }
  auto it = commands.find(argv[1]);
  if (it == commands.end()) {
    // One line, like every bad input; `ispsim --help` prints the usage.
    std::string known;
    for (const auto& [name, command] : commands) known += (known.empty() ? "" : ", ") + name;
    std::cerr << "ispsim: error: unknown command '" << argv[1] << "' (commands: " << known
              << "; see ispsim --help)\n";
    return 2;
  }
  try {
    return it->second(ispsim::cli::Args(argv + 2, argv + argc));
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
