#include "platforms/systems/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <set>
#include <sstream>
#include <stdexcept>

#include "common/error.h"
#include "platforms/systems/metrics.h"
#include "platforms/systems/report_cells.h"

namespace ispsim::systems {
namespace {


std::string ms(double ns) { return fixed(ns / 1e6, 3); }
// A registry statistic (RunSummary::stats, SI units) in ms or MB.
std::string stat_ms(const RunSummary& r, const char* name) { return fixed(r.statistic(name) * 1e3, 3); }
std::string stat_mb(const RunSummary& r, const char* name) { return fixed(r.statistic(name) / 1e6, 3); }
// In ns as declared: a speedup is then the same ratio whatever the SI rounding.
double latency_ns(const RunSummary& r) { return r.statistic(kRunLatency, "ns"); }

// A summary's numbers come from the simulator: a NaN, an infinity or a
// negative value is a bug there.
void check_run(const RunSummary& run) {
  auto check = [&](const std::string& what, double v) {
    if (!std::isfinite(v) || v < 0)
      throw std::logic_error("report: " + run.platform + ": " + what + " = " + std::to_string(v) +
                             " is not a finite non-negative number");
  };
  for (const auto& [name, v] : run.stats) check("stats[" + name + "]", v.value);
}

// A run shows numbers only when it completed.
bool completed(const RunSummary& run) { return !run.out_of_memory && run.failure.empty(); }

std::string status(const RunSummary& run) {
  if (run.out_of_memory) return "out_of_memory";
  return run.failure.empty() ? "ok" : "failed";
}

// Phase names of all completed runs: the runtime's phases in execution order,
// then any others alphabetically.
std::vector<std::string> phase_columns(const std::vector<RunSummary>& runs) {
  static const std::vector<std::string> known = {"HKVD identification", "recomputation", "query prefill",
                                                 "fused prefill",       "full prefill",  "decode"};
  std::set<std::string> present;
  for (const RunSummary& r : runs)
    for (const auto& [key, time] : statistic_family(r, kRunPhaseTime)) present.insert(phase_display_name(key));
  std::vector<std::string> columns;
  for (const std::string& k : known)
    if (present.count(k)) columns.push_back(k);
  for (const std::string& p : present)
    if (std::find(known.begin(), known.end(), p) == known.end()) columns.push_back(p);
  return columns;
}

// The baseline's latency, or a negative value when there is no usable baseline.
// A named baseline that is not among the runs is bad input.
double baseline_latency(const std::vector<RunSummary>& runs, const std::string& baseline) {
  if (baseline.empty()) return -1;
  for (const RunSummary& r : runs)
    if (r.platform == baseline) return completed(r) && latency_ns(r) > 0 ? latency_ns(r) : -1;
  std::string names;
  for (const RunSummary& r : runs) names += (names.empty() ? "" : ", ") + r.platform;
  throw BadInput("--baseline", "no run of platform '" + baseline + "' (runs: " + (names.empty() ? "none" : names) + ")");
}

// Baseline latency / latency: with `decimals` decimals, or (-1) in its shortest exact form.
std::string speedup(double base_ns, const RunSummary& run, int decimals = -1) {
  if (base_ns <= 0 || !completed(run) || latency_ns(run) <= 0) return "";
  const double ratio = base_ns / latency_ns(run);
  return decimals < 0 ? shortest_number(ratio) : fixed(ratio, decimals);
}

// ---- TEXT ----------------------------------------------------------------

// Display width of UTF-8 text (code points; "×" is one column).
size_t display_width(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

constexpr const char* kDecode = "decode";

// The time of every phase before decode, or "-" when a run has none.
std::string prefill(const RunSummary& r) {
  double ns = 0;
  bool any = false;
  for (const auto& [key, time] : statistic_family(r, kRunPhaseTime))
    if (key != kDecode) {
      ns += r.statistic(family_member(kRunPhaseTime, key), "ns");
      any = true;
    }
  return any ? ms(ns) : "-";
}

// One column of the text table: its header and its cell for a completed run.
struct TextColumn {
  std::string header;
  std::function<std::string(const RunSummary&)> cell;
};

// The text table's columns by name, in table order; "phases" is one column per
// phase before decode present in the runs, "prefill" their sum.
std::vector<std::pair<std::string, std::vector<TextColumn>>> text_columns(const std::vector<RunSummary>& runs,
                                                                          double base_ns) {
  auto one = [](std::string header, std::function<std::string(const RunSummary&)> cell) {
    return std::vector<TextColumn>{{std::move(header), std::move(cell)}};
  };
  auto phase = [](const std::string& p) {
    return TextColumn{p + " (ms)", [p](const RunSummary& r) {
                        const std::string time = family_member(kRunPhaseTime, phase_key(p));
                        return r.stats.count(time) ? ms(r.statistic(time, "ns")) : "-";
                      }};
  };
  std::vector<TextColumn> prefill_phases;
  for (const std::string& p : phase_columns(runs))
    if (p != kDecode) prefill_phases.push_back(phase(p));
  return {
      {"program", one("program", [](const RunSummary& r) { return r.program; })},
      {"latency", one("latency (ms)", [](const RunSummary& r) { return ms(latency_ns(r)); })},
      {"speedup", one("speedup (×)",
                      [base_ns](const RunSummary& r) {
                        const std::string s = speedup(base_ns, r, 2);
                        return s.empty() ? "-" : s;
                      })},
      {"prefill", one("prefill (ms)", [](const RunSummary& r) { return prefill(r); })},
      {"phases", prefill_phases},
      {"decode", {phase(kDecode)}},
      {"exposed_nand", one("exposed NAND (ms)", [](const RunSummary& r) { return stat_ms(r, kPrefillExposedNandTime); })},
      {"compute", one("compute (ms)", [](const RunSummary& r) { return stat_ms(r, kPrefillComputeTime); })},
      {"isp_compute", one("ISP compute (ms)", [](const RunSummary& r) { return stat_ms(r, kIspComputeTime); })},
      {"nand_stream", one("NAND stream (ms)", [](const RunSummary& r) { return stat_ms(r, kNandStreamTime); })},
      {"pcie_h2d", one("PCIe h2d (MB)", [](const RunSummary& r) { return stat_mb(r, kPcieHostToDeviceBytes); })},
      {"pcie_d2h", one("PCIe d2h (MB)", [](const RunSummary& r) { return stat_mb(r, kPcieDeviceToHostBytes); })},
      {"nand_read", one("NAND read (MB)", [](const RunSummary& r) { return stat_mb(r, kNandBytesRead); })},
      {"nand_written", one("NAND written (MB)", [](const RunSummary& r) { return stat_mb(r, kNandBytesProgrammed); })},
      {"ctrl_dram", one("ctrl DRAM (MB)", [](const RunSummary& r) { return stat_mb(r, kControllerDramBytes); })},
      {"energy", one("energy (J)", [](const RunSummary& r) { return fixed(r.statistic(kRunEnergy), 3); })},
      {"avg_power", one("avg power (W)", [](const RunSummary& r) { return fixed(r.statistic(kRunAveragePower), 3); })},
      {"peak_power", one("peak power (W)", [](const RunSummary& r) { return fixed(r.statistic(kRunPeakPower), 3); })},
  };
}

// Header and rows of the chosen columns; the platform always comes first.
std::vector<std::vector<std::string>> text_cells(const std::vector<RunSummary>& runs, const std::string& baseline,
                                                 const std::vector<std::string>& chosen) {
  std::vector<TextColumn> columns;
  for (auto& [name, group] : text_columns(runs, baseline_latency(runs, baseline)))
    if (std::find(chosen.begin(), chosen.end(), name) != chosen.end())
      columns.insert(columns.end(), group.begin(), group.end());
  std::vector<std::vector<std::string>> rows(1, {"platform"});
  for (const TextColumn& c : columns) rows[0].push_back(c.header);
  for (const RunSummary& r : runs) {
    std::vector<std::string> row = {r.platform};
    if (completed(r)) check_run(r);
    bool marked = false;  // a run without numbers says why in its first numeric cell
    for (const TextColumn& c : columns) {
      if (completed(r) || c.header == "program") {
        row.push_back(c.cell(r));
      } else {
        row.push_back(marked ? "" : r.out_of_memory ? "OOM" : "FAILED");
        marked = true;
      }
    }
    rows.push_back(row);
  }
  return rows;
}

void write_text(std::ostream& os, const std::vector<RunSummary>& runs, const std::string& baseline,
                const std::vector<std::string>& chosen) {
  const std::vector<std::vector<std::string>> rows = text_cells(runs, baseline, chosen);
  const size_t left_aligned = rows[0].size() > 1 && rows[0][1] == "program" ? 2 : 1;
  std::vector<size_t> width(rows[0].size());
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], display_width(row[c]));
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t c = 0; c < cells.size(); ++c) {
      const std::string pad(width[c] - display_width(cells[c]), ' ');
      if (c > 0) out += "  ";
      out += c < left_aligned ? cells[c] + pad : pad + cells[c];
    }
    // No trailing blanks (a left-aligned last cell or an OOM row's empty cells).
    out.erase(out.find_last_not_of(' ') + 1);
    os << out << '\n';
  };
  line(rows[0]);
  std::vector<std::string> rule;
  for (size_t w : width) rule.push_back(std::string(w, '-'));
  line(rule);
  for (size_t i = 1; i < rows.size(); ++i) line(rows[i]);
  for (const RunSummary& r : runs)
    if (!r.failure.empty()) os << r.platform << ": " << r.failure << '\n';
}

// ---- CSV and JSON: the metric list in SI units ----------------------------

// Each run's metrics (none for a run without numbers) and the columns they make.
std::vector<MetricValues> run_metrics(const std::vector<RunSummary>& runs) {
  std::vector<MetricValues> out;
  for (const RunSummary& r : runs) {
    if (completed(r)) check_run(r);
    out.push_back(metric_values(r));
  }
  return out;
}

const double* find_value(const MetricValues& values, const std::string& name) {
  for (const auto& [n, v] : values)
    if (n == name) return &v;
  return nullptr;
}

void write_csv(std::ostream& os, const std::vector<RunSummary>& runs, const std::string& baseline,
               const Provenance* provenance) {
  const double base_ns = baseline_latency(runs, baseline);
  const std::vector<MetricValues> values = run_metrics(runs);
  const std::vector<std::string> columns = metric_columns(values);
  os << "platform,program,status,failure,speedup";
  for (const std::string& c : columns) os << ',' << c;
  os << (provenance ? std::string(",") + provenance_csv_header() : "") << '\n';
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunSummary& r = runs[i];
    os << csv_cell(r.platform) << ',' << csv_cell(r.program) << ',' << status(r) << ',' << csv_cell(r.failure) << ','
       << speedup(base_ns, r);
    for (const std::string& c : columns) {
      const double* v = find_value(values[i], c);
      os << ',' << (v ? shortest_number(*v) : "");
    }
    if (provenance) os << ',' << provenance_csv_cells(*provenance, r.configuration);
    os << '\n';
  }
}

void write_json(std::ostream& os, const std::vector<RunSummary>& runs, const std::string& baseline,
                const Provenance* provenance) {
  const double base_ns = baseline_latency(runs, baseline);
  const std::vector<MetricValues> values = run_metrics(runs);
  os << "{\n  ";
  if (provenance) {
    write_provenance_json(os, *provenance);
    os << ",\n  ";
  }
  os << "\"baseline\": " << (baseline.empty() ? "null" : json_quoted(baseline)) << ",\n  \"runs\": [";
  const char* run_sep = "\n";
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunSummary& r = runs[i];
    os << run_sep << "    {\"platform\": " << json_quoted(r.platform) << ", \"program\": " << json_quoted(r.program)
       << ", \"status\": " << json_quoted(status(r));
    run_sep = ",\n";
    if (!r.failure.empty()) os << ", \"failure\": " << json_quoted(r.failure);
    if (!r.note.empty()) os << ", \"note\": " << json_quoted(r.note);
    const std::string s = speedup(base_ns, r);
    os << ", \"speedup\": " << (s.empty() ? "null" : s);
    const double decode_tokens = r.statistic(kRunDecodeTokens);
    if (decode_tokens > 0 && completed(r)) os << ", \"decode_tokens\": " << shortest_number(decode_tokens);
    os << ",\n     \"metrics\": {";
    const char* sep = "";
    for (const auto& [name, v] : values[i]) {
      os << sep << json_quoted(name) << ": " << shortest_number(v);
      sep = ", ";
    }
    os << "}";
    if (provenance)
      os << ",\n     \"configuration\": " << json_quoted(r.configuration) << ",\n     \"settings\": " << json_quoted(r.settings);
    os << "}";
  }
  os << (runs.empty() ? "]\n}\n" : "\n  ]\n}\n");
}

}  // namespace

std::vector<std::string> default_text_columns() {
  return {"program", "latency", "speedup", "prefill", "decode", "energy"};
}

std::vector<std::string> parse_text_columns(const std::string& list) {
  std::vector<std::string> known;
  for (const auto& [name, group] : text_columns({}, -1)) known.push_back(name);
  if (list == "all") return known;
  std::vector<std::string> chosen;
  std::string name;
  std::istringstream in(list);
  while (std::getline(in, name, ',')) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string names;
      for (const std::string& k : known) names += (names.empty() ? "" : ", ") + k;
      throw BadInput("--columns", "unknown column '" + name + "' (known: " + names + ", or all)");
    }
    chosen.push_back(name);
  }
  if (chosen.empty()) throw BadInput("--columns", "no column given (known: see --columns all)");
  return chosen;
}

double RunSummary::statistic(const std::string& name, const std::string& unit) const {
  const auto it = stats.find(name);
  if (it == stats.end()) return 0;
  if (it->second.unit != unit)
    throw std::logic_error("statistic " + name + " is in " + it->second.unit + ", not " + unit);
  return it->second.value;
}

Format parse_format(const std::string& name, const std::string& where) {
  if (name == "text") return Format::TEXT;
  if (name == "csv") return Format::CSV;
  if (name == "json") return Format::JSON;
  throw BadInput(where, "unknown format '" + name + "' (expected text, csv or json)");
}

void write_comparison(std::ostream& os, const std::vector<RunSummary>& runs, const std::string& baseline,
                      Format format, const std::vector<std::string>& columns, const Provenance* provenance) {
  switch (format) {
    case Format::TEXT: return write_text(os, runs, baseline, columns);
    case Format::CSV: return write_csv(os, runs, baseline, provenance);
    case Format::JSON: return write_json(os, runs, baseline, provenance);
  }
  throw std::logic_error("report: unknown format");
}

}  // namespace ispsim::systems
