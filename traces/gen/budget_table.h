// The host memory budget table of `ispsim trace gen --budget-table`: for each
// model preset the most context tokens whose KV fits in the budget next to the
// weights and workspace, and for each (model, dataset profile) pair whether the
// mean top-k request fits (memory_accounting.h). Pure C++, no SystemC.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "traces/gen/dataset_profiles.h"
#include "traces/memory_accounting.h"

namespace ispsim::tracegen {

// The six models of the MemLLM evaluation grid as bench/grid_bench.cc runs them
// (MemLLM Sec. III-A: "OPT (350M to 6.7B) and SmolLM2 (135M to 1.7B)").
const std::vector<std::string>& memllm_grid_models();

struct BudgetCell {
  std::string dataset;
  double request_tokens = 0;  // top_k x doc mean + query mean + answer mean
  double request_bytes = 0;   // weights + workspace + kv_copies x tokens x KV bytes per token
  bool fits = false;          // request_tokens <= max_tokens
};

struct ModelBudget {
  std::string model;
  uint64_t weight_bytes = 0;
  uint64_t kv_bytes_per_token = 0;
  uint64_t max_tokens = 0;
  std::vector<BudgetCell> cells;  // one per dataset profile, in profile order
};

struct BudgetOptions {
  uint64_t budget_bytes = 0;
  uint64_t top_k = kDefaultTopK;
  uint32_t kv_copies = 1;
  uint64_t workspace_bytes = 0;
  std::string accounting_name;  // for the header line, e.g. "physical"
};

// One row per model preset (in preset order); each preset's LM-head tying
// from preset_ties_lm_head.
std::vector<ModelBudget> budget_table(const BudgetOptions& options);

// The table as text: a header naming the budget and accounting, the per-model
// rows, the per-pair rows, and a summary of the pairs over budget (all presets,
// and the MemLLM grid's six models). Every number has its unit.
std::string format_budget_table(const BudgetOptions& options, const std::vector<ModelBudget>& table);

}  // namespace ispsim::tracegen
