// Placeholder until the 'engine' command lands; replaced by its owner.
#include <stdexcept>

#include "tools/ispsim/cli.h"

namespace ispsim::cli {
int engine(const Args&) { throw std::runtime_error("'engine' is not built yet"); }
}  // namespace ispsim::cli
