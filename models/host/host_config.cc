#include "models/host/host_config.h"

#include <cmath>

#include "schema/resolve.h"

namespace ispsim::host {
namespace {

sc_core::sc_time us(double microseconds) {
  return sc_core::sc_time::from_value(static_cast<sc_dt::uint64>(std::llround(microseconds * 1e6)));
}

}  // namespace

HostConfig HostConfig::from_params(const schema::HostParams& params, const std::string& where) {
  schema::require_resolved(params, where);
  const schema::HostParams& p = params;

  HostConfig c;
  c.peak_flops_per_ns = p.gpu_peak_tflops() * 1e3;
  c.dram_bytes_per_ns = p.dram_bandwidth_gbps();
  c.gemm_efficiency = p.gemm_efficiency();
  c.gemv_efficiency = p.gemv_efficiency();
  c.attention_efficiency = p.attention_efficiency();
  c.nonlinear_efficiency = p.nonlinear_efficiency();
  c.memory_efficiency = p.memory_efficiency();
  c.launch_overhead = sc_core::sc_time::from_value(static_cast<sc_dt::uint64>(std::llround(p.launch_overhead_ns() * 1e3)));
  c.energy_pj_per_flop = p.energy_pj_per_flop();
  c.dram_energy_pj_per_bit = p.dram_energy_pj_per_bit();
  c.idle_power_w = p.idle_power_w();
  c.dram_capacity_bytes = p.dram_capacity_bytes();
  c.workspace_bytes = p.workspace_bytes();
  c.tied_lm_head = p.tied_lm_head();
  c.load_path = {us(p.storage_read_overhead_us()), p.storage_read_gbps()};
  c.swap_path = {us(p.swap_read_overhead_us()), p.swap_read_gbps()};
  c.kv_grows_by_copy = p.kv_cache_growth() == schema::HostParams::CONCATENATE;
  c.staging_policy = p.staging_policy() == schema::HostParams::LRU ? StagingPolicy::kLru : StagingPolicy::kFlexGenPlacement;
  return c;
}

}  // namespace ispsim::host
