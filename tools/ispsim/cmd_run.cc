// Placeholder until the 'run' command lands; replaced by its owner.
#include <stdexcept>

#include "tools/ispsim/cli.h"

namespace ispsim::cli {
int run(const Args&) { throw std::runtime_error("'run' is not built yet"); }
}  // namespace ispsim::cli
