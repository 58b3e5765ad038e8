// One host software path for KV read from the SSD: what a PyTorch host does
// after the NVMe data has landed in host memory and before an attention kernel
// can use it. The host has two (HostConfig):
// - the load path, for precomputed KV from the RAG store: files written earlier,
//   read through the file system, the page cache and deserialisation. MemLLM
//   measured it on its hosts (Sec. III) but publishes only the latency shares it
//   produced; its rate is fitted to them (models/host/README.md, Calibration);
// - the swap path, for KV the host offloaded itself (FlexGen-style: raw tensors
//   read with direct I/O into pinned buffers, then one copy into the KV tensor).
//
// One thread per path serves its reads first come, first served:
//   done = max(arrival, end of the previous request) + overhead + bytes / rate
// where arrival is when the SSD read's data and completion reached the host.
// Reads on the way to an attention op and prefetches share the thread. Writes
// (KV offload) do not take a path: they run in the background, off the critical
// path (stated simplification).
//
// Statistics (under the module's path): <path>.thread.{requests,bytes,busy_time,
// utilization}. VCD: <path>.thread.outstanding.
#pragma once

#include <cstdint>
#include <functional>
#include <systemc>

#include "models/core/server.h"
#include "models/core/vcd.h"
#include "models/host/host_config.h"

namespace ispsim::host {

class StorageReadPath : public sc_core::sc_module {
 public:
  using Done = std::function<void()>;

  StorageReadPath(sc_core::sc_module_name name, const ReadPathConfig& config);

  // `bytes` of KV arrived from the SSD now; `done` runs when they are usable by
  // the GPU. Returns that time.
  sc_core::sc_time deliver(uint64_t bytes, Done done);
  // Host time of one request of `bytes` on an idle thread: overhead + bytes / rate.
  sc_core::sc_time request_time(uint64_t bytes) const;

  uint64_t requests() const { return thread_.requests(); }
  uint64_t bytes() const { return thread_.bytes(); }
  sc_core::sc_time busy_time() const { return thread_.busy_time(); }
  void trace(vcd::Writer& writer) { thread_.trace(writer, {vcd::Role::kHost}); }

 private:
  const ReadPathConfig config_;
  core::Server thread_;
};

}  // namespace ispsim::host
