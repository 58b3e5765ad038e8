#include "models/core/examples/toy_link.h"

namespace ispsim::examples {

ToyLinkFactory& toy_links() {
  static ToyLinkFactory factory("toy link");
  return factory;
}

}  // namespace ispsim::examples
