// The host GPU (an edge Ampere GPU with unified LPDDR5, Jetson Orin NX class):
// one in-order stream of trace ops, each timed by a roofline.
//
//   duration = launch_overhead + max(flops / (peak x efficiency of the op class),
//                                    bytes / (DRAM bandwidth x memory_efficiency))
//
// An op with measured_duration_ns (a profiled kernel) takes exactly that time.
// FLOPs and DRAM bytes per op kind (act = activation bits / 8, w = weight bits / 8,
// kv = kv bits / 8; dtypes set on the op override the model's widths):
//   gemm       2MNK;  A (M K act) + B (K N, w if b_is_weight else act) + C (M N act).
//              Class GEMV when M == 1, else GEMM.
//   lm_head    2 rows hidden vocab;  weights hidden vocab w + rows hidden act +
//              rows vocab act. Class GEMV when rows == 1, else GEMM.
//   attention  4 x pairs x head_dim x heads, pairs = (query row, KV token) pairs
//              the rows see (causal: only KV positions <= the row's; see
//              attention_pairs()); Q and O rows (rows heads head_dim act each)
//              + K and V of every KV token seen (tokens kv_heads head_dim 2 kv).
//              Class ATTENTION. Softmax FLOPs are not counted.
//   nonlinear  elements x FLOPs/element of the kind (nonlinear_flops_per_element);
//              (inputs + 1) x elements x act, inputs = 2 for SWIGLU (gate, up) and
//              RESIDUAL_ADD, else 1 (norm weights and RoPE tables are not counted).
//              Class NONLINEAR.
//   embedding  no FLOPs; tokens hidden (w + act) (gather rows, write activations).
//              Class NONLINEAR.
//   hkvd_select  3 FLOPs per compared K/V element (difference, square, sum) over
//              context_tokens kv_heads head_dim 2 elements; reads the fresh and the
//              stored layer KV (2 x context_tokens kv_heads head_dim 2 kv).
//              Class NONLINEAR.
// kv_load, kv_append and the dictionary ops are not GPU ops (the runtime places
// them elsewhere): duration()/execute() throw BadInput for them.
//
// Statistics (under the module's path, e.g. "system.host.gpu"): ops, flops,
// bytes, busy_time in total and per class (<path>.gemm.ops, ...), and
// <path>.stream.* of the stream server. VCD: <path>.stream.outstanding.
// Energy: per op, flops x energy_pj_per_flop under the component <path> and
// bytes x 8 x dram_energy_pj_per_bit under <path>.dram, spread over the op;
// idle_power_w declared once as static power of <path>.
//
// A batched step (continuous batching, platforms/systems/serving_batch.h) runs
// the same op of several requests as one kernel: one launch; a weight op (gemm
// with a weight operand, LM head) is the op with the requests' rows stacked
// (M = sum of M, rows = sum of rows: the weights are read once, so its class is
// GEMM from two rows on); any other op is the sum of the ops' FLOPs and bytes
// (activations and each request's KV), of the first op's class.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "models/core/energy_ledger.h"
#include "models/core/server.h"
#include "models/core/stats.h"
#include "models/core/vcd.h"
#include "models/host/host_config.h"
#include "traces/trace.pb.h"

namespace ispsim::host {

enum class OpClass { GEMM = 0, GEMV, ATTENTION, NONLINEAR };
constexpr int kOpClassCount = 4;
// "gemm", "gemv", "attention", "nonlinear" (statistic name stems).
const char* to_string(OpClass op_class);

// What the roofline sees of one op.
struct OpCost {
  OpClass op_class = OpClass::NONLINEAR;
  uint64_t flops = 0;
  uint64_t bytes = 0;              // DRAM bytes read and written
  sc_core::sc_time compute_time;   // flops / (peak x class efficiency)
  sc_core::sc_time memory_time;    // bytes / (DRAM bandwidth x memory efficiency)
  sc_core::sc_time duration;       // launch + max(compute, memory), or the measured time
  bool measured = false;           // duration replayed from measured_duration_ns
};

// FLOPs per element of a nonlinear kind: SOFTMAX 5 (max, subtract, exp, sum,
// divide), RMSNORM 4 (square, sum, scale by 1/rms, multiply by weight), LAYERNORM
// 8 (mean and variance sums, subtract, scale, weight, bias), SILU 4 (negate, exp,
// add, divide), SWIGLU 5 (SiLU + multiply), RELU 1, GELU 8 (tanh approximation),
// ROPE 3 (two multiplies and an add), RESIDUAL_ADD 1, REQUANTIZE 2 (scale, round).
uint32_t nonlinear_flops_per_element(trace::NonlinearKind kind);

// (query row, KV token) pairs an attention op computes. Not causal: rows x KV
// tokens. Causal: the rows are the last `query_rows` of the candidate positions
// (the precomputed positions the HKVD mask selects, then the appended spans'
// positions, ascending), and a row at position p sees the KV tokens at positions
// <= p. A causal prefill of n rows over n tokens gives n(n+1)/2; a decode row
// at the end sees every token. If there are fewer candidates than rows, the rows
// are the last query_rows positions below the largest KV position + 1.
uint64_t attention_pairs(const trace::Attention& attention);
// KV tokens an attention op reads (the spans' lengths).
uint64_t attention_kv_tokens(const trace::Attention& attention);

class Gpu : public sc_core::sc_module {
 public:
  using Done = std::function<void()>;

  // `ledger` may be null (no energy bookkeeping).
  Gpu(sc_core::sc_module_name name, const HostConfig& config, core::EnergyLedger* ledger = nullptr);

  // Roofline cost of `op` on an idle GPU. Throws BadInput for an op kind the GPU
  // does not run (kv_load, kv_append, dictionary ops) or an empty op.
  OpCost cost(const trace::Op& op, const trace::ModelShape& shape) const;
  sc_core::sc_time duration(const trace::Op& op, const trace::ModelShape& shape) const {
    return cost(op, shape).duration;
  }
  // Roofline cost of `ops` (the same op of each request of a batch) run as one
  // batched kernel (see above); one op: cost(*ops[0]). Throws BadInput for an
  // empty batch, ops of different kinds or a measured duration.
  OpCost cost(const std::vector<const trace::Op*>& ops, const trace::ModelShape& shape) const;

  // Queues `op` on the in-order stream; returns its completion time. `done`
  // (may be empty) runs then.
  sc_core::sc_time execute(const trace::Op& op, const trace::ModelShape& shape, Done done);
  // Queues `ops` as one batched kernel (cost(ops)); returns its completion time.
  sc_core::sc_time execute(const std::vector<const trace::Op*>& ops, const trace::ModelShape& shape, Done done);

  const HostConfig& config() const { return config_; }
  uint64_t ops() const { return stream_.requests(); }
  uint64_t ops(OpClass c) const { return per_class_[static_cast<int>(c)].ops; }
  uint64_t flops(OpClass c) const { return per_class_[static_cast<int>(c)].flops; }
  uint64_t bytes(OpClass c) const { return per_class_[static_cast<int>(c)].bytes; }
  sc_core::sc_time busy_time(OpClass c) const {
    return sc_core::sc_time::from_value(per_class_[static_cast<int>(c)].busy_ps);
  }
  sc_core::sc_time busy_time() const { return stream_.busy_time(); }
  // When the stream can start its next op (>= now).
  sc_core::sc_time free_at() const { return stream_.free_at(); }
  double dynamic_energy_pj() const { return energy_pj_.value(); }

  void trace(vcd::Writer& writer) { stream_.trace(writer, {vcd::Role::kHost}); }

 private:
  struct OpWork {
    double flops = 0, bytes = 0;
    OpClass op_class = OpClass::NONLINEAR;
  };
  bool work_of(const trace::Op& op, const trace::ModelShape& shape, OpWork& work) const;
  // launch + max(compute, memory) of `work`; `id` names the op in errors.
  OpCost roofline(const OpWork& work, uint64_t id) const;
  sc_core::sc_time submit(const OpCost& c, Done done);
  struct ClassTotals {
    uint64_t ops = 0, flops = 0, bytes = 0, busy_ps = 0;
  };
  const HostConfig config_;
  core::EnergyLedger* ledger_;
  core::Server stream_;
  std::array<ClassTotals, kOpClassCount> per_class_{};
  stats::Group stats_;
  std::array<std::unique_ptr<stats::Group>, kOpClassCount> class_groups_;
  stats::Counter& flops_;
  stats::Scalar& energy_pj_;
};

}  // namespace ispsim::host
