#include "models/host/storage_read_path.h"

namespace ispsim::host {

StorageReadPath::StorageReadPath(sc_core::sc_module_name name, const ReadPathConfig& config)
    : sc_module(name), config_(config), thread_("thread", config.bytes_per_ns, sc_core::SC_ZERO_TIME) {}

sc_core::sc_time StorageReadPath::request_time(uint64_t bytes) const {
  return config_.overhead + thread_.occupancy(bytes);
}

sc_core::sc_time StorageReadPath::deliver(uint64_t bytes, Done done) {
  return thread_.submit(request_time(bytes), bytes, std::move(done));
}

}  // namespace ispsim::host
