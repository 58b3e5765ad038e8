// The devices of paper 1's platforms, resolved from their parameters
// (schema/cim.proto; Appendix A's tables are the defaults) into the
// cost primitives of eq. (2)-(3). Each struct is one module's closed forms; the
// SystemC side (time, statistics, energy records, waveform) is cim::Unit.
#pragma once

#include <cstdint>
#include <string>

#include "models/cim/cost.h"
#include "schema/cim.pb.h"

namespace ispsim::cim {

// NPU: BF16 matrix engine (MACs) and FP32 vector unit (nonlinear ops, pursuit
// argmax and residual updates on B2). Vector-op energies are Table A.1's FP32
// ones (host_cpu), the NPU's instruction overhead per group of simd_width.
struct Npu {
  ComputeCost matrix;     // one op = one BF16 MAC
  double vector_ops_per_ns = 0;
  uint64_t simd_width = 1;
  double overhead_pj = 0;
  static Npu from_params(const schema::NpuParams& p);
};

// Host CPU: FP32/INT32 ops at peak_gops, Table A.1 energies, 8-wide SIMD.
struct HostCpu {
  schema::HostCpuParams p;
  double ops_per_ns = 0;
  static HostCpu from_params(const schema::HostCpuParams& p);
  // Energy of `ops` FP32 ops of each kind executed with `simd` lanes per
  // instruction and `overhead_pj` per instruction; an exp takes exp_instructions.
  double float_energy_pj(const FloatOps& ops, uint64_t simd, double overhead_pj) const;
  double float_energy_pj(const FloatOps& ops) const { return float_energy_pj(ops, p.simd_width(), p.instruction_overhead_pj()); }
  // Time units of a mix: an exp counts exp_instructions ops.
  double float_op_count(const FloatOps& ops) const { return ops.total() + ops.exp * (p.exp_instructions() - 1); }
  // FP32 MACs as fused multiply-adds: (mul + add) energy each, one instruction per `simd` MACs.
  double mac_energy_pj(double macs, uint64_t simd, double overhead_pj) const;
  double mac_energy_pj(double macs) const { return mac_energy_pj(macs, p.simd_width(), p.instruction_overhead_pj()); }
};

// DDR5: eq. (3) with t_l = t_o = 0.
struct Ddr5 {
  TransferCost transfer;
  uint64_t capacity_bytes = 0;
  static Ddr5 from_params(const schema::Ddr5Params& p);
};

// A pass of the CIM array over a stationary operand of rows x cols INT8
// elements (a weight matrix or a layer's dictionary) serving `vectors` input
// vectors at once: vectors x rows x cols MACs and one read of the operand.
struct CimPass {
  uint64_t vectors = 1, rows = 0, cols = 0;
  uint64_t in_bytes = 0, out_bytes = 0;  // through the I/O buffer
  double macs() const { return static_cast<double>(vectors) * rows * cols; }
  double operand_bytes() const { return static_cast<double>(rows) * cols; }
};

struct CimArray {
  schema::CimArrayParams p;
  schema::CimParams::ThroughputMeaning meaning = schema::CimParams::MAC_RATE;
  static CimArray from_params(const schema::CimArrayParams& p, schema::CimParams::ThroughputMeaning meaning);
  // MAC_RATE: macs / mac_tops; READ_BANDWIDTH: operand bytes / internal_read_gbps
  // (every vector sharing the pass rides on the same read).
  double pass_time_ns(const CimPass& pass) const;
  // MACs x mac_energy + operand bits x internal read energy + I/O buffer bytes x 0.8 pJ.
  double pass_energy_pj(const CimPass& pass) const;
  // Peripheral argmax over `elements` values: time at postprocess_gops, energy (0.5 + 7) pJ each.
  ComputeCost periphery() const;
};

// SSD-CIM controller: INT32 multiply and add units working in parallel, and the SRAM.
struct CimController {
  schema::CimControllerParams p;
  static CimController from_params(const schema::CimControllerParams& p);
  double int_time_ns(const IntOps& ops) const;    // max(mul / mul rate, add / add rate)
  double int_energy_pj(const IntOps& ops) const;  // mul e + add e + (mul + add) overhead (S = 1)
  double sram_energy_pj(double bytes) const { return bytes * 8.0 * p.sram_energy_pj_per_bit(); }
};

// Internal bus controller <-> array: eq. (3) with t_l, t_o > 0.
struct InternalBus {
  TransferCost transfer;
  static InternalBus from_params(const schema::InternalBusParams& p);
};

}  // namespace ispsim::cim
