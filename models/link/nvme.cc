#include "models/link/nvme.h"

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

namespace ispsim::link {

using sc_core::sc_time;

namespace {

constexpr Direction kH2D = Direction::HOST_TO_DEVICE;
constexpr Direction kD2H = Direction::DEVICE_TO_HOST;

}  // namespace

Nvme::Nvme(sc_core::sc_module_name name, PcieLink& link)
    : sc_module(name),
      link_(link),
      host_completion_("host_completion", 0.0, link.config().interrupt_and_completion),
      stats_(this->name()),
      fused_commands_(stats_.counter("fused_commands", "count", "fused-attention commands issued")),
      io_commands_(stats_.counter("io_commands", "count", "conventional read/write commands issued")) {}

void Nvme::fetch_command(Done then) {
  // The doorbell is a posted MMIO write; the controller then reads the SQE
  // (a read request without payload, answered by the 64 B entry).
  link_.transfer(kH2D, kDoorbellBytes, Purpose::NVME_COMMAND, [this, then = std::move(then)]() mutable {
    link_.transfer(kD2H, 0, Purpose::OTHER, [this, then = std::move(then)]() mutable {
      link_.transfer(kH2D, kSqeBytes, Purpose::NVME_COMMAND, std::move(then));
    });
  });
}

void Nvme::complete(uint64_t output_bytes, Purpose output_purpose, Done done) {
  // Posted writes on one direction arrive in order: the CQE completes last.
  if (output_bytes > 0) link_.transfer(kD2H, output_bytes, output_purpose, nullptr);
  link_.transfer(kD2H, kCqeBytes, Purpose::NVME_COMPLETION, [this, done = std::move(done)]() mutable {
    // The host-side handling occupies no link resource: a pure delay (a server
    // with zero occupancy overlaps any number of completions).
    host_completion_.submit(sc_core::SC_ZERO_TIME, 0, std::move(done));
  });
}

void Nvme::fused_attention(const FusedAttentionCommand& cmd, Backend backend, Done done) {
  if (!backend) throw std::logic_error(std::string(name()) + ": fused_attention without a backend");
  ++fused_commands_;
  fetch_command([this, cmd, backend = std::move(backend), done = std::move(done)]() mutable {
    auto run_backend = [this, cmd, backend = std::move(backend), done = std::move(done)]() mutable {
      backend([this, cmd, done = std::move(done)]() mutable {
        complete(cmd.output_bytes, Purpose::ATTENTION_OUTPUT, std::move(done));
      });
    };
    const uint64_t operand_bytes = cmd.mask_bytes + cmd.q_bytes + cmd.kv_bytes;
    if (operand_bytes == 0) {
      run_backend();
      return;
    }
    // One read request for all operands, then the data back to back; the
    // backend starts when the last operand has arrived.
    link_.transfer(kD2H, 0, Purpose::OTHER, [this, cmd, run_backend = std::move(run_backend)]() mutable {
      const std::pair<uint64_t, Purpose> operands[] = {
          {cmd.mask_bytes, Purpose::MASK}, {cmd.q_bytes, Purpose::Q_FUSED}, {cmd.kv_bytes, Purpose::KV_WRITE}};
      int last = -1;
      for (int i = 0; i < 3; ++i)
        if (operands[i].first > 0) last = i;
      for (int i = 0; i < 3; ++i) {
        if (operands[i].first == 0) continue;
        if (i == last)
          link_.transfer(kH2D, operands[i].first, operands[i].second, std::move(run_backend));
        else
          link_.transfer(kH2D, operands[i].first, operands[i].second, nullptr);
      }
    });
  });
}

sc_time Nvme::fused_attention_time(const FusedAttentionCommand& cmd, const sc_time& backend_time) const {
  const LinkConfig& c = link_.config();
  const sc_time latency = c.latency;
  sc_time t = c.occupancy(kDoorbellBytes) + latency;        // doorbell
  t += latency + c.occupancy(kSqeBytes) + latency;          // SQE fetch
  if (cmd.mask_bytes + cmd.q_bytes + cmd.kv_bytes > 0)      // operand fetch
    t += latency + c.occupancy(cmd.mask_bytes) + c.occupancy(cmd.q_bytes) + c.occupancy(cmd.kv_bytes) + latency;
  t += backend_time;
  t += c.occupancy(cmd.output_bytes) + c.occupancy(kCqeBytes) + latency;  // O + CQE
  t += c.interrupt_and_completion;
  return t;
}

void Nvme::io_command(Direction data_direction, uint64_t bytes, Purpose purpose, Backend media, Done done) {
  if (bytes == 0 || bytes > link_.config().max_data_transfer_bytes) {
    throw std::logic_error(std::string(name()) + ": an I/O command of " + std::to_string(bytes) +
                           " bytes (allowed 1.." + std::to_string(link_.config().max_data_transfer_bytes) + ")");
  }
  if (!media) throw std::logic_error(std::string(name()) + ": io_command without a media callback");
  ++io_commands_;
  if (data_direction == kD2H) {
    // Read: media first, then the data and the CQE as posted writes.
    fetch_command([this, bytes, purpose, media = std::move(media), done = std::move(done)]() mutable {
      media([this, bytes, purpose, done = std::move(done)]() mutable { complete(bytes, purpose, std::move(done)); });
    });
  } else {
    // Write: the controller reads the data from host memory, then programs it.
    fetch_command([this, bytes, purpose, media = std::move(media), done = std::move(done)]() mutable {
      link_.transfer(kD2H, 0, Purpose::OTHER,
                     [this, bytes, purpose, media = std::move(media), done = std::move(done)]() mutable {
                       link_.transfer(kH2D, bytes, purpose,
                                      [this, media = std::move(media), done = std::move(done)]() mutable {
                                        media([this, done = std::move(done)]() mutable {
                                          complete(0, Purpose::OTHER, std::move(done));
                                        });
                                      });
                     });
    });
  }
}

sc_time Nvme::io_command_time(Direction data_direction, uint64_t bytes, const sc_time& media_time) const {
  const LinkConfig& c = link_.config();
  const sc_time latency = c.latency;
  sc_time t = c.occupancy(kDoorbellBytes) + latency + latency + c.occupancy(kSqeBytes) + latency;
  if (data_direction == kD2H) {
    t += media_time + c.occupancy(bytes) + c.occupancy(kCqeBytes) + latency;
  } else {
    t += latency + c.occupancy(bytes) + latency + media_time + c.occupancy(kCqeBytes) + latency;
  }
  return t + c.interrupt_and_completion;
}

uint64_t Nvme::io_command_count(uint64_t bytes) const {
  const uint64_t mdts = link_.config().max_data_transfer_bytes;
  return (bytes + mdts - 1) / mdts;
}

uint64_t Nvme::io_overhead_bytes_host_to_device(uint64_t bytes) const {
  return io_command_count(bytes) * (kDoorbellBytes + kSqeBytes);
}

uint64_t Nvme::io_overhead_bytes_device_to_host(uint64_t bytes) const {
  return io_command_count(bytes) * kCqeBytes;
}

}  // namespace ispsim::link
