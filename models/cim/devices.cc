#include "models/cim/devices.h"

#include <algorithm>
#include <cmath>


namespace ispsim::cim {

Npu Npu::from_params(const schema::NpuParams& p) {
  Npu n;
  n.matrix = {p.peak_tmacs() * 1e3, p.mac_energy_pj(), p.simd_width(), p.instruction_overhead_pj()};
  n.vector_ops_per_ns = p.fp32_vector_gops();
  n.simd_width = p.simd_width();
  n.overhead_pj = p.instruction_overhead_pj();
  return n;
}

HostCpu HostCpu::from_params(const schema::HostCpuParams& p) {
  HostCpu c;
  c.p = p;
  c.ops_per_ns = p.peak_gops();
  return c;
}

double HostCpu::float_energy_pj(const FloatOps& ops, uint64_t simd, double overhead_pj) const {
  const double op = ops.add * p.fp32_add_pj() + ops.mul * p.fp32_mul_pj() + ops.div * p.fp32_div_pj() +
                    ops.sqrt * p.fp32_sqrt_pj() + ops.exp * p.fp32_exp_pj();
  const double s = static_cast<double>(simd);
  const double instructions = std::ceil((ops.add + ops.mul + ops.div + ops.sqrt) / s) +
                              std::ceil(ops.exp / s) * p.exp_instructions();
  return op + instructions * overhead_pj;
}

double HostCpu::mac_energy_pj(double macs, uint64_t simd, double overhead_pj) const {
  return macs * (p.fp32_mul_pj() + p.fp32_add_pj()) + std::ceil(macs / static_cast<double>(simd)) * overhead_pj;
}

Ddr5 Ddr5::from_params(const schema::Ddr5Params& p) {
  Ddr5 d;
  d.transfer = {p.bandwidth_gbps(), 0, 0, p.energy_pj_per_bit()};
  d.capacity_bytes = p.capacity_bytes();
  return d;
}

CimArray CimArray::from_params(const schema::CimArrayParams& p, schema::CimParams::ThroughputMeaning meaning) {
  CimArray a;
  a.p = p;
  a.meaning = meaning;
  return a;
}

double CimArray::pass_time_ns(const CimPass& pass) const {
  if (meaning == schema::CimParams::READ_BANDWIDTH) return pass.operand_bytes() / p.internal_read_gbps();
  return pass.macs() / (p.mac_tops() * 1e3);
}

double CimArray::pass_energy_pj(const CimPass& pass) const {
  const double io_units = p.io_buffer_basis() == schema::CimArrayParams::PER_MAC
                              ? pass.macs()
                              : static_cast<double>(pass.in_bytes + pass.out_bytes);
  return pass.macs() * p.mac_energy_pj() + pass.operand_bytes() * 8.0 * p.internal_read_energy_pj_per_bit() +
         io_units * p.io_buffer_energy_pj_per_byte();
}

ComputeCost CimArray::periphery() const {
  return {p.postprocess_gops(), p.argmax_pj(), 1, p.postprocess_overhead_pj()};
}

CimController CimController::from_params(const schema::CimControllerParams& p) {
  CimController c;
  c.p = p;
  return c;
}

double CimController::int_time_ns(const IntOps& ops) const {
  return std::max(ops.mul / p.i32_mul_gops(), ops.add / p.i32_add_gops());
}

double CimController::int_energy_pj(const IntOps& ops) const {
  return ops.mul * p.i32_mul_pj() + ops.add * p.i32_add_pj() + (ops.mul + ops.add) * p.op_overhead_pj();
}

InternalBus InternalBus::from_params(const schema::InternalBusParams& p) {
  InternalBus b;
  b.transfer = {p.bandwidth_gbps(), p.latency_ns(), p.setup_ns(), p.energy_pj_per_bit()};
  return b;
}

}  // namespace ispsim::cim
