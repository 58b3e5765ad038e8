#include "traces/gen/budget_table.h"

#include <algorithm>
#include <cstdio>

#include "traces/gen/model_presets.h"

namespace ispsim::tracegen {

namespace {

std::string gigabytes(double bytes) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f", bytes / 1e9);
  return buffer;
}

bool in_grid(const std::string& model) {
  const auto& grid = memllm_grid_models();
  return std::find(grid.begin(), grid.end(), model) != grid.end();
}

}  // namespace

const std::vector<std::string>& memllm_grid_models() {
  static const std::vector<std::string> models = {"SmolLM2-135M", "SmolLM2-360M", "SmolLM2-1.7B",
                                                  "OPT-350M",     "OPT-1.3B",     "OPT-2.7B"};
  return models;
}

std::vector<ModelBudget> budget_table(const BudgetOptions& options) {
  std::vector<ModelBudget> table;
  for (const trace::ModelShape& shape : model_presets()) {
    accounting::MemoryAccounting a;
    a.kv_copies = options.kv_copies;
    a.workspace_bytes = options.workspace_bytes;
    a.tied_lm_head = preset_ties_lm_head(shape.name());
    ModelBudget row;
    row.model = shape.name();
    row.weight_bytes = accounting::model_weight_bytes(shape, a.tied_lm_head);
    row.kv_bytes_per_token = accounting::kv_bytes_per_token(shape);
    row.max_tokens = accounting::max_tokens(options.budget_bytes, shape, a);
    for (const DatasetProfile& p : dataset_profiles()) {
      BudgetCell cell;
      cell.dataset = p.key;
      cell.request_tokens = p.mean_request_tokens(options.top_k);
      cell.request_bytes = double(accounting::fixed_bytes(shape, a)) +
                           double(a.kv_copies) * cell.request_tokens * double(row.kv_bytes_per_token);
      cell.fits = cell.request_tokens <= double(row.max_tokens);
      row.cells.push_back(cell);
    }
    table.push_back(row);
  }
  return table;
}

std::string format_budget_table(const BudgetOptions& o, const std::vector<ModelBudget>& table) {
  std::string out = "host memory budget: " + std::to_string(o.budget_bytes) + " bytes (" + gigabytes(o.budget_bytes) +
                    " GB, GB = 1e9 bytes); accounting: " + o.accounting_name + " (" + std::to_string(o.kv_copies) +
                    " KV cop" + (o.kv_copies == 1 ? "y" : "ies") + ", workspace " + std::to_string(o.workspace_bytes) +
                    " bytes, FP16 weights from the shape); top-k " + std::to_string(o.top_k) + " documents\n\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-14s %14s %22s %22s\n", "model", "weights (GB)", "KV per token (bytes)",
                "max context (tokens)");
  out += line;
  for (const ModelBudget& m : table) {
    std::snprintf(line, sizeof line, "%-14s %14s %22llu %22llu\n", m.model.c_str(),
                  gigabytes(double(m.weight_bytes)).c_str(), static_cast<unsigned long long>(m.kv_bytes_per_token),
                  static_cast<unsigned long long>(m.max_tokens));
    out += line;
  }
  out += "\nmean top-" + std::to_string(o.top_k) +
         " request = top-k x document mean + query mean + answer mean (dataset profiles)\n";
  std::snprintf(line, sizeof line, "%-14s %-8s %18s %24s %6s\n", "model", "dataset", "request (tokens)",
                "weights+ws+KV (GB)", "fits");
  out += line;
  int over = 0, pairs = 0, grid_over = 0, grid_pairs = 0;
  for (const ModelBudget& m : table)
    for (const BudgetCell& c : m.cells) {
      std::snprintf(line, sizeof line, "%-14s %-8s %18.0f %24s %6s\n", m.model.c_str(), c.dataset.c_str(),
                    c.request_tokens, gigabytes(c.request_bytes).c_str(), c.fits ? "yes" : "no");
      out += line;
      ++pairs;
      over += !c.fits;
      if (in_grid(m.model)) {
        ++grid_pairs;
        grid_over += !c.fits;
      }
    }
  out += "\nover budget: " + std::to_string(over) + " of " + std::to_string(pairs) + " (model, dataset) pairs; " +
         std::to_string(grid_over) + " of " + std::to_string(grid_pairs) +
         " on the MemLLM grid's six models (SmolLM2-135M/360M/1.7B, OPT-350M/1.3B/2.7B)\n";
  return out;
}

}  // namespace ispsim::tracegen
