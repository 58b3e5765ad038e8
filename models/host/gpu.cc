#include "models/host/gpu.h"

#include <algorithm>
#include <cstring>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "common/error.h"
#include "traces/trace_validator.h"

namespace ispsim::host {

using sc_core::sc_time;

namespace {

sc_time picoseconds(double ps) { return sc_time::from_value(static_cast<sc_dt::uint64>(std::llround(ps))); }

// Element width in bytes: the op's dtype when set, else the model's width.
double element_bytes(trace::DType dtype, uint32_t fallback_bits) {
  const uint32_t bits = trace::dtype_bits(dtype);
  return (bits ? bits : fallback_bits) / 8.0;
}

uint64_t round_bytes(double bytes) { return static_cast<uint64_t>(std::ceil(bytes)); }

// Beyond 2^63 ps (106 days) an op cannot be simulated: a corrupt or absurd op.
constexpr double kMaxPs = 9.2e18;

}  // namespace

const char* to_string(OpClass op_class) {
  switch (op_class) {
    case OpClass::GEMM: return "gemm";
    case OpClass::GEMV: return "gemv";
    case OpClass::ATTENTION: return "attention";
    case OpClass::NONLINEAR: return "nonlinear";
  }
  return "nonlinear";
}

uint32_t nonlinear_flops_per_element(trace::NonlinearKind kind) {
  switch (kind) {
    case trace::NONLINEAR_SOFTMAX: return 5;
    case trace::NONLINEAR_RMSNORM: return 4;
    case trace::NONLINEAR_LAYERNORM: return 8;
    case trace::NONLINEAR_SILU: return 4;
    case trace::NONLINEAR_SWIGLU: return 5;
    case trace::NONLINEAR_RELU: return 1;
    case trace::NONLINEAR_GELU: return 8;
    case trace::NONLINEAR_ROPE: return 3;
    case trace::NONLINEAR_RESIDUAL_ADD: return 1;
    case trace::NONLINEAR_REQUANTIZE: return 2;
    default: return 0;
  }
}

uint64_t attention_kv_tokens(const trace::Attention& attention) {
  uint64_t tokens = 0;
  for (const trace::KvSpan& span : attention.kv())
    if (span.tokens().end() > span.tokens().begin()) tokens += span.tokens().end() - span.tokens().begin();
  return tokens;
}

namespace {

using Wide = unsigned __int128;

// Sum over row positions p in [x, y) of the KV tokens at positions <= p, i.e.
// of sum over spans [b, e) of clamp(min(e, p + 1) - b, 0): zero while p < b,
// an arithmetic series while b <= p < e, then e - b per row.
Wide visible_pairs(const std::vector<std::pair<uint64_t, uint64_t>>& spans, uint64_t x, uint64_t y) {
  Wide total = 0;
  for (const auto& [b, e] : spans) {
    // Rows b <= p < e see p + 1 - b tokens of this span: 1, 2, ..., (e - b).
    const uint64_t lo = std::max(x, b), hi = std::min(y, e);
    if (lo < hi) {
      const Wide first = lo + 1 - b, last = hi - b;  // last term is (hi - 1) + 1 - b
      total += (first + last) * (last - first + 1) / 2;
    }
    // Rows p >= e see the whole span.
    const uint64_t full_from = std::max(x, e);
    if (full_from < y) total += Wide(y - full_from) * (e - b);
  }
  return total;
}

uint64_t saturate(Wide v) { return v > Wide(UINT64_MAX) ? UINT64_MAX : static_cast<uint64_t>(v); }

}  // namespace

namespace {

// Where a span's candidate rows come from: a precomputed span's are the set
// bits [mask_bit, mask_bit + count) of the HKVD mask (bit i = i-th precomputed
// token), an appended span's are its `count` positions.
struct CandidateSpan {
  uint64_t begin = 0, count = 0;
  bool from_mask = false;
  uint64_t mask_bit = 0;
};

bool mask_bit_set(const std::string& bits, uint64_t i) { return (uint8_t(bits[i / 8]) >> (i % 8)) & 1u; }

// Set bits of [from, from + count), a word at a time between the ragged ends.
uint64_t set_bits(const std::string& bits, uint64_t from, uint64_t count) {
  uint64_t n = 0, i = from;
  const uint64_t end = from + count;
  for (; i < end && i % 64 != 0; ++i) n += mask_bit_set(bits, i);
  for (; i + 64 <= end; i += 64) {
    uint64_t word;
    std::memcpy(&word, bits.data() + i / 8, 8);
    n += uint64_t(__builtin_popcountll(word));
  }
  for (; i < end; ++i) n += mask_bit_set(bits, i);
  return n;
}

}  // namespace

// The candidates are counted, not listed, and the rows found walking back
// from the last: a decode op's one row costs popcounts over the mask, not a
// visit of its set bits. visible_pairs() adds up over rows, so the rows may
// be summed in any grouping.
uint64_t attention_pairs(const trace::Attention& attention) {
  const uint64_t rows = attention.query_rows();
  const uint64_t kv_tokens = attention_kv_tokens(attention);
  if (!attention.causal()) return saturate(Wide(rows) * kv_tokens);

  std::vector<std::pair<uint64_t, uint64_t>> spans;
  uint64_t max_end = 0;
  for (const trace::KvSpan& span : attention.kv()) {
    if (span.tokens().end() <= span.tokens().begin()) continue;
    spans.emplace_back(span.tokens().begin(), span.tokens().end());
    max_end = std::max<uint64_t>(max_end, span.tokens().end());
  }

  const trace::BitVector& mask = attention.hkvd_mask();
  const std::string& bits = mask.bits();
  std::vector<CandidateSpan> sources;
  Wide candidates = 0;
  uint64_t mask_bit = 0;
  for (const trace::KvSpan& span : attention.kv()) {
    const uint64_t begin = span.tokens().begin();
    const uint64_t n = span.tokens().end() > begin ? span.tokens().end() - begin : 0;
    if (span.region() != trace::KV_REGION_PRECOMPUTED) {
      sources.push_back({begin, n, false, 0});
      candidates += n;
      continue;
    }
    const uint64_t usable = std::min<uint64_t>({n, mask.bit_length() > mask_bit ? mask.bit_length() - mask_bit : 0,
                                                uint64_t(bits.size()) * 8 > mask_bit
                                                    ? uint64_t(bits.size()) * 8 - mask_bit
                                                    : 0});
    sources.push_back({begin, usable, true, mask_bit});
    candidates += set_bits(bits, mask_bit, usable);
    mask_bit += n;
  }

  if (candidates < rows) {
    // Inconsistent op: the rows are the last query_rows positions below max_end.
    const uint64_t first = max_end > rows ? max_end - rows : 0;
    return saturate(visible_pairs(spans, first, max_end));
  }
  // The rows are the last `rows` candidates.
  uint64_t left = rows;
  Wide pairs = 0;
  for (auto source = sources.rbegin(); source != sources.rend() && left > 0; ++source) {
    if (!source->from_mask) {
      const uint64_t take = std::min(left, source->count);
      const uint64_t end = source->begin + source->count;
      pairs += visible_pairs(spans, end - take, end);
      left -= take;
      continue;
    }
    for (uint64_t k = source->count; k > 0 && left > 0; --k) {
      if (!mask_bit_set(bits, source->mask_bit + k - 1)) continue;
      const uint64_t position = source->begin + k - 1;
      pairs += visible_pairs(spans, position, position + 1);
      --left;
    }
  }
  return saturate(pairs);
}

Gpu::Gpu(sc_core::sc_module_name name, const HostConfig& config, core::EnergyLedger* ledger)
    : sc_module(name),
      config_(config),
      ledger_(ledger),
      stream_("stream", 0.0, sc_core::SC_ZERO_TIME),
      stats_(this->name()),
      flops_(stats_.counter("flops", "FLOP", "floating-point operations of all ops")),
      energy_pj_(stats_.scalar("dynamic_energy", "pJ", "compute and DRAM energy of all ops")) {
  for (int c = 0; c < kOpClassCount; ++c) {
    class_groups_[c] = std::make_unique<stats::Group>(std::string(this->name()) + "." + to_string(OpClass(c)));
    stats::Group& g = *class_groups_[c];
    const std::string what = std::string(to_string(OpClass(c))) + " ops";
    g.formula_integer("ops", "count", what + " executed", [this, c] { return per_class_[c].ops; });
    g.formula_integer("flops", "FLOP", "floating-point operations of " + what, [this, c] { return per_class_[c].flops; });
    g.formula_integer("bytes", "bytes", "DRAM bytes of " + what, [this, c] { return per_class_[c].bytes; });
    g.formula("busy_time", "ns", "stream time of " + what,
              [this, c] { return static_cast<double>(per_class_[c].busy_ps) / 1e3; });
  }
  if (ledger_) ledger_->add_static_power(this->name(), config_.idle_power_w);
}

// An op's FLOPs, DRAM bytes and class (the roofline's inputs); false: not an op the GPU runs.
bool Gpu::work_of(const trace::Op& op, const trace::ModelShape& shape, OpWork& work) const {
  const double w = shape.weight_bits() / 8.0;
  const double kv = shape.kv_bits() / 8.0;
  const double hidden = shape.hidden(), heads = shape.heads(), kv_heads = shape.kv_heads(),
               head_dim = shape.head_dim();
  switch (op.kind_case()) {
    case trace::Op::kGemm: {
      const trace::Gemm& g = op.gemm();
      const double m = g.m(), n = g.n(), k = g.k();
      work.flops = 2 * m * n * k;
      work.bytes = m * k * element_bytes(g.a_dtype(), shape.activation_bits()) +
              k * n * element_bytes(g.b_dtype(), g.b_is_weight() ? shape.weight_bits() : shape.activation_bits()) +
              m * n * element_bytes(g.out_dtype(), shape.activation_bits());
      work.op_class = g.m() == 1 ? OpClass::GEMV : OpClass::GEMM;
      break;
    }
    case trace::Op::kLmHead: {
      const trace::LmHead& l = op.lm_head();
      const double rows = l.rows(), vocab = shape.vocab();
      const double out = element_bytes(l.dtype(), shape.activation_bits());
      work.flops = 2 * rows * hidden * vocab;
      work.bytes = hidden * vocab * w + rows * hidden * out + rows * vocab * out;
      work.op_class = l.rows() == 1 ? OpClass::GEMV : OpClass::GEMM;
      break;
    }
    case trace::Op::kAttention: {
      const trace::Attention& a = op.attention();
      const double q = element_bytes(a.dtype(), shape.activation_bits());
      work.flops = 4.0 * static_cast<double>(attention_pairs(a)) * head_dim * heads;
      work.bytes = 2 * a.query_rows() * heads * head_dim * q +
              static_cast<double>(attention_kv_tokens(a)) * kv_heads * head_dim * 2 * kv;
      work.op_class = OpClass::ATTENTION;
      break;
    }
    case trace::Op::kNonlinear: {
      const trace::Nonlinear& nl = op.nonlinear();
      const double e = static_cast<double>(nl.elements());
      const int inputs = nl.kind() == trace::NONLINEAR_SWIGLU || nl.kind() == trace::NONLINEAR_RESIDUAL_ADD ? 2 : 1;
      work.flops = e * nonlinear_flops_per_element(nl.kind());
      work.bytes = (inputs + 1) * e * element_bytes(nl.dtype(), shape.activation_bits());
      work.op_class = OpClass::NONLINEAR;
      break;
    }
    case trace::Op::kEmbedding: {
      const trace::Embedding& em = op.embedding();
      work.bytes = static_cast<double>(em.tokens()) * hidden * (w + element_bytes(em.dtype(), shape.activation_bits()));
      work.op_class = OpClass::NONLINEAR;
      break;
    }
    case trace::Op::kHkvdSelect: {
      const double elements = static_cast<double>(op.hkvd_select().context_tokens()) * kv_heads * head_dim * 2;
      work.flops = 3 * elements;
      work.bytes = 2 * elements * kv;
      work.op_class = OpClass::NONLINEAR;
      break;
    }
    case trace::Op::kKvAppend: {
      if (!config_.kv_grows_by_copy) return false;
      // CONCATENATE: the layer's cache of `begin` tokens is read and written
      // again with the appended tokens, as one new tensor.
      const trace::KvTransfer& t = op.kv_append();
      const double per_token = kv_heads * head_dim * 2 * kv;
      work.bytes = (2.0 * static_cast<double>(t.tokens().begin()) + static_cast<double>(t.tokens().end() - t.tokens().begin())) *
              per_token;
      work.op_class = OpClass::NONLINEAR;
      break;
    }
    default:
      return false;
  }
  return true;
}

OpCost Gpu::roofline(const OpWork& work, uint64_t id) const {
  const double flops = work.flops, bytes = work.bytes;
  OpCost c;
  c.op_class = work.op_class;
  double efficiency = config_.nonlinear_efficiency;
  switch (c.op_class) {
    case OpClass::GEMM: efficiency = config_.gemm_efficiency; break;
    case OpClass::GEMV: efficiency = config_.gemv_efficiency; break;
    case OpClass::ATTENTION: efficiency = config_.attention_efficiency; break;
    case OpClass::NONLINEAR: efficiency = config_.nonlinear_efficiency; break;
  }
  const double compute_ps = flops / (config_.peak_flops_per_ns * efficiency) * 1e3;
  const double memory_ps = bytes / (config_.dram_bytes_per_ns * config_.memory_efficiency) * 1e3;
  if (!(flops < kMaxPs && bytes < kMaxPs && compute_ps < kMaxPs && memory_ps < kMaxPs)) {
    throw BadInput("gpu", "op " + std::to_string(id) + " needs more than 2^63 ps on the GPU (" +
                              std::to_string(flops) + " FLOP, " + std::to_string(bytes) + " bytes)");
  }
  c.flops = static_cast<uint64_t>(std::llround(flops));
  c.bytes = round_bytes(bytes);
  c.compute_time = picoseconds(compute_ps);
  c.memory_time = picoseconds(memory_ps);
  c.duration = config_.launch_overhead + std::max(c.compute_time, c.memory_time);
  return c;
}

OpCost Gpu::cost(const trace::Op& op, const trace::ModelShape& shape) const {
  OpWork work;
  if (!work_of(op, shape, work))
    throw BadInput("gpu", "op " + std::to_string(op.id()) + " is not an op the host GPU runs (kind " +
                            std::to_string(static_cast<int>(op.kind_case())) + ")");
  OpCost c = roofline(work, op.id());
  if (op.has_measured_duration_ns()) {
    if (static_cast<double>(op.measured_duration_ns()) * 1e3 >= kMaxPs)
      throw BadInput("gpu", "op " + std::to_string(op.id()) + ": measured_duration_ns = " +
                                std::to_string(op.measured_duration_ns()) + " ns exceeds 2^63 ps");
    c.measured = true;
    c.duration = picoseconds(static_cast<double>(op.measured_duration_ns()) * 1e3);
  }
  return c;
}

namespace {

// A weight op: its weights are read once for the rows of a whole batch.
bool shares_weights(const trace::Op& op) { return (op.has_gemm() && op.gemm().b_is_weight()) || op.has_lm_head(); }

}  // namespace

OpCost Gpu::cost(const std::vector<const trace::Op*>& ops, const trace::ModelShape& shape) const {
  if (ops.empty()) throw BadInput("gpu", "an empty batched op");
  const trace::Op& first = *ops.front();
  if (ops.size() == 1) return cost(first, shape);
  for (const trace::Op* op : ops)
    if (op->kind_case() != first.kind_case() || op->has_measured_duration_ns() || shares_weights(*op) != shares_weights(first))
      throw BadInput("gpu", "op " + std::to_string(op->id()) + " cannot join op " + std::to_string(first.id()) +
                                " in a batched kernel (another kind, or a measured duration)");
  OpWork work;
  if (shares_weights(first)) {
    trace::Op stacked = first;  // the op over every request's rows
    uint64_t rows = 0;
    for (const trace::Op* op : ops) rows += op->has_gemm() ? op->gemm().m() : op->lm_head().rows();
    if (stacked.has_gemm()) stacked.mutable_gemm()->set_m(rows);
    else stacked.mutable_lm_head()->set_rows(rows);
    work_of(stacked, shape, work);
  } else {
    for (const trace::Op* op : ops) {
      OpWork one;
      if (!work_of(*op, shape, one))
        throw BadInput("gpu", "op " + std::to_string(op->id()) + " is not an op the host GPU runs");
      work.flops += one.flops;
      work.bytes += one.bytes;
      work.op_class = one.op_class;
    }
  }
  return roofline(work, first.id());
}

sc_time Gpu::execute(const trace::Op& op, const trace::ModelShape& shape, Done done) {
  return submit(cost(op, shape), std::move(done));
}

sc_time Gpu::execute(const std::vector<const trace::Op*>& ops, const trace::ModelShape& shape, Done done) {
  return submit(cost(ops, shape), std::move(done));
}

sc_time Gpu::submit(const OpCost& c, Done done) {
  const sc_time start = stream_.free_at();
  const sc_time completion = stream_.submit(c.duration, c.bytes, std::move(done));
  ClassTotals& t = per_class_[static_cast<int>(c.op_class)];
  ++t.ops;
  t.flops += c.flops;
  t.bytes += c.bytes;
  t.busy_ps += c.duration.value();
  flops_ += c.flops;
  const double compute_pj = static_cast<double>(c.flops) * config_.energy_pj_per_flop;
  const double dram_pj = static_cast<double>(c.bytes) * 8 * config_.dram_energy_pj_per_bit;
  energy_pj_ += compute_pj + dram_pj;
  if (ledger_) {
    ledger_->add(name(), compute_pj * 1e-12, start.value(), completion.value());
    ledger_->add(std::string(name()) + ".dram", dram_pj * 1e-12, start.value(), completion.value());
  }
  return completion;
}

}  // namespace ispsim::host
