// The cost primitives of paper 1's analytical model (Sec. 4), exactly as
// published, and the per-element operation counts of nonlinear ops. No SystemC.
//
//   eq. (2)  t_comp = N_op / P              E_comp = N_op e_op + ceil(N_op / S) e_ovhd
//   eq. (3)  t_xfer = t_l + t_o + Bytes/B   E_xfer = 8 Bytes e_b
//   eq. (4)  overlap(t1, t2) = max(t1, t2) + (1 - rho) min(t1, t2)
#pragma once

#include <cstdint>
#include <vector>

namespace ispsim::cim {

// eq. (2): one engine with peak throughput P (ops per ns = Gop/s), op energy,
// SIMD width S and per-group (per-instruction) overhead.
struct ComputeCost {
  double ops_per_ns = 0;
  double op_pj = 0;
  uint64_t simd_width = 1;
  double overhead_pj = 0;

  double time_ns(double ops) const { return ops / ops_per_ns; }
  double energy_pj(double ops) const;
};

// eq. (3): a transfer over a link of bandwidth B (bytes per ns = GB/s) with
// latency t_l and set-up t_o (both 0 for DRAM and flash) and energy per bit.
struct TransferCost {
  double bytes_per_ns = 0;
  double latency_ns = 0;
  double setup_ns = 0;
  double pj_per_bit = 0;

  double time_ns(double bytes) const { return latency_ns + setup_ns + bytes / bytes_per_ns; }
  double energy_pj(double bytes) const { return 8.0 * bytes * pj_per_bit; }
};

// eq. (4) for two independent engines of one stage.
double overlap_ns(double t1, double t2, double rho);
// eq. (4) folded over several engines of one stage: overlap(overlap(t1, t2), t3)...
double overlap_ns(const std::vector<double>& times, double rho);

// Operation counts per element of a nonlinear op (trace NonlinearKind), FP32 on
// the NPU/CPU or as integer approximations on the SSD-CIM controller. See
// models/cim/README.md for the derivation of each row.
struct FloatOps {
  double add = 0, mul = 0, div = 0, sqrt = 0, exp = 0;
  double total() const { return add + mul + div + sqrt + exp; }
};
struct IntOps {
  double add = 0, mul = 0;
};
// `kind` is a trace::NonlinearKind value; unknown kinds throw std::logic_error.
FloatOps float_ops_per_element(int kind);
IntOps int_ops_per_element(int kind);

}  // namespace ispsim::cim
