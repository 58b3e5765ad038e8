// The NVMe front end of the SSD as seen from the link: the vendor-specific
// fused-attention command of MemLLM (Sec. V-E: CMD_FUSED_ATTN, operands fetched
// by peer-to-peer DMA) and the PCIe traffic of conventional read/write commands.
// Nvme owns no data path; it sequences transfers on a PcieLink and hands the
// device-side work to a backend callback (the SSD model).
//
// Fused attention on an idle link, L = one-way latency, occ(b) = b / effective rate:
//   1. doorbell write, 4 B host->device (NVME_COMMAND)            occ(4) + L
//   2. SQE fetch: read request device->host (0 B, OTHER), then
//      the 64 B SQE host->device (NVME_COMMAND)                    L + occ(64) + L
//   3. operand fetch (P2P DMA read): one read request device->host (0 B, OTHER),
//      then mask (MASK), Q (Q_FUSED) and KV (KV_WRITE) back to back
//      host->device                                                 L + occ(m)+occ(q)+occ(kv) + L
//   4. backend(on_done): the SSD computes the attention            backend time
//   5. O rows device->host (ATTENTION_OUTPUT) then the 16 B CQE
//      device->host (NVME_COMPLETION), posted writes in order      occ(o) + occ(16) + L
//   6. host interrupt and completion handling                      interrupt_and_completion
// Step 3 is skipped when mask, Q and KV are all empty; an empty operand or an
// empty output is not transferred. fused_attention_time() is this closed form.
//
// Conventional command (one per max_data_transfer_bytes of data):
//   read:  doorbell + SQE fetch (steps 1-2), media(on_done) (NAND read), data
//          device->host, CQE, interrupt_and_completion.
//   write: doorbell + SQE fetch, data read request + data host->device,
//          media(on_done) (NAND program or buffer), CQE, interrupt_and_completion.
//
// Statistics: <path>.fused_commands, <path>.io_commands (count);
// <path>.host_completion.requests (completions handled by the host).
#pragma once

#include <cstdint>
#include <functional>
#include <systemc>

#include "models/core/server.h"
#include "models/core/stats.h"
#include "models/link/pcie_link.h"

namespace ispsim::link {

// Operand and result sizes of one fused-attention command, in bytes.
struct FusedAttentionCommand {
  uint64_t mask_bytes = 0;    // ceil(mask bits / 8)
  uint64_t q_bytes = 0;       // query_rows * heads * head_dim * activation bytes
  uint64_t kv_bytes = 0;      // host-recomputed KV shipped with the command
  uint64_t output_bytes = 0;  // O rows (same size as Q)
};

class Nvme : public sc_core::sc_module {
 public:
  using Done = std::function<void()>;
  // The device-side work of a command; calls its argument once when finished.
  using Backend = std::function<void(Done on_backend_done)>;

  // NVMe protocol constants (NVM Express Base Specification 2.0: a submission
  // queue entry is 64 B, a completion queue entry 16 B, a doorbell register 4 B).
  static constexpr uint64_t kSqeBytes = 64;
  static constexpr uint64_t kCqeBytes = 16;
  static constexpr uint64_t kDoorbellBytes = 4;

  Nvme(sc_core::sc_module_name name, PcieLink& link);

  // Runs the fused-attention sequence above; `done` runs after the host has
  // handled the completion. `backend` must eventually call its argument; an
  // empty backend throws std::logic_error.
  void fused_attention(const FusedAttentionCommand& cmd, Backend backend, Done done);
  // Closed form of fused_attention() on an idle link whose backend takes
  // `backend_time`.
  sc_core::sc_time fused_attention_time(const FusedAttentionCommand& cmd,
                                        const sc_core::sc_time& backend_time) const;

  // One conventional command moving `bytes` (1 .. max_data_transfer_bytes;
  // outside that range throws std::logic_error) in `data_direction`
  // (DEVICE_TO_HOST = read, HOST_TO_DEVICE = write), with `purpose` for the data.
  void io_command(Direction data_direction, uint64_t bytes, Purpose purpose, Backend media, Done done);
  // Closed form of io_command() on an idle link whose media takes `media_time`.
  sc_core::sc_time io_command_time(Direction data_direction, uint64_t bytes,
                                   const sc_core::sc_time& media_time) const;

  // Number of conventional commands for `bytes` of data: ceil(bytes / MDTS) (0 for 0).
  uint64_t io_command_count(uint64_t bytes) const;
  // Command-protocol bytes those commands add on the link: per command
  // doorbell + SQE host->device and CQE device->host.
  uint64_t io_overhead_bytes_host_to_device(uint64_t bytes) const;
  uint64_t io_overhead_bytes_device_to_host(uint64_t bytes) const;

  PcieLink& link() { return link_; }
  uint64_t fused_commands() const { return fused_commands_.value(); }
  uint64_t io_commands() const { return io_commands_.value(); }

 private:
  // Steps 1-2: doorbell and SQE fetch; `then` runs when the SQE has arrived.
  void fetch_command(Done then);
  // Step 5-6 tail: CQE device->host after `output_bytes` of `output_purpose`,
  // then the host-side completion delay, then `done`.
  void complete(uint64_t output_bytes, Purpose output_purpose, Done done);

  PcieLink& link_;
  core::Server host_completion_;  // interrupt_and_completion delay per command
  stats::Group stats_;
  stats::Counter& fused_commands_;
  stats::Counter& io_commands_;
};

}  // namespace ispsim::link
