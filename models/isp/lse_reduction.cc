#include "models/isp/lse_reduction.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "common/error.h"

namespace ispsim::isp {

namespace {

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
constexpr float kEmpty = -std::numeric_limits<float>::infinity();

}  // namespace

PartialState::PartialState(uint64_t row_heads, uint32_t dim)
    : head_dim(dim), max(row_heads, kEmpty), sum(row_heads, 0.0f), out(row_heads * dim, 0.0f) {}

void PartialState::accumulate(uint64_t r, float score, const float* v) {
  float* o = &out[r * head_dim];
  if (score > max[r]) {
    // New maximum: rescale what was accumulated so far (empty: scale 0).
    const float scale = max[r] == kEmpty ? 0.0f : std::exp(max[r] - score);
    sum[r] *= scale;
    for (uint32_t i = 0; i < head_dim; ++i) o[i] *= scale;
    max[r] = score;
  }
  const float p = std::exp(score - max[r]);
  sum[r] += p;
  for (uint32_t i = 0; i < head_dim; ++i) o[i] += p * v[i];
}

std::vector<float> PartialState::normalized() const {
  std::vector<float> result(out.size(), 0.0f);
  for (uint64_t r = 0; r < max.size(); ++r) {
    if (sum[r] == 0.0f) continue;
    for (uint32_t i = 0; i < head_dim; ++i) result[r * head_dim + i] = out[r * head_dim + i] / sum[r];
  }
  return result;
}

LseReduction::LseReduction(const CoordinatorConfig& config) : config_(config) {}

void LseReduction::merge(PartialState& acc, const PartialState& partial) {
  if (acc.row_heads() != partial.row_heads()) throw std::logic_error("lse merge: row-head counts differ");
  merge_into(acc, 0, partial);
}

void LseReduction::merge_into(PartialState& acc, uint64_t first, const PartialState& partial) {
  if (acc.head_dim != partial.head_dim || first + partial.row_heads() > acc.row_heads()) {
    throw std::logic_error("lse merge: partial does not fit the accumulator");
  }
  const uint32_t d = acc.head_dim;
  for (uint64_t j = 0; j < partial.row_heads(); ++j) {
    const uint64_t r = first + j;
    if (partial.max[j] == kEmpty) continue;  // nothing seen by this partial
    const float m = std::max(acc.max[r], partial.max[j]);
    const float a = acc.max[r] == kEmpty ? 0.0f : std::exp(acc.max[r] - m);
    const float b = std::exp(partial.max[j] - m);
    acc.sum[r] = a * acc.sum[r] + b * partial.sum[j];
    float* o = &acc.out[r * d];
    const float* po = &partial.out[j * d];
    for (uint32_t i = 0; i < d; ++i) o[i] = a * o[i] + b * po[i];
    acc.max[r] = m;
  }
}

ReductionCost LseReduction::partial_cost(uint64_t row_heads, uint32_t head_dim, uint32_t act_bits) const {
  ReductionCost c;
  c.occupancy_cycles = row_heads * ceil_div(head_dim, config_.lse_lanes);
  c.latency_cycles = row_heads > 0 ? config_.lse_pipeline_cycles : 0;
  c.partial_bytes = row_heads * (uint64_t(head_dim) * act_bits / 8 + 8);
  c.energy_pj = double(row_heads) * head_dim * config_.lse_pj_per_element +
                2.0 * double(c.partial_bytes) * config_.sram_pj_per_byte;
  return c;
}

RowChunking LseReduction::chunk_rows(uint64_t query_rows, uint32_t heads, uint32_t head_dim, uint32_t act_bits,
                                     const std::string& where) const {
  RowChunking c;
  c.q_row_bytes = uint64_t(heads) * head_dim * act_bits / 8;
  c.o_row_bytes = uint64_t(heads) * (uint64_t(head_dim) * 4 + 8);
  const uint64_t by_q = c.q_row_bytes > 0 ? config_.q_buffer_bytes / c.q_row_bytes : query_rows;
  const uint64_t by_o = config_.o_buffer_bytes() / c.o_row_bytes;
  c.rows_per_pass = std::min(by_q, by_o);
  if (c.rows_per_pass == 0) {
    throw BadInput(where, "one query row (" + std::to_string(c.q_row_bytes) + " B of Q, " +
                              std::to_string(c.o_row_bytes) + " B of O state) does not fit the Q buffer (" +
                              std::to_string(config_.q_buffer_bytes) + " B) and the O buffer (" +
                              std::to_string(config_.o_buffer_bytes()) + " B)");
  }
  c.rows_per_pass = std::min(c.rows_per_pass, std::max<uint64_t>(query_rows, 1));
  c.passes = query_rows == 0 ? 0 : ceil_div(query_rows, c.rows_per_pass);
  return c;
}

}  // namespace ispsim::isp
