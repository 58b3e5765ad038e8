#include "models/core/examples/register_all.h"

#include <memory>
#include <mutex>

#include "models/core/examples/bandwidth_link.h"
#include "models/core/examples/fixed_delay_link.h"

namespace ispsim::examples {

void register_all() {
  static std::once_flag once;
  std::call_once(once, [] {
    ToyLinkFactory& links = toy_links();
    links.add("fixed_delay", "every message takes delay_ns",
              [](sc_core::sc_module_name name, const ToyLinkConfig& config) {
                return std::make_unique<FixedDelayLink>(name, config.fixed_delay());
              });
    links.add("bandwidth", "a message of B bytes takes latency_ns + B / rate_gbps",
              [](sc_core::sc_module_name name, const ToyLinkConfig& config) {
                return std::make_unique<BandwidthLink>(name, config.bandwidth());
              });
  });
}

}  // namespace ispsim::examples
