// A full-duplex PCIe link between the host and the SSD: two independent FCFS
// directions (core::Server each), host_to_device and device_to_host. A transfer
// occupies its direction for bytes / (raw rate x protocol efficiency) and
// completes one-way latency after its occupancy ends, so back-to-back transfers
// pipeline (their latencies overlap) and the two directions never wait for each
// other. Every transfer is labelled with its purpose for the byte accounting.
//
// Statistics (under the module's SystemC path, e.g. "system.pcie"):
//   <path>.host_to_device.{requests,bytes,busy_time,utilization}   (core::Server)
//   <path>.device_to_host.{...}
//   <path>.host_to_device.<purpose>_bytes, <path>.device_to_host.<purpose>_bytes
//       (bytes by purpose, e.g. host_to_device.kv_write_bytes; they sum to .bytes)
//   <path>.dynamic_energy (pJ)
// VCD: <path>.host_to_device.outstanding, <path>.device_to_host.outstanding.
// Energy: one ledger record per transfer under the component <path>, spread over
// its occupancy; static power declared once at construction.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <systemc>

#include "models/core/energy_ledger.h"
#include "models/core/server.h"
#include "models/core/stats.h"
#include "models/core/vcd.h"
#include "models/link/link_config.h"

namespace ispsim::link {

enum class Direction { HOST_TO_DEVICE = 0, DEVICE_TO_HOST = 1 };

// Why bytes cross the link (the run summary reports PCIe bytes by purpose).
enum class Purpose {
  KV_READ = 0,       // stored KV read by the host (conventional read, device -> host)
  KV_WRITE,          // KV written to the SSD (host -> device: write-back, append, shipped with a command)
  Q_FUSED,           // query rows of a fused-attention command (host -> device)
  MASK,              // recomputation / HKVD mask bit vector (host -> device)
  ATTENTION_OUTPUT,  // O rows returned by the SSD (device -> host)
  NVME_COMMAND,      // doorbell writes and submission queue entries (host -> device)
  NVME_COMPLETION,   // completion queue entries (device -> host)
  OTHER,             // anything else, including zero-byte DMA read requests
};
constexpr int kPurposeCount = 8;

// "kv_read", "kv_write", "q_fused", "mask", "attention_output", "nvme_command",
// "nvme_completion", "other" (the statistic name stems).
const char* to_string(Purpose purpose);
// "host_to_device", "device_to_host".
const char* to_string(Direction direction);

class PcieLink : public sc_core::sc_module {
 public:
  using Done = std::function<void()>;

  // `ledger` may be null (no energy bookkeeping).
  PcieLink(sc_core::sc_module_name name, const LinkConfig& config, core::EnergyLedger* ledger = nullptr);

  // Queues `bytes` of payload in `direction`; returns the completion time.
  // `done` (may be empty) runs then. Zero bytes take the latency only (a read
  // request or a message without payload).
  sc_core::sc_time transfer(Direction direction, uint64_t bytes, Purpose purpose, Done done);

  // Closed form on an idle direction: bytes / (raw x efficiency) + latency.
  sc_core::sc_time transfer_time(uint64_t bytes) const { return config_.transfer_time(bytes); }
  // When `direction` can start its next transfer (>= now).
  sc_core::sc_time free_at(Direction direction) const;

  const LinkConfig& config() const { return config_; }
  uint64_t bytes(Direction direction) const;
  uint64_t bytes(Direction direction, Purpose purpose) const;
  uint64_t bytes(Purpose purpose) const;  // both directions
  uint64_t total_bytes() const;           // both directions, all purposes
  uint64_t requests(Direction direction) const;
  sc_core::sc_time busy_time(Direction direction) const;
  double dynamic_energy_pj() const { return energy_pj_.value(); }

  // Transfers scheduled ahead without events (the aggregated streaming mode):
  // submit them to clock(direction) with occupancy_ps(bytes), then book()
  // counts the clock's use() (`bytes` of `purpose`, the rest of its bytes as
  // `other_purpose`; `energy_pj` in one ledger record from `first_start_ps` to
  // the end of its last occupancy) and keeps the direction busy until then.
  core::FcfsClock clock(Direction direction) const { return core::FcfsClock(server(direction)); }
  uint64_t occupancy_ps(uint64_t bytes) const { return config_.occupancy(bytes).value(); }
  double energy_pj(uint64_t bytes) const { return config_.energy_pj(bytes); }
  void book(Direction direction, const core::ClockUse& use, Purpose purpose, uint64_t bytes, Purpose other_purpose,
            uint64_t first_start_ps, double energy_pj);

  // Waveforms of both directions (outstanding transfers).
  void trace(vcd::Writer& writer);

 private:
  core::Server& server(Direction direction);
  const core::Server& server(Direction direction) const;

  const LinkConfig config_;
  core::EnergyLedger* ledger_;
  core::Server host_to_device_;
  core::Server device_to_host_;
  std::array<std::array<uint64_t, kPurposeCount>, 2> bytes_by_purpose_{};
  stats::Group h2d_stats_;
  stats::Group d2h_stats_;
  stats::Group stats_;
  stats::Scalar& energy_pj_;
};

}  // namespace ispsim::link
