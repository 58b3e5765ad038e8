// Placeholder until the 'describe' command lands; replaced by its owner.
#include <stdexcept>

#include "tools/ispsim/cli.h"

namespace ispsim::cli {
int describe(const Args&) { throw std::runtime_error("'describe' is not built yet"); }
}  // namespace ispsim::cli
