#include "platforms/systems/cim_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "common/error.h"
#include "platforms/systems/metrics.h"
#include "platforms/systems/report_cells.h"

namespace ispsim::systems {
namespace {

const std::vector<std::string> kStages = {"weights", "KV write", "KV read/attention", "pursuit", "nonlinear",
                                          "transfers"};

double decode_tokens(const RunSummary& r) { return r.statistic(kRunDecodeTokens); }
bool completed(const RunSummary& r) { return !r.out_of_memory && r.failure.empty() && decode_tokens(r) > 0; }

double latency_ns(const RunSummary& r) { return r.statistic(kRunLatency, "ns"); }
double per_token(double total, const RunSummary& r) { return total / decode_tokens(r); }
// A stage's simulated time in ns and energy in J (0 when the run has no such stage).
double stage_ns(const RunSummary& r, const std::string& stage) {
  return r.statistic(family_member(kRunStageTime, metric_key(stage)), "ns");
}
double stage_j(const RunSummary& r, const std::string& stage) {
  return r.statistic(family_member(kRunStageEnergy, metric_key(stage)), "J");
}

void check(const RunSummary& r) {
  for (const auto& [name, captured] : r.stats)
    if (!std::isfinite(captured.value) || captured.value < 0)
      throw std::logic_error("cim report: " + r.platform + ": " + name + " is not a finite non-negative number");
}

const RunSummary* find_baseline(const std::vector<RunSummary>& runs, const std::string& baseline) {
  if (baseline.empty()) return nullptr;
  for (const RunSummary& r : runs)
    if (r.platform == baseline) return completed(r) ? &r : nullptr;
  std::string names;
  for (const RunSummary& r : runs) names += (names.empty() ? "" : ", ") + r.platform;
  throw BadInput("--baseline", "no run of platform '" + baseline + "' (runs: " + (names.empty() ? "none" : names) + ")");
}

std::vector<std::string> header() {
  std::vector<std::string> h = {"platform", "program", "TBT (ms)", "TBT eq.4 (ms)", "speedup (x)", "energy/token (mJ)",
                                "energy ratio (x)"};
  for (const std::string& s : kStages) h.push_back(s + " (ms)");
  for (const std::string& s : kStages) h.push_back(s + " (mJ)");
  return h;
}

std::vector<std::string> cells(const RunSummary& r, const RunSummary* base, int d, int rd) {
  const double tbt = per_token(latency_ns(r), r) / 1e6, e = per_token(r.statistic(kRunEnergy), r) * 1e3;
  std::vector<std::string> c = {fixed(tbt, d), fixed(per_token(r.statistic(kRunAnalyticLatency, "ns"), r) / 1e6, d)};
  c.push_back(base ? fixed(per_token(latency_ns(*base), *base) / 1e6 / tbt, rd) : "");
  c.push_back(fixed(e, d));
  c.push_back(base ? fixed(e / (per_token(base->statistic(kRunEnergy), *base) * 1e3), rd) : "");
  for (const std::string& s : kStages) c.push_back(fixed(per_token(stage_ns(r, s), r) / 1e6, d));
  for (const std::string& s : kStages) c.push_back(fixed(per_token(stage_j(r, s), r) * 1e3, d));
  return c;
}

size_t width(const std::string& s) {
  size_t n = 0;
  for (unsigned char ch : s) n += (ch & 0xC0) != 0x80;
  return n;
}

// The TEXT columns before the stages': platform, program, TBT, TBT eq.4, speedup, energy, energy ratio.
constexpr size_t kSummaryColumns = 7;

void write_text(std::ostream& os, const std::vector<RunSummary>& runs, const RunSummary* base, bool stage_columns) {
  std::vector<std::vector<std::string>> rows = {header()};
  if (!stage_columns) rows[0].resize(kSummaryColumns);
  for (const RunSummary& r : runs) {
    std::vector<std::string> row = {r.platform, r.program};
    if (!completed(r)) {
      row.push_back(r.out_of_memory ? "OOM" : "FAILED");
    } else {
      check(r);
      for (std::string& c : cells(r, base, 3, 2)) row.push_back(c.empty() ? "-" : c);
    }
    row.resize(rows[0].size());
    rows.push_back(row);
  }
  std::vector<size_t> w(rows[0].size());
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) w[c] = std::max(w[c], width(row[c]));
  auto line = [&](const std::vector<std::string>& row) {
    std::string out;
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string pad(w[c] - width(row[c]), ' ');
      out += (c ? "  " : "") + (c < 2 ? row[c] + pad : pad + row[c]);
    }
    out.erase(out.find_last_not_of(' ') + 1);
    os << out << '\n';
  };
  line(rows[0]);
  std::vector<std::string> rule;
  for (size_t x : w) rule.push_back(std::string(x, '-'));
  line(rule);
  for (size_t i = 1; i < rows.size(); ++i) line(rows[i]);
  for (const RunSummary& r : runs) {
    if (!r.failure.empty()) os << r.platform << ": " << r.failure << '\n';
    else if (!r.note.empty()) os << r.platform << ": " << r.note << '\n';
  }
}

}  // namespace

void write_cim_comparison(std::ostream& os, const std::vector<RunSummary>& runs, const std::string& baseline,
                          Format format, bool stage_columns, const Provenance* provenance) {
  const RunSummary* base = find_baseline(runs, baseline);
  if (format == Format::TEXT) return write_text(os, runs, base, stage_columns);
  for (const RunSummary& r : runs)
    if (completed(r)) check(r);
  write_comparison(os, runs, baseline, format, default_text_columns(), provenance);
}

}  // namespace ispsim::systems
