// Where and at what cost each decode op runs on paper 1's platforms (Sec. 4,
// "Layer modeling", "KV cache write path", "KV cache read path"): the steps of
// an op, each with its engines' eq.-(2)/(3) times and energies. The mapping of
// every op kind on B1, B2, S1 and S2 is written out in models/cim/README.md.
// No simulation here: the planner is closed forms only (tested that way); the
// system (cim_system.h) runs the steps on SystemC resources.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/cim/devices.h"
#include "models/cim/step.h"
#include "models/link/link_config.h"
#include "schema/platform.pb.h"
#include "traces/trace.pb.h"

namespace ispsim::systems {

// The resources the steps run on; null in closed-form use (tests, capacity checks).
struct CimResources {
  cim::Resource* npu = nullptr;
  cim::Resource* cpu = nullptr;
  cim::Resource* dram = nullptr;
  cim::Resource* array = nullptr;
  cim::Resource* periphery = nullptr;
  cim::Resource* controller = nullptr;
  cim::Resource* sram = nullptr;
  cim::Resource* bus = nullptr;
  cim::Resource* pcie_to_host = nullptr;
  cim::Resource* pcie_to_ssd = nullptr;
};

// Storage the platform needs for a decode run that reaches `max_context` tokens.
struct CimFootprint {
  uint64_t weight_bytes = 0;      // in DRAM (B1/B2, FP16) or in flash (S1/S2, INT8)
  uint64_t dictionary_bytes = 0;  // DRAM (B2: D_K, D_V) or flash (S1/S2: D_K, D_V, D_V^T)
  uint64_t kv_bytes = 0;          // dense KV (B1) or window KV (others), at the run's largest context
  uint64_t code_bytes = 0;        // sparse codes at the largest context
  uint64_t pursuit_state_bytes = 0;  // residuals and partial codes of one batch in every layer
  uint64_t dram_bytes = 0, flash_bytes = 0, sram_bytes = 0;  // per device, by placement
  uint64_t sram_code_capacity_tokens = 0;  // S1: compressed tokens whose codes fit next to window and state
};

class CimPlanner {
 public:
  // `cim` resolved (schema::resolved, as the loader does), `link` the PCIe link of S1/S2. Throws
  // BadInput(where, ...) for a combination the platform cannot run.
  CimPlanner(const schema::CimParams& cim, const link::LinkConfig& link, const trace::Header& header,
             const CimResources& resources, const std::string& where);

  std::vector<cim::Step> plan(const trace::Op& op) const;
  CimFootprint footprint(uint64_t max_context_tokens) const;
  // Bytes of one token's sparse codes in one layer (K and V, all KV heads, K_high entries).
  uint64_t code_bytes_per_token_layer() const;
  bool is_dictionary() const;
  bool is_cim() const;

 private:
  // Lanes on each engine (eq. 2 / eq. 3 with the engine's parameters).
  cim::Lane dram(double bytes) const;
  cim::Lane npu_macs(double macs) const;
  cim::Lane npu_vector(const cim::FloatOps& ops) const;
  cim::Lane cpu(const cim::FloatOps& ops) const;
  cim::Lane bus(double bytes) const;
  cim::Lane array(const cim::CimPass& pass, double passes) const;
  cim::Lane periphery(double elements) const;
  cim::Lane controller(const cim::IntOps& ops) const;
  cim::Lane sram(double bytes) const;
  cim::Lane pcie(bool to_host, double bytes) const;
  cim::Step pipelined(cim::Stage stage, std::vector<cim::Lane> lanes, double rho) const;
  static cim::Step sequential(cim::Stage stage, std::vector<cim::Lane> lanes);

  std::vector<cim::Step> weight_gemv(uint64_t n, uint64_t k) const;
  std::vector<cim::Step> nonlinear(int kind, double elements) const;
  std::vector<cim::Step> kv_append(uint64_t tokens) const;
  std::vector<cim::Step> dense_attention(uint64_t tokens) const;
  std::vector<cim::Step> dict_encode(const trace::DictEncode& e) const;
  std::vector<cim::Step> dict_attention(const trace::DictAttention& a) const;
  uint64_t vectors_per_pass(uint64_t heads, uint64_t tokens) const;

  schema::CimParams p_;
  link::LinkConfig link_;
  trace::ModelShape m_;
  trace::DictionarySettings d_;
  CimResources r_;
  cim::Npu npu_;
  cim::HostCpu cpu_;
  cim::Ddr5 dram_;
  cim::CimArray array_;
  cim::CimController ctrl_;
  cim::InternalBus bus_;
  double weight_bytes_ = 2, act_bytes_ = 2, kv_bytes_ = 2;  // element widths of the platform
};

}  // namespace ispsim::systems
