// Resolved parameters of the host GPU and its DRAM (models/host): schema
// defaults applied, ranges checked, rates in the units the models use.
#pragma once

#include <cstdint>
#include <string>
#include <systemc>

#include "schema/host.pb.h"
#include "schema/resolve.h"

namespace ispsim::host {

// One host software path for KV that arrived from the SSD.
struct ReadPathConfig {
  sc_core::sc_time overhead;  // per read request
  double bytes_per_ns = 0;    // GB/s
};

enum class StagingPolicy { kFlexGenPlacement, kLru };

struct HostConfig {
  double peak_flops_per_ns = 0;      // dense FP16 tensor peak (TFLOPS x 1000)
  double dram_bytes_per_ns = 0;      // DRAM peak (GB/s)
  double gemm_efficiency = 0;
  double gemv_efficiency = 0;
  double attention_efficiency = 0;
  double nonlinear_efficiency = 0;
  double memory_efficiency = 0;
  sc_core::sc_time launch_overhead;
  double energy_pj_per_flop = 0;
  double dram_energy_pj_per_bit = 0;
  double idle_power_w = 0;
  uint64_t dram_capacity_bytes = 0;
  uint64_t workspace_bytes = 0;
  bool tied_lm_head = false;
  // The two host paths of KV read from the SSD (models/host/storage_read_path.h).
  ReadPathConfig load_path;  // precomputed KV from the RAG store
  ReadPathConfig swap_path;  // KV the host offloaded itself
  StagingPolicy staging_policy = StagingPolicy::kFlexGenPlacement;
  // A KV append copies the layer's cache into a new tensor (CONCATENATE).
  bool kv_grows_by_copy = false;

  // `params` resolved (schema/resolve.h); unit conversions only. An unresolved
  // message is a programming error (std::logic_error naming `where`).
  static HostConfig from_params(const schema::HostParams& params, const std::string& where = "host");
};

}  // namespace ispsim::host
