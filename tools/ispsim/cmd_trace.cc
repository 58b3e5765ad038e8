// Placeholder until the 'trace' command lands; replaced by its owner.
#include <stdexcept>

#include "tools/ispsim/cli.h"

namespace ispsim::cli {
int trace(const Args&) { throw std::runtime_error("'trace' is not built yet"); }
}  // namespace ispsim::cli
