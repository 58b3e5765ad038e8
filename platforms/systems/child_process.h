// Runs simulations in child processes: SystemC elaborates once per process, so
// `compare` (and the grid benchmark) simulate each platform in a fork()ed child,
// up to `jobs` at a time. A child's result is the text it returns (a JSON run
// summary), passed back through an anonymous in-memory file (memfd); a BadInput in a child comes
// back as that one-line error, anything else as an internal error.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace ispsim::systems {

struct ChildResult {
  int exit_code = 0;   // 0 ok, 2 bad input, 1 internal error
  std::string output;  // the returned text, or the error line
  double cpu_s = 0;    // the child's user + system CPU time, s
};

// Called in the parent as each child finishes, with the task's index: lets a
// caller save results and show progress while the others still run.
using ChildDone = std::function<void(size_t index, const ChildResult& result)>;

// Runs every task in its own child process, at most `jobs` at once, and returns
// their results in task order. A free slot is refilled as soon as any child
// ends. `tick`, when given, is called about ten times a second while children
// run (e.g. to redraw progress). Call before any SystemC module exists.
std::vector<ChildResult> run_in_children(const std::vector<std::function<std::string()>>& tasks, unsigned jobs,
                                         const ChildDone& on_done = {}, const std::function<void()>& tick = {});

}  // namespace ispsim::systems
