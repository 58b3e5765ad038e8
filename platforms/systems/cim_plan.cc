#include "platforms/systems/cim_plan.h"

#include <cmath>

#include "common/error.h"

namespace ispsim::systems {

using cim::FloatOps;
using cim::IntOps;
using cim::Lane;
using cim::Stage;
using cim::Step;
using schema::CimParams;

namespace {

constexpr double kInt32Bytes = 4;

FloatOps scaled(FloatOps ops, double n) { return {ops.add * n, ops.mul * n, ops.div * n, ops.sqrt * n, ops.exp * n}; }
IntOps scaled(IntOps ops, double n) { return {ops.add * n, ops.mul * n}; }

// Two lanes on the same engine run one after the other: one lane with both.
Lane merged(Lane a, const Lane& b) {
  a.occupancy_ns += b.occupancy_ns;
  a.bytes += b.bytes;
  a.energy_pj += b.energy_pj;
  return a;
}

uint64_t u64(double v) { return static_cast<uint64_t>(std::llround(v)); }

}  // namespace

CimPlanner::CimPlanner(const CimParams& cim, const link::LinkConfig& link, const trace::Header& header,
                       const CimResources& resources, const std::string& where)
    : p_(cim),
      link_(link),
      m_(header.model()),
      d_(header.request().dictionary()),
      r_(resources),
      npu_(cim::Npu::from_params(cim.npu())),
      cpu_(cim::HostCpu::from_params(cim.host_cpu())),
      dram_(cim::Ddr5::from_params(cim.dram())),
      array_(cim::CimArray::from_params(cim.array(), cim.throughput_meaning())),
      ctrl_(cim::CimController::from_params(cim.controller())),
      bus_(cim::InternalBus::from_params(cim.bus())) {
  if (p_.b2_pursuit_device() != CimParams::NPU && p_.b2_pursuit_device() != CimParams::HOST_CPU)
    throw BadInput(where, "cim.b2_pursuit_device = " + CimParams::Device_Name(p_.b2_pursuit_device()) +
                              " is not NPU or HOST_CPU");
  if (p_.nonlinear_device() != CimParams::CONTROLLER && p_.nonlinear_device() != CimParams::NPU)
    throw BadInput(where, "cim.nonlinear_device = " + CimParams::Device_Name(p_.nonlinear_device()) +
                              " is not CONTROLLER or NPU");
  if (p_.pcie_score_bits() % 8 != 0)
    throw BadInput(where, "cim.pcie_score_bits = " + std::to_string(p_.pcie_score_bits()) +
                              " bits is not a whole number of bytes (8, 16, 24 or 32)");
  if (is_dictionary() && header.request().kv_format() != trace::KV_DICTIONARY)
    throw BadInput(where, "the trace's request has no dictionary settings, which platform architecture " +
                              CimParams::Architecture_Name(p_.architecture()) + " needs");
  if (is_cim()) weight_bytes_ = act_bytes_ = kv_bytes_ = 1;  // INT8 weights, activations and window KV (Sec. 4)
}

bool CimPlanner::is_dictionary() const { return p_.architecture() != CimParams::NPU_DENSE_KV; }
bool CimPlanner::is_cim() const {
  return p_.architecture() == CimParams::CIM_CODES_IN_SRAM || p_.architecture() == CimParams::CIM_CODES_IN_HOST_DRAM;
}

uint64_t CimPlanner::code_bytes_per_token_layer() const {
  return uint64_t{2} * m_.kv_heads() * d_.k_high() * (d_.index_bits() + d_.coefficient_bits()) / 8;
}

// ---- lanes -------------------------------------------------------------------

Lane CimPlanner::dram(double bytes) const {
  return {r_.dram, bytes / dram_.transfer.bytes_per_ns, 0, 0, u64(bytes), dram_.transfer.energy_pj(bytes)};
}
Lane CimPlanner::npu_macs(double macs) const {
  return {r_.npu, npu_.matrix.time_ns(macs), 0, 0, 0, npu_.matrix.energy_pj(macs)};
}
Lane CimPlanner::npu_vector(const FloatOps& ops) const {
  return {r_.npu, cpu_.float_op_count(ops) / npu_.vector_ops_per_ns, 0, 0, 0,
          cpu_.float_energy_pj(ops, npu_.simd_width, npu_.overhead_pj)};
}
Lane CimPlanner::cpu(const FloatOps& ops) const {
  return {r_.cpu, cpu_.float_op_count(ops) / cpu_.ops_per_ns, 0, 0, 0, cpu_.float_energy_pj(ops)};
}
Lane CimPlanner::bus(double bytes) const {
  const cim::TransferCost& t = bus_.transfer;
  return {r_.bus, bytes / t.bytes_per_ns, t.setup_ns, t.latency_ns, u64(bytes), t.energy_pj(bytes)};
}
Lane CimPlanner::array(const cim::CimPass& pass, double passes) const {
  return {r_.array, array_.pass_time_ns(pass) * passes, 0, 0, 0, array_.pass_energy_pj(pass) * passes};
}
Lane CimPlanner::periphery(double elements) const {
  const cim::ComputeCost c = array_.periphery();
  return {r_.periphery, c.time_ns(elements), 0, 0, 0, c.energy_pj(elements)};
}
Lane CimPlanner::controller(const IntOps& ops) const {
  return {r_.controller, ctrl_.int_time_ns(ops), 0, 0, 0, ctrl_.int_energy_pj(ops)};
}
Lane CimPlanner::sram(double bytes) const {
  // SRAM access time is not modelled: window and code reads stream at SRAM
  // speed, far above the 50 Gop/s integer units that consume them.
  return {r_.sram, 0, 0, 0, u64(bytes), ctrl_.sram_energy_pj(bytes)};
}
Lane CimPlanner::pcie(bool to_host, double bytes) const {
  const uint64_t b = u64(bytes);
  return {to_host ? r_.pcie_to_host : r_.pcie_to_ssd, link_.occupancy(b).to_seconds() * 1e9, p_.pcie_setup_ns(),
          link_.latency.to_seconds() * 1e9, b, link_.energy_pj(b)};
}

Step CimPlanner::pipelined(Stage stage, std::vector<Lane> lanes, double rho) const {
  Step s;
  s.stage = stage;
  s.lanes = std::move(lanes);
  s.chunks = p_.pipeline_chunks();
  s.rho = rho;
  return s;
}

Step CimPlanner::sequential(Stage stage, std::vector<Lane> lanes) {
  Step s;
  s.stage = stage;
  s.lanes = std::move(lanes);
  return s;
}

uint64_t CimPlanner::vectors_per_pass(uint64_t heads, uint64_t tokens) const {
  switch (p_.pass_sharing()) {
    case CimParams::PER_VECTOR: return 1;
    case CimParams::PER_TOKEN: return heads;
    default: return heads * tokens;
  }
}

// ---- ops -----------------------------------------------------------------------

std::vector<Step> CimPlanner::weight_gemv(uint64_t n, uint64_t k) const {
  const double nk = static_cast<double>(n) * k;
  if (!is_cim())  // the NPU streams FP16 weights from DRAM every token
    return {pipelined(Stage::WEIGHTS, {dram(nk * weight_bytes_ + (n + k) * act_bytes_), npu_macs(nk)}, p_.rho_npu())};
  // Weights stationary in flash: broadcast x, in-place INT8 MACs, INT32 partial
  // sums back, requantization to INT8 on the controller (Sec. 4, Figure 4b).
  const cim::CimPass pass{1, n, k, k, n * 4};
  return {pipelined(Stage::WEIGHTS,
                    {bus(k), array(pass, 1), bus(n * kInt32Bytes), controller({double(n), double(n)})},
                    p_.rho_cim())};
}

std::vector<Step> CimPlanner::nonlinear(int kind, double elements) const {
  const bool per_row_root = kind == trace::NONLINEAR_RMSNORM || kind == trace::NONLINEAR_LAYERNORM;
  FloatOps fops = scaled(cim::float_ops_per_element(kind), elements);
  if (per_row_root) fops.sqrt += 1, fops.div += 1;
  if (!is_cim()) return {sequential(Stage::NONLINEAR, {npu_vector(fops)})};
  if (p_.nonlinear_device() == CimParams::CONTROLLER)
    return {sequential(Stage::NONLINEAR, {controller(scaled(cim::int_ops_per_element(kind), elements))})};
  // Offloaded to the host NPU (Appendix B ablation): INT32 inputs up, INT8 results down.
  const double inputs = (kind == trace::NONLINEAR_SWIGLU || kind == trace::NONLINEAR_RESIDUAL_ADD) ? 2 : 1;
  return {pipelined(Stage::NONLINEAR,
                    {pcie(true, elements * inputs * kInt32Bytes), npu_vector(fops), pcie(false, elements)},
                    p_.rho_npu())};
}

std::vector<Step> CimPlanner::kv_append(uint64_t tokens) const {
  const double bytes = double(tokens) * m_.kv_heads() * m_.head_dim() * 2 * kv_bytes_;
  if (!is_cim()) return {sequential(Stage::KV_WRITE, {dram(bytes)})};
  return {sequential(Stage::KV_WRITE, {sram(bytes)})};  // INT8 K and V into the local window
}

std::vector<Step> CimPlanner::dense_attention(uint64_t tokens) const {
  const double hq = m_.heads(), d = m_.head_dim(), t = double(tokens);
  const double kv = t * m_.kv_heads() * d * 2 * kv_bytes_;
  std::vector<Step> steps = {
      pipelined(Stage::ATTENTION, {dram(kv + 2 * hq * d * act_bytes_), npu_macs(2 * hq * t * d)}, p_.rho_npu())};
  for (Step& s : nonlinear(trace::NONLINEAR_SOFTMAX, hq * t)) steps.push_back(std::move(s));
  return steps;
}

std::vector<Step> CimPlanner::dict_encode(const trace::DictEncode& e) const {
  const double parts = e.parts() == trace::KV_PARTS_K_AND_V ? 2 : 1;
  const double vectors = double(e.tokens()) * e.heads();
  const double m = e.atoms(), dim = e.vector_dim();
  const double group = std::min<double>(vectors, double(vectors_per_pass(e.heads(), e.tokens())));
  const double passes = std::ceil(vectors / group);
  const double code_bytes = vectors * parts * e.pursuit_iterations() * (d_.index_bits() + d_.coefficient_bits()) / 8.0;
  std::vector<Step> steps;
  if (is_cim()) {
    // One iteration (Sec. 4, KV cache write path): INT8 residuals to the array,
    // D^T r in place, argmax in the periphery, index + coefficient + atom back,
    // INT32 residual update and requantization on the controller.
    const cim::CimPass pass{u64(group), e.atoms(), e.vector_dim(), u64(group * dim), u64(group * m * kInt32Bytes)};
    Step it = pipelined(Stage::PURSUIT,
                        {bus(vectors * dim), array(pass, passes), periphery(vectors * m),
                         bus(vectors * (2 + kInt32Bytes + dim)), controller({2 * vectors * dim, 2 * vectors * dim})},
                        p_.rho_cim());
    it.repeat = u64(parts) * e.pursuit_iterations();
    steps.push_back(std::move(it));
    if (p_.architecture() == CimParams::CIM_CODES_IN_SRAM) {
      steps.push_back(sequential(Stage::PURSUIT, {sram(vectors * parts * dim + code_bytes)}));
    } else {  // S2: the codes go to host DRAM
      steps.push_back(sequential(Stage::PURSUIT, {sram(vectors * parts * dim)}));
      steps.push_back(sequential(Stage::TRANSFERS, {pcie(true, code_bytes), dram(code_bytes)}));
    }
    return steps;
  }
  // B2: the window vectors come from DRAM, the codes go back; every pass
  // streams the INT8 dictionary from DRAM ("additional DRAM transfers during encoding").
  steps.push_back(sequential(Stage::PURSUIT, {dram(vectors * parts * dim * kv_bytes_ + code_bytes)}));
  const double macs = vectors * m * dim, other = vectors * m + 2 * vectors * dim;  // argmax compares, residual update
  Lane compute = p_.b2_pursuit_device() == CimParams::HOST_CPU
                     ? Lane{r_.cpu, (macs + other) / cpu_.ops_per_ns, 0, 0, 0,
                            cpu_.mac_energy_pj(macs) + cpu_.float_energy_pj(FloatOps{other, vectors * dim, 0, 0, 0})}
                     : merged(npu_macs(macs), npu_vector(FloatOps{vectors * m + vectors * dim, vectors * dim, 0, 0, 0}));
  Step it = pipelined(Stage::PURSUIT, {dram(passes * m * dim * d_.dictionary_bits() / 8.0), compute}, p_.rho_npu());
  it.repeat = u64(parts) * e.pursuit_iterations();
  steps.push_back(std::move(it));
  return steps;
}

std::vector<Step> CimPlanner::dict_attention(const trace::DictAttention& a) const {
  const double hq = double(m_.heads()) * a.query_rows(), hkv = m_.kv_heads(), d = m_.head_dim();
  const double c = a.compressed_tokens(), w = a.window_tokens(), m = a.atoms();
  const double refined = std::ceil(a.refine_fraction() * c);
  // Code entries used per KV head and per K or V: K_low for every compressed
  // token, K_high - K_low more for the refined ones (Sec. 3.2.5).
  const double entries = c * a.k_low() + refined * (a.k_high() - a.k_low());
  const double entry_bytes = (d_.index_bits() + d_.coefficient_bits()) / 8.0;
  const double codes_one_part = hkv * entries * entry_bytes;
  const double window_one_part = w * hkv * d * kv_bytes_;
  std::vector<Step> steps;
  auto add = [&steps](std::vector<Step> more) {
    for (Step& s : more) steps.push_back(std::move(s));
  };

  if (!is_cim()) {  // B2: codes and both dictionaries from DRAM, KV reconstructed on the NPU
    const double bytes = 2 * codes_one_part + 2 * m * d * d_.dictionary_bits() / 8.0 + 2 * window_one_part +
                         2 * hq * d * act_bytes_;
    const double macs = 2 * hkv * entries * d + hq * d * (c + refined + w) + hq * d * (c + w);
    steps.push_back(pipelined(Stage::ATTENTION,
                              {dram(bytes), merged(npu_macs(macs), npu_vector(FloatOps{hq * c, 0, 0, 0, 0}))},
                              p_.rho_npu()));
    add(nonlinear(trace::NONLINEAR_SOFTMAX, hq * (c + w)));
    return steps;
  }

  const double group = std::min(hq, double(vectors_per_pass(u64(hq), 1)));
  const double passes = std::ceil(hq / group);
  const double score_bytes = p_.pcie_score_bits() / 8.0;
  // Q D_K^T in the array; the INT32 scores come back to the controller.
  const cim::CimPass scores{u64(group), a.atoms(), m_.head_dim(), u64(group * d), u64(group * m * kInt32Bytes)};
  steps.push_back(
      pipelined(Stage::ATTENTION, {bus(hq * d), array(scores, passes), bus(hq * m * kInt32Bytes)}, p_.rho_cim()));
  // Window logits Q K^T on the controller (INT8 window in SRAM).
  const IntOps window_dot{hq * w * d, hq * w * d};
  // The value side: attention-weighted atom sums through D_V (the non-transposed copy).
  const cim::CimPass values{u64(group), a.atoms(), m_.head_dim(), u64(group * m), u64(group * d * kInt32Bytes)};
  const Step apply_dv =
      pipelined(Stage::ATTENTION, {bus(hq * m), array(values, passes), bus(hq * d * kInt32Bytes)}, p_.rho_cim());

  if (p_.architecture() == CimParams::CIM_CODES_IN_SRAM) {
    steps.push_back(sequential(Stage::ATTENTION,
                               {sram(codes_one_part + window_one_part),
                                controller({hq * entries + hq * c + window_dot.add, hq * entries + window_dot.mul})}));
    add(nonlinear(trace::NONLINEAR_SOFTMAX, hq * (c + w)));
    steps.push_back(sequential(Stage::ATTENTION, {sram(codes_one_part + window_one_part),
                                                  controller({hq * entries + window_dot.add + hq * d,
                                                              hq * entries + window_dot.mul})}));
    steps.push_back(apply_dv);
    return steps;
  }
  // S2: scores and window logits to the host; the CPU combines them with the
  // codes in DRAM, runs the softmax and the value aggregation; atom weights and
  // window probabilities go back; D_V applies in the array.
  steps.push_back(sequential(Stage::ATTENTION, {sram(window_one_part), controller(window_dot)}));
  steps.push_back(sequential(Stage::TRANSFERS, {pcie(true, hq * m * score_bytes + hq * w * kInt32Bytes)}));
  steps.push_back(pipelined(Stage::ATTENTION, {dram(codes_one_part), cpu(FloatOps{hq * entries + hq * c, hq * entries})},
                            p_.rho_npu()));
  FloatOps softmax = scaled(cim::float_ops_per_element(trace::NONLINEAR_SOFTMAX), hq * (c + w));
  steps.push_back(sequential(Stage::NONLINEAR, {cpu(softmax)}));
  steps.push_back(pipelined(Stage::ATTENTION, {dram(codes_one_part), cpu(FloatOps{hq * entries, hq * entries})},
                            p_.rho_npu()));
  steps.push_back(sequential(Stage::TRANSFERS, {pcie(false, hq * m * score_bytes + hq * w * kInt32Bytes)}));
  steps.push_back(apply_dv);
  steps.push_back(sequential(Stage::ATTENTION,
                             {sram(window_one_part), controller({hq * w * d + hq * d, hq * w * d})}));
  return steps;
}

std::vector<Step> CimPlanner::plan(const trace::Op& op) const {
  auto reject = [&](const std::string& what) -> std::vector<Step> {
    throw BadInput("op " + std::to_string(op.id()),
                   what + " is not run by architecture " + CimParams::Architecture_Name(p_.architecture()));
  };
  switch (op.kind_case()) {
    case trace::Op::kGemm: {
      const trace::Gemm& g = op.gemm();
      if (!g.b_is_weight() || g.m() != 1) return reject("a GEMM other than a decode weight GEMV");
      return weight_gemv(g.n(), g.k());
    }
    case trace::Op::kLmHead:
      if (op.lm_head().rows() != 1) return reject("an LM head of more than one row");
      return weight_gemv(m_.vocab(), m_.hidden());
    case trace::Op::kEmbedding: {
      const double bytes = double(op.embedding().tokens()) * m_.hidden() * weight_bytes_;
      if (!is_cim()) return {sequential(Stage::WEIGHTS, {dram(bytes)})};
      const cim::CimPass row{0, 1, u64(bytes), 0, u64(bytes)};  // a row read out of the array, no MACs
      return {sequential(Stage::WEIGHTS, {array(row, 1), bus(bytes)})};
    }
    case trace::Op::kNonlinear:
      return nonlinear(op.nonlinear().kind(), double(op.nonlinear().elements()));
    case trace::Op::kKvAppend: {
      const trace::KvTransfer& t = op.kv_append();
      if (t.has_token_mask()) return reject("a masked KV append");
      return kv_append(t.tokens().end() - t.tokens().begin());
    }
    case trace::Op::kAttention: {
      if (is_dictionary()) return reject("dense attention");
      const trace::Attention& a = op.attention();
      if (a.query_rows() != 1 || a.has_hkvd_mask()) return reject("attention other than one decode row");
      uint64_t tokens = 0;
      for (const trace::KvSpan& s : a.kv()) tokens += s.tokens().end() - s.tokens().begin();
      return dense_attention(tokens);
    }
    case trace::Op::kDictEncode:
      if (!is_dictionary()) return reject("dict_encode");
      return dict_encode(op.dict_encode());
    case trace::Op::kDictAttention:
      if (!is_dictionary()) return reject("dict_attention");
      return dict_attention(op.dict_attention());
    default:
      return reject("this op kind");
  }
}

CimFootprint CimPlanner::footprint(uint64_t max_context) const {
  CimFootprint f;
  const uint64_t l = m_.layers(), h = m_.hidden(), hq = m_.heads(), hkv = m_.kv_heads(), d = m_.head_dim();
  const bool gated = m_.family() != trace::ARCHITECTURE_OPT;
  const uint64_t per_layer = h * (hq + 2 * hkv) * d + hq * d * h + (gated ? 3 : 2) * h * m_.ffn_dim();
  const uint64_t params = l * per_layer + 2 * uint64_t{m_.vocab()} * h;  // embedding and an untied LM head
  f.weight_bytes = u64(double(params) * weight_bytes_);
  const uint64_t kv_token = l * hkv * d * 2 * u64(kv_bytes_);
  if (!is_dictionary()) {
    f.kv_bytes = max_context * kv_token;
    f.dram_bytes = f.weight_bytes + f.kv_bytes;
    return f;
  }
  const uint64_t window = uint64_t{d_.window_tokens()} + d_.unit_tokens();
  const uint64_t compressed = max_context > d_.window_tokens() ? max_context - d_.window_tokens() : 0;
  f.kv_bytes = std::min(window, max_context) * kv_token;
  f.code_bytes = compressed * l * code_bytes_per_token_layer();
  f.pursuit_state_bytes =
      l * d_.unit_tokens() * hkv * 2 * (d * 4 + uint64_t{d_.k_high()} * (d_.index_bits() + d_.coefficient_bits()) / 8);
  const uint64_t dict_matrix = uint64_t{d_.atoms()} * d * d_.dictionary_bits() / 8;
  if (!is_cim()) {
    f.dictionary_bytes = l * 2 * dict_matrix;
    f.dram_bytes = f.weight_bytes + f.dictionary_bytes + f.kv_bytes + f.code_bytes + f.pursuit_state_bytes;
    return f;
  }
  f.dictionary_bytes = l * 3 * dict_matrix;  // D_K, D_V and the transposed copy of D_V (Sec. 7)
  f.flash_bytes = f.weight_bytes + f.dictionary_bytes;
  const uint64_t fixed = f.kv_bytes + f.pursuit_state_bytes;
  const uint64_t sram = ctrl_.p.sram_bytes();
  f.sram_code_capacity_tokens = sram > fixed ? (sram - fixed) / (l * code_bytes_per_token_layer()) : 0;
  if (p_.architecture() == CimParams::CIM_CODES_IN_SRAM) {
    f.sram_bytes = fixed + f.code_bytes;
  } else {
    f.sram_bytes = fixed;
    f.dram_bytes = f.code_bytes;
  }
  return f;
}

}  // namespace ispsim::systems
