#include "platforms/systems/cim_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "common/error.h"
#include "platforms/systems/report_cells.h"

namespace ispsim::systems {
namespace {

const std::vector<std::string> kStages = {"weights", "KV write", "KV read/attention", "pursuit", "nonlinear",
                                          "transfers"};

bool completed(const RunSummary& r) { return !r.out_of_memory && r.failure.empty() && r.decode_tokens > 0; }

double per_token(double total, const RunSummary& r) { return total / static_cast<double>(r.decode_tokens); }
double value_or_zero(const std::map<std::string, double>& m, const std::string& k) {
  auto it = m.find(k);
  return it == m.end() ? 0.0 : it->second;
}

void check(const RunSummary& r) {
  auto finite = [&](const std::string& what, double v) {
    if (!std::isfinite(v) || v < 0)
      throw std::logic_error("cim report: " + r.platform + ": " + what + " is not a finite non-negative number");
  };
  finite("latency", r.latency_ns);
  finite("analytic latency", r.analytic_latency_ns);
  finite("energy", r.energy_j);
  for (const auto& m : {r.stage_ns, r.stage_analytic_ns, r.stage_j})
    for (const auto& [k, v] : m) finite(k, v);
}

const RunSummary* find_baseline(const std::vector<RunSummary>& runs, const std::string& baseline) {
  if (baseline.empty()) return nullptr;
  for (const RunSummary& r : runs)
    if (r.platform == baseline) return completed(r) ? &r : nullptr;
  std::string names;
  for (const RunSummary& r : runs) names += (names.empty() ? "" : ", ") + r.platform;
  throw BadInput("--baseline", "no run of platform '" + baseline + "' (runs: " + (names.empty() ? "none" : names) + ")");
}

struct Row {
  std::vector<std::string> cells;
};

// Columns shared by TEXT and CSV; `d` decimals for times/energies, `rd` for ratios.
std::vector<std::string> header(bool csv) {
  std::vector<std::string> h = {"platform", "program", "TBT (ms)", "TBT eq.4 (ms)", "speedup (x)", "energy/token (mJ)",
                                "energy ratio (x)"};
  if (csv) h.insert(h.begin() + 2, {"status", "failure"});
  for (const std::string& s : kStages) h.push_back(s + " (ms)");
  for (const std::string& s : kStages) h.push_back(s + " (mJ)");
  if (csv)
    for (const std::string& s : kStages) h.push_back(s + " eq.4 (ms)");
  return h;
}

std::vector<std::string> cells(const RunSummary& r, const RunSummary* base, int d, int rd) {
  const double tbt = per_token(r.latency_ns, r) / 1e6, e = per_token(r.energy_j, r) * 1e3;
  std::vector<std::string> c = {fixed(tbt, d), fixed(per_token(r.analytic_latency_ns, r) / 1e6, d)};
  c.push_back(base ? fixed(per_token(base->latency_ns, *base) / 1e6 / tbt, rd) : "");
  c.push_back(fixed(e, d));
  c.push_back(base ? fixed(e / (per_token(base->energy_j, *base) * 1e3), rd) : "");
  for (const std::string& s : kStages) c.push_back(fixed(per_token(value_or_zero(r.stage_ns, s), r) / 1e6, d));
  for (const std::string& s : kStages) c.push_back(fixed(per_token(value_or_zero(r.stage_j, s), r) * 1e3, d));
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
  std::vector<std::vector<std::string>> rows = {header(false)};
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

void write_csv(std::ostream& os, const std::vector<RunSummary>& runs, const RunSummary* base) {
  const std::vector<std::string> h = header(true);
  auto line = [&](const std::vector<std::string>& row) {
    for (size_t c = 0; c < row.size(); ++c) os << (c ? "," : "") << csv_cell(row[c]);
    os << '\n';
  };
  line(h);
  for (const RunSummary& r : runs) {
    std::vector<std::string> row = {r.platform, r.program, r.out_of_memory ? "out_of_memory" : r.failure.empty() ? "ok" : "failed",
                                    r.failure.empty() ? r.note : r.failure};
    if (completed(r)) {
      check(r);
      for (std::string& c : cells(r, base, 6, 6)) row.push_back(c);
      for (const std::string& s : kStages)
        row.push_back(fixed(per_token(value_or_zero(r.stage_analytic_ns, s), r) / 1e6, 6));
    }
    row.resize(h.size());
    line(row);
  }
}

void write_json(std::ostream& os, const std::vector<RunSummary>& runs, const RunSummary* base,
                const std::string& baseline) {
  os << "{\n  \"baseline\": " << (baseline.empty() ? "null" : json_quoted(baseline)) << ",\n  \"runs\": [";
  const char* sep = "\n";
  for (const RunSummary& r : runs) {
    os << sep << "    {\"platform\": " << json_quoted(r.platform) << ", \"program\": " << json_quoted(r.program)
       << ", \"status\": " << json_quoted(r.out_of_memory ? "out_of_memory" : r.failure.empty() ? "ok" : "failed");
    sep = ",\n";
    if (!r.failure.empty()) os << ", \"failure\": " << json_quoted(r.failure);
    if (!r.note.empty()) os << ", \"note\": " << json_quoted(r.note);
    if (!completed(r)) {
      os << "}";
      continue;
    }
    check(r);
    const std::vector<std::string> c = cells(r, base, 6, 6);
    os << ",\n     \"decode_tokens\": " << r.decode_tokens << ", \"tbt_ms\": " << c[0] << ", \"tbt_eq4_ms\": " << c[1]
       << ", \"speedup\": " << (c[2].empty() ? "null" : c[2]) << ", \"energy_per_token_mj\": " << c[3]
       << ", \"energy_ratio\": " << (c[4].empty() ? "null" : c[4]);
    auto object = [&](const char* key, const std::map<std::string, double>& m, double scale) {
      os << ",\n     \"" << key << "\": {";
      const char* s2 = "";
      for (const std::string& s : kStages) {
        os << s2 << json_quoted(s) << ": " << fixed(per_token(value_or_zero(m, s), r) * scale, 6);
        s2 = ", ";
      }
      os << "}";
    };
    object("stage_ms_per_token", r.stage_ns, 1e-6);
    object("stage_eq4_ms_per_token", r.stage_analytic_ns, 1e-6);
    object("stage_mj_per_token", r.stage_j, 1e3);
    os << ",\n     \"energy_mj_per_token_by_component\": {";
    const char* s2 = "";
    for (const auto& [k, v] : r.energy_j_by_component) {
      os << s2 << json_quoted(k) << ": " << fixed(per_token(v, r) * 1e3, 6);
      s2 = ", ";
    }
    os << "}}";
  }
  os << (runs.empty() ? "]\n}\n" : "\n  ]\n}\n");
}

}  // namespace

void write_cim_comparison(std::ostream& os, const std::vector<RunSummary>& runs, const std::string& baseline,
                          Format format, bool stage_columns) {
  const RunSummary* base = find_baseline(runs, baseline);
  switch (format) {
    case Format::TEXT: return write_text(os, runs, base, stage_columns);
    case Format::CSV: return write_csv(os, runs, base);
    case Format::JSON: return write_json(os, runs, base, baseline);
  }
}

}  // namespace ispsim::systems
