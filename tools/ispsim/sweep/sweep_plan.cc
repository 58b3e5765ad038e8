#include "tools/ispsim/sweep/sweep_plan.h"

#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "common/error.h"
#include "platforms/schema/overrides.h"
#include "platforms/schema/platform_loader.h"
#include "platforms/schema/textproto_file.h"
#include "tools/ispsim/sweep/metrics.h"
#include "traces/gen/dataset_profiles.h"
#include "traces/gen/model_presets.h"
#include "traces/trace_io.h"

namespace ispsim::sweep {
namespace {

const char* kTraceSettings[] = {"trace.file",           "trace.model",        "trace.dataset",
                                "trace.seed",           "trace.ratio",        "trace.docs",
                                "trace.context_tokens", "trace.query_tokens", "trace.answer_tokens",
                                "trace.max_context_tokens", "trace.max_answer_tokens"};

// Range values: from, from + step, ..., to (inclusive, with a tolerance of 1e-9 steps).
std::vector<std::string> range_values(const Range& r, const std::string& where) {
  if (!r.has_from() || !r.has_to() || !r.has_step()) throw BadInput(where, "range needs from, to and step");
  if (!(r.step() > 0) || !std::isfinite(r.from()) || !std::isfinite(r.to()) || !std::isfinite(r.step()))
    throw BadInput(where, "range needs finite from and to and a step > 0");
  if (r.to() < r.from()) throw BadInput(where, "range has to < from");
  const double count = std::floor((r.to() - r.from()) / r.step() + 1e-9) + 1;
  if (count > 100000) throw BadInput(where, "range has more than 100000 values");
  std::vector<std::string> values;
  for (int i = 0; i < static_cast<int>(count); ++i) values.push_back(shortest_number(r.from() + i * r.step()));
  return values;
}

uint64_t parse_whole(const std::string& text, uint64_t min, uint64_t max, const std::string& where) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    throw BadInput(where, "'" + text + "' is not a whole number");
  errno = 0;
  const unsigned long long value = std::strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE || value < min || value > max)
    throw BadInput(where, text + " is out of range " + std::to_string(min) + ".." + std::to_string(max));
  return value;
}

double parse_fraction(const std::string& text, const std::string& where) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value))
    throw BadInput(where, "'" + text + "' is not a number");
  if (value < 0.0 || value > 1.0) throw BadInput(where, text + " is not within 0..1");
  return value;
}

// The trace of one combination of axis values.
TraceSource trace_source(const std::map<std::string, std::string>& values, const std::string& where) {
  TraceSource source;
  auto value = [&values](const char* name) -> const std::string* {
    auto it = values.find(name);
    return it == values.end() ? nullptr : &it->second;
  };
  if (const std::string* file = value("trace.file")) {
    source.file = *file;
    return source;
  }
  tracegen::ShapeOptions o;
  o.model = tracegen::find_model_preset(*value("trace.model"), where + ": trace.model").name();
  o.dataset = tracegen::find_dataset_profile(*value("trace.dataset"), where + ": trace.dataset").key;
  if (auto v = value("trace.seed")) o.seed = parse_whole(*v, 0, UINT64_MAX, where + ": trace.seed");
  if (auto v = value("trace.ratio")) o.recompute_ratio = parse_fraction(*v, where + ": trace.ratio");
  if (auto v = value("trace.docs")) o.docs = parse_whole(*v, 1, tracegen::kMaxGeneratedDocs, where + ": trace.docs");
  if (auto v = value("trace.context_tokens"))
    o.context_tokens = parse_whole(*v, 1, tracegen::kMaxGeneratedContextTokens, where + ": trace.context_tokens");
  if (auto v = value("trace.query_tokens"))
    o.query_tokens = parse_whole(*v, 1, tracegen::kMaxGeneratedQueryTokens, where + ": trace.query_tokens");
  if (auto v = value("trace.answer_tokens"))
    o.answer_tokens = parse_whole(*v, 0, tracegen::kMaxGeneratedAnswerTokens, where + ": trace.answer_tokens");
  if (auto v = value("trace.max_context_tokens"))
    o.max_context_tokens = parse_whole(*v, 1, tracegen::kMaxGeneratedContextTokens, where + ": trace.max_context_tokens");
  if (auto v = value("trace.max_answer_tokens"))
    o.max_answer_tokens = parse_whole(*v, 0, tracegen::kMaxGeneratedAnswerTokens, where + ": trace.max_answer_tokens");
  auto optional = [](const std::optional<uint64_t>& v) { return v ? std::to_string(*v) : std::string("-"); };
  const std::string canonical = "shape-v1;model=" + o.model + ";dataset=" + o.dataset +
                                ";seed=" + std::to_string(o.seed) + ";ratio=" + shortest_number(o.recompute_ratio) +
                                ";resample=" + shortest_number(o.mask_resample_fraction) +
                                ";docs=" + std::to_string(o.docs) + ";context=" + optional(o.context_tokens) +
                                ";query=" + optional(o.query_tokens) + ";answer=" + optional(o.answer_tokens) +
                                ";max_context=" + optional(o.max_context_tokens) + ";max_answer=" + optional(o.max_answer_tokens);
  source.key = fnv1a_hex(canonical);
  source.shape = o;
  return source;
}

// Hash of a trace file's bytes, and the programs it holds (read once per file).
struct TraceFileInfo {
  std::string key;
  std::set<std::string> programs;
};

TraceFileInfo trace_file_info(const std::string& path) {
  TraceFileInfo info;
  {
    trace::TraceReader reader(path);  // validates the header; BadInput names the file
    for (const trace::ProgramInfo& p : reader.header().programs()) info.programs.insert(trace::Program_Name(p.program()));
  }
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  info.key = fnv1a_hex(bytes);
  return info;
}

// Loaded platforms by (platform, overrides), each loaded and checked once.
struct LoadedVariant {
  std::string key;  // hash of the resolved platform text
  std::string program;
  bool microbenchmark = false;
  std::string system;  // display name
};

}  // namespace

std::string fnv1a_hex(const std::string& bytes) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h));
  return out;
}

std::string shortest_number(double value) {
  char buf[40];
  if (value == std::floor(value) && std::fabs(value) < 1e15) {  // whole numbers (bytes, counts) in full
    std::snprintf(buf, sizeof buf, "%.0f", value);
    return buf;
  }
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, value);
    if (std::strtod(buf, nullptr) == value) break;
  }
  return buf;
}

SweepPlan load_sweep(const std::string& path) {
  SweepPlan plan;
  plan.file = path;
  schema::parse_textproto_file(path, plan.spec);
  const Sweep& spec = plan.spec;
  if (!spec.has_name() || !std::regex_match(spec.name(), std::regex("[A-Za-z0-9_.-]+")))
    throw BadInput(path, "name must be set and use only letters, digits, '_', '.' and '-'");

  // Axes: names, values, and which kind each is.
  std::vector<std::vector<std::string>> values;
  std::set<std::string> seen;
  for (const Axis& axis : spec.axis()) {
    const std::string where = path + ": axis '" + axis.name() + "'";
    if (axis.name().empty()) throw BadInput(path, "an axis has no name");
    if (!seen.insert(axis.name()).second) throw BadInput(where, "is given twice");
    std::vector<std::string> v(axis.values().begin(), axis.values().end());
    if (axis.has_range())
      for (const std::string& r : range_values(axis.range(), where)) v.push_back(r);
    if (v.empty()) throw BadInput(where, "has no values");
    const bool is_trace = axis.name().rfind("trace.", 0) == 0;
    if (is_trace && std::find(std::begin(kTraceSettings), std::end(kTraceSettings), axis.name()) == std::end(kTraceSettings))
      throw BadInput(where, "unknown trace setting (known: trace.file, trace.model, trace.dataset, trace.seed, "
                            "trace.ratio, trace.docs, trace.context_tokens, trace.query_tokens, trace.answer_tokens, "
                            "trace.max_context_tokens, trace.max_answer_tokens)");
    if (!is_trace && axis.name() != "platform") {
      std::string problem;
      if (!schema::find_parameter(*schema::Platform::descriptor(), axis.name(), &problem))
        throw BadInput(where, problem);
    }
    plan.axes.push_back(axis.name());
    values.push_back(v);
  }
  if (!seen.count("platform")) throw BadInput(path, "needs an axis 'platform'");
  const bool from_files = seen.count("trace.file");
  if (from_files) {
    for (const std::string& name : plan.axes)
      if (name.rfind("trace.", 0) == 0 && name != "trace.file")
        throw BadInput(path, "axis '" + name + "' is a generator setting; it cannot be combined with trace.file");
  } else if (!seen.count("trace.model") || !seen.count("trace.dataset")) {
    throw BadInput(path, "needs an axis 'trace.file', or 'trace.model' and 'trace.dataset'");
  }
  for (const std::string& m : spec.metric())
    if (!is_known_metric(m)) throw BadInput(path, "unknown metric '" + m + "' (" + known_metrics_help() + ")");
  plan.metrics.assign(spec.metric().begin(), spec.metric().end());

  // The combinations: the listed points, or the cartesian product.
  std::vector<std::vector<std::string>> combos;
  if (spec.point_size() > 0) {
    for (int p = 0; p < spec.point_size(); ++p) {
      const std::string where = path + ": point " + std::to_string(p + 1);
      std::map<std::string, std::string> given;
      for (const std::string& assignment : spec.point(p).set()) {
        const size_t eq = assignment.find('=');
        if (eq == std::string::npos) throw BadInput(where, "'" + assignment + "' is not axis=value");
        const std::string name = assignment.substr(0, eq);
        if (!seen.count(name)) throw BadInput(where, "'" + name + "' is not an axis of the sweep");
        if (!given.emplace(name, assignment.substr(eq + 1)).second) throw BadInput(where, "sets '" + name + "' twice");
      }
      std::vector<std::string> combo;
      for (const std::string& name : plan.axes) {
        if (!given.count(name)) throw BadInput(where, "gives no value for axis '" + name + "'");
        combo.push_back(given[name]);
      }
      combos.push_back(combo);
    }
  } else {
    size_t total = 1;
    for (const auto& v : values) {
      total *= v.size();
      if (total > 1000000) throw BadInput(path, "expands to more than 1000000 runs");
    }
    for (size_t i = 0; i < total; ++i) {
      std::vector<std::string> combo(values.size());
      size_t rest = i;
      for (size_t a = values.size(); a-- > 0;) {
        combo[a] = values[a][rest % values[a].size()];
        rest /= values[a].size();
      }
      combos.push_back(combo);
    }
  }

  std::map<std::string, LoadedVariant> variants;
  std::map<std::string, TraceFileInfo> trace_files;
  for (size_t c = 0; c < combos.size(); ++c) {
    PlannedRun run;
    std::map<std::string, std::string> by_name;
    for (size_t a = 0; a < plan.axes.size(); ++a) {
      run.inputs.emplace_back(plan.axes[a], combos[c][a]);
      by_name[plan.axes[a]] = combos[c][a];
      if (plan.axes[a] == "platform") run.platform = combos[c][a];
      else if (plan.axes[a].rfind("trace.", 0) != 0) run.overrides.push_back(plan.axes[a] + "=" + combos[c][a]);
    }
    run.trace = trace_source(by_name, path);

    std::string variant_key = run.platform;
    for (const std::string& o : run.overrides) variant_key += "\n" + o;
    auto it = variants.find(variant_key);
    if (it == variants.end()) {
      schema::LoadedPlatform loaded;
      try {
        loaded = schema::load_platform(run.platform, run.overrides);
      } catch (const BadInput& e) {
        throw BadInput(path, e.what());
      }
      std::string text;
      google::protobuf::TextFormat::PrintToString(loaded.platform, &text);
      LoadedVariant v;
      v.key = fnv1a_hex(text);
      v.program = schema::Platform::Program_Name(loaded.platform.program());
      v.microbenchmark = loaded.platform.program() == schema::Platform::MICROBENCHMARK;
      v.system = loaded.platform.name();
      it = variants.emplace(variant_key, v).first;
    }
    const LoadedVariant& variant = it->second;
    run.microbenchmark = variant.microbenchmark;
    run.system = variant.system;

    if (!run.trace.file.empty()) {
      auto t = trace_files.find(run.trace.file);
      if (t == trace_files.end()) t = trace_files.emplace(run.trace.file, trace_file_info(run.trace.file)).first;
      run.trace.key = t->second.key;
      if (!t->second.programs.count(variant.program))
        throw BadInput(path, "trace " + run.trace.file + " has no " + variant.program + " program, which platform '" +
                                 run.platform + "' runs");
    } else if (variant.microbenchmark) {
      throw BadInput(path, "platform '" + run.platform +
                               "' is a NAND stream microbenchmark; give it a trace.file (e.g. traces/samples/nand_stream.trace)");
    }
    run.id = fnv1a_hex("ispsim-run-v1\n" + variant.key + "\n" + run.trace.key);
    plan.runs.push_back(std::move(run));
  }
  if (plan.runs.empty()) throw BadInput(path, "has no runs");
  return plan;
}

}  // namespace ispsim::sweep
