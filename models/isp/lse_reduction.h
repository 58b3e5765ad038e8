// Log-sum-exp (online softmax) reduction of partial attention outputs (MemLLM
// Sec. II-A, V-A, V-D), functional and timed.
//
// A partial of one row-head over some tokens j: m = max_j s_j, l = sum_j e^(s_j - m),
// o = sum_j e^(s_j - m) v_j (unnormalised). Merging (m1,l1,o1) and (m2,l2,o2):
//   m = max(m1, m2), a = e^(m1 - m), b = e^(m2 - m), l = a l1 + b l2, o = a o1 + b o2;
// the final output is o / l. An empty partial is (-inf, 0, 0).
//
// Granularity: every tile (one KV page x one Q tile) emits a partial of its n
// row-heads; the Flash-Coordinator's stateful engine merges it in place into the
// O reduction buffer (Sec. IV-A "stateful reduction engine", Sec. V-D Phase 4),
// so the channels hold no state between pages.
//
// Cost of one partial of n row-heads, head dim d, on `lanes` lanes:
//   occupancy = n * ceil(d / lanes) cycles (one row-head's O slice per cycle),
//   latency   = lse_pipeline_cycles (compare, exponentials, scale-add), pipelined
//               across partials;
//   bytes     = n * (d * act_bytes + 8) (O at the activation width, m and l FP32),
//   energy    = n * d * lse_pj_per_element + 2 * bytes * sram_pj_per_byte
//               (the O buffer is read and written back).
//
// Buffers: Q_fused needs R * heads * d * act_bytes bytes of the Q broadcast
// buffer and O_final R * heads * (d * 4 + 8) bytes of the O buffer (FP32
// accumulators + m + l). When either is too small the op runs in row chunks of
//   rows_per_pass = min(floor(Qbuf / q_row_bytes), floor(Obuf / o_row_bytes))
// rows, one full pass over the KV pages per chunk (the KV is read once per
// chunk); rows_per_pass = 0 is BadInput (not even one row fits).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/isp/isp_config.h"

namespace ispsim::isp {

// Running softmax state of `row_heads` row-heads of dimension `head_dim`.
struct PartialState {
  uint32_t head_dim = 0;
  std::vector<float> max;  // per row-head, -inf when empty
  std::vector<float> sum;  // per row-head
  std::vector<float> out;  // row_heads x head_dim, unnormalised

  PartialState() = default;
  PartialState(uint64_t row_heads, uint32_t head_dim);
  uint64_t row_heads() const { return max.size(); }
  // Adds one score s with value vector v (d floats) to row-head r (online softmax).
  void accumulate(uint64_t r, float score, const float* v);
  // o / l per row-head (zeros for an empty row-head).
  std::vector<float> normalized() const;
};

struct ReductionCost {
  uint64_t occupancy_cycles = 0;
  uint64_t latency_cycles = 0;
  uint64_t partial_bytes = 0;
  double energy_pj = 0;
};

struct RowChunking {
  uint64_t rows_per_pass = 0;
  uint64_t passes = 0;
  uint64_t q_row_bytes = 0;
  uint64_t o_row_bytes = 0;
};

class LseReduction {
 public:
  explicit LseReduction(const CoordinatorConfig& config);

  // Merges `partial` into `acc` row-head by row-head (same shapes, else std::logic_error).
  static void merge(PartialState& acc, const PartialState& partial);
  // Merges `partial` (n row-heads) into rows [first, first + n) of `acc`.
  static void merge_into(PartialState& acc, uint64_t first, const PartialState& partial);

  ReductionCost partial_cost(uint64_t row_heads, uint32_t head_dim, uint32_t act_bits) const;
  // Row chunks for `query_rows` rows; BadInput(where, ...) when not one row fits.
  RowChunking chunk_rows(uint64_t query_rows, uint32_t heads, uint32_t head_dim, uint32_t act_bits,
                         const std::string& where = "flash coordinator") const;
  const CoordinatorConfig& config() const { return config_; }

 private:
  CoordinatorConfig config_;
};

}  // namespace ispsim::isp
