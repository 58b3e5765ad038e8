#include "models/link/pcie_link.h"

#include <string>
#include <utility>

namespace ispsim::link {

const char* to_string(Purpose purpose) {
  switch (purpose) {
    case Purpose::KV_READ: return "kv_read";
    case Purpose::KV_WRITE: return "kv_write";
    case Purpose::Q_FUSED: return "q_fused";
    case Purpose::MASK: return "mask";
    case Purpose::ATTENTION_OUTPUT: return "attention_output";
    case Purpose::NVME_COMMAND: return "nvme_command";
    case Purpose::NVME_COMPLETION: return "nvme_completion";
    case Purpose::OTHER: return "other";
  }
  return "other";
}

const char* to_string(Direction direction) {
  return direction == Direction::HOST_TO_DEVICE ? "host_to_device" : "device_to_host";
}

PcieLink::PcieLink(sc_core::sc_module_name name, const LinkConfig& config, core::EnergyLedger* ledger)
    : sc_module(name),
      config_(config),
      ledger_(ledger),
      host_to_device_("host_to_device", config.effective_bytes_per_ns(), config.latency),
      device_to_host_("device_to_host", config.effective_bytes_per_ns(), config.latency),
      h2d_stats_(std::string(this->name()) + ".host_to_device"),
      d2h_stats_(std::string(this->name()) + ".device_to_host"),
      stats_(this->name()),
      energy_pj_(stats_.scalar("dynamic_energy", "pJ", "energy of the line bits of all transfers")) {
  for (int d = 0; d < 2; ++d) {
    stats::Group& group = d == 0 ? h2d_stats_ : d2h_stats_;
    for (int p = 0; p < kPurposeCount; ++p) {
      const Purpose purpose = static_cast<Purpose>(p);
      group.formula_integer(std::string(to_string(purpose)) + "_bytes", "bytes",
                            std::string("payload bytes moved for ") + to_string(purpose),
                            [this, d, p] { return bytes_by_purpose_[d][p]; });
    }
  }
  if (ledger_) ledger_->add_static_power(this->name(), config_.static_power_w);
}

core::Server& PcieLink::server(Direction direction) {
  return direction == Direction::HOST_TO_DEVICE ? host_to_device_ : device_to_host_;
}

const core::Server& PcieLink::server(Direction direction) const {
  return direction == Direction::HOST_TO_DEVICE ? host_to_device_ : device_to_host_;
}

sc_core::sc_time PcieLink::transfer(Direction direction, uint64_t bytes, Purpose purpose, Done done) {
  core::Server& s = server(direction);
  const sc_core::sc_time occupancy = config_.occupancy(bytes);
  const sc_core::sc_time start = s.free_at();
  const sc_core::sc_time completion = s.submit(occupancy, bytes, std::move(done));
  bytes_by_purpose_[static_cast<int>(direction)][static_cast<int>(purpose)] += bytes;
  const double pj = config_.energy_pj(bytes);
  energy_pj_ += pj;
  if (ledger_ && bytes > 0) ledger_->add(name(), pj * 1e-12, start.value(), (start + occupancy).value());
  return completion;
}

void PcieLink::book(Direction direction, const core::ClockUse& use, Purpose purpose, uint64_t bytes,
                    Purpose other_purpose, uint64_t first_start_ps, double energy_pj) {
  server(direction).book(use);
  bytes_by_purpose_[static_cast<int>(direction)][static_cast<int>(purpose)] += bytes;
  bytes_by_purpose_[static_cast<int>(direction)][static_cast<int>(other_purpose)] += use.bytes - bytes;
  energy_pj_ += energy_pj;
  if (ledger_ && use.bytes > 0) ledger_->add(name(), energy_pj * 1e-12, first_start_ps, use.free_ps);
}

sc_core::sc_time PcieLink::free_at(Direction direction) const { return server(direction).free_at(); }

uint64_t PcieLink::bytes(Direction direction) const { return server(direction).bytes(); }

uint64_t PcieLink::bytes(Direction direction, Purpose purpose) const {
  return bytes_by_purpose_[static_cast<int>(direction)][static_cast<int>(purpose)];
}

uint64_t PcieLink::bytes(Purpose purpose) const {
  return bytes(Direction::HOST_TO_DEVICE, purpose) + bytes(Direction::DEVICE_TO_HOST, purpose);
}

uint64_t PcieLink::total_bytes() const { return host_to_device_.bytes() + device_to_host_.bytes(); }

uint64_t PcieLink::requests(Direction direction) const { return server(direction).requests(); }

sc_core::sc_time PcieLink::busy_time(Direction direction) const { return server(direction).busy_time(); }

void PcieLink::trace(vcd::Writer& writer) {
  host_to_device_.trace(writer, {vcd::Role::kPcie});
  device_to_host_.trace(writer, {vcd::Role::kPcie});
}

}  // namespace ispsim::link
