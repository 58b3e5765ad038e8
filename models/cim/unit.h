// A timed resource of paper 1's platforms (NPU, host CPU, DDR5, CIM array and
// its periphery, controller, internal bus, controller SRAM): an FCFS server
// (core::Server) that a step occupies for its share of the work, with its
// statistics, energy records and waveform state. PCIe is models/link's
// PcieLink behind the same Resource interface (PcieResource).
//
// Statistics under the unit's SystemC path (e.g. "system.npu"):
//   .requests, .bytes, .busy_time, .utilization (core::Server), .energy (pJ)
// VCD: <path>.outstanding (requests submitted and not completed).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <systemc>

#include "models/core/energy_ledger.h"
#include "models/core/server.h"
#include "models/core/stats.h"
#include "models/core/vcd.h"
#include "models/link/pcie_link.h"

namespace ispsim::cim {

using Done = std::function<void()>;

class Resource {
 public:
  virtual ~Resource() = default;
  // Occupies the resource for `occupancy` (after `setup`, paid before it) moving
  // `bytes`, records `energy_pj`, then runs `done` after the resource's latency.
  virtual void submit(const sc_core::sc_time& setup, const sc_core::sc_time& occupancy, uint64_t bytes,
                      double energy_pj, Done done) = 0;
  virtual const std::string& component() const = 0;
  virtual void trace(vcd::Writer& writer) = 0;
};

class Unit : public sc_core::sc_module, public Resource {
 public:
  // `latency` is t_l (0 for compute units, DRAM and flash); `ledger` may be null.
  Unit(sc_core::sc_module_name name, const sc_core::sc_time& latency, core::EnergyLedger* ledger);
  void submit(const sc_core::sc_time& setup, const sc_core::sc_time& occupancy, uint64_t bytes, double energy_pj,
              Done done) override;
  const std::string& component() const override { return component_; }
  void trace(vcd::Writer& writer) override { server_.trace(writer); }
  double energy_pj() const { return energy_.value(); }
  sc_core::sc_time busy_time() const { return server_.busy_time(); }
  uint64_t bytes() const { return server_.bytes(); }
  // Hands the last merged energy record to the ledger; call before summarising it.
  void flush_energy();

  // Records merged into one before it goes to the ledger anyway (bounds how
  // long a busy unit holds the ledger's settled time back).
  static constexpr uint32_t kMaxMergedRecords = 1024;

 private:
  // Back-to-back records of the same power (the chunks of one lane) are merged
  // into one ledger record, so the ledger grows with steps, not with chunks.
  // While a merged record is held here its start is held open in the ledger
  // (EnergyLedger::open), so a ledger with a clock folds only up to it.
  void record_energy(double joules, uint64_t start_ps, uint64_t end_ps);
  struct Record {
    double joules = 0;
    uint64_t start_ps = 0, end_ps = 0;
    uint64_t ticket = 0;  // the ledger's hold on start_ps
    uint32_t merged = 0;
    bool open = false;
  } pending_;

  std::string component_;
  core::EnergyLedger* ledger_;
  core::Server server_;
  stats::Group stats_;
  stats::Scalar& energy_;
};

// One direction of the PCIe link: t_o (setup) on a DMA-setup server, then the
// link's own transfer (occupancy bytes / effective rate, latency = t_l). The
// link records its own energy (LinkConfig::energy_pj).
class PcieResource : public sc_core::sc_module, public Resource {
 public:
  PcieResource(sc_core::sc_module_name name, link::PcieLink& link, link::Direction direction,
               link::Purpose purpose);
  void submit(const sc_core::sc_time& setup, const sc_core::sc_time& occupancy, uint64_t bytes, double energy_pj,
              Done done) override;
  const std::string& component() const override { return component_; }
  void trace(vcd::Writer&) override {}  // the link traces both directions itself

 private:
  std::string component_;
  link::PcieLink& link_;
  link::Direction direction_;
  link::Purpose purpose_;
  core::Server setup_;
};

}  // namespace ispsim::cim
