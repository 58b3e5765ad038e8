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
#include "schema/overrides.h"
#include "schema/platform_loader.h"
#include "schema/textproto_file.h"
#include "platforms/systems/cim_system.h"
#include "tools/ispsim/sweep/metrics.h"
#include "traces/gen/dataset_profiles.h"
#include "traces/gen/model_presets.h"
#include "traces/trace_io.h"

namespace ispsim::sweep {
namespace {

// trace.file and the settings of both generators, as trace.<setting>.
bool is_trace_setting(const std::string& axis) {
  if (axis == "trace.file") return true;
  if (axis.rfind("trace.", 0) != 0) return false;
  const std::string name = axis.substr(6);
  return tracegen::has_setting(tracegen::Generator::REQUEST, name) ||
         tracegen::has_setting(tracegen::Generator::DECODE, name);
}

std::string known_trace_settings() {
  std::string out = "trace.file; request generator:";
  for (const std::string& n : tracegen::setting_names(tracegen::Generator::REQUEST)) out += " trace." + n;
  out += "; decode generator:";
  for (const std::string& n : tracegen::setting_names(tracegen::Generator::DECODE)) out += " trace." + n;
  return out;
}

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

// The trace of one combination of axis values, from the generator the
// platform's program needs. A generator setting that generator does not have
// is bad input (it would be ignored).
TraceSource trace_source(const std::map<std::string, std::string>& values, bool decode, const std::string& platform,
                         const std::string& where) {
  TraceSource source;
  auto file = values.find("trace.file");
  if (file != values.end()) {
    source.file = file->second;
    return source;
  }
  const tracegen::Generator generator = decode ? tracegen::Generator::DECODE : tracegen::Generator::REQUEST;
  const std::vector<std::string> required =
      decode ? std::vector<std::string>{"model", "context_tokens"} : std::vector<std::string>{"model", "dataset"};
  for (const std::string& name : required)
    if (!values.count("trace." + name))
      throw BadInput(where, "platform '" + platform + "' runs traces of the " + tracegen::generator_name(generator) +
                                " generator, which needs an axis 'trace." + name + "' (or trace.file)");
  for (const auto& [axis, text] : values) {
    if (axis.rfind("trace.", 0) != 0) continue;
    const std::string name = axis.substr(6);
    if (!tracegen::has_setting(generator, name))
      throw BadInput(where, "axis '" + axis + "' is not a setting of the " + tracegen::generator_name(generator) +
                                " generator, whose traces platform '" + platform +
                                "' runs (list the runs that use it as points)");
  }
  if (decode) {
    tracegen::DecodeRequest r = tracegen::default_decode_request();
    for (const auto& [axis, text] : values)
      if (axis.rfind("trace.", 0) == 0) tracegen::apply_setting(r, axis.substr(6), text, where + ": " + axis);
    source.key = fnv1a_hex(tracegen::canonical_text(r));
    source.decode = r;
  } else {
    tracegen::ShapeOptions o;
    for (const auto& [axis, text] : values)
      if (axis.rfind("trace.", 0) == 0) tracegen::apply_setting(o, axis.substr(6), text, where + ": " + axis);
    source.key = fnv1a_hex(tracegen::canonical_text(o));
    source.shape = o;
  }
  return source;
}

// Hash of a trace file's bytes, and its header (read once per file).
struct TraceFileInfo {
  std::string key;
  trace::Header header;
};

TraceFileInfo trace_file_info(const std::string& path) {
  TraceFileInfo info;
  info.header = trace::TraceReader(path).header();  // validates the header; BadInput names the file
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  info.key = fnv1a_hex(bytes);
  return info;
}

// Loaded platforms by (platform, overrides), each loaded and checked once.
struct LoadedVariant {
  std::string key;  // hash of the resolved platform text
  schema::Platform platform;
  bool microbenchmark = false;
  bool decode = false;  // paper 1's decode systems: traces of the decode generator
  std::string system;   // display name
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

SweepPlan load_sweep(const std::string& path) {
  Sweep spec;
  schema::parse_textproto_file(path, spec, "sweep file");
  return expand_sweep(spec, path);
}

SweepPlan sweep_from_text(const std::string& text, const std::string& where) {
  Sweep spec;
  schema::parse_textproto(text, where, spec);
  return expand_sweep(spec, where);
}

SweepPlan expand_sweep(const Sweep& parsed, const std::string& path) {
  SweepPlan plan;
  plan.file = path;
  plan.spec = parsed;
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
    if (is_trace && !is_trace_setting(axis.name()))
      throw BadInput(where, "unknown trace setting (known: " + known_trace_settings() + ")");
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
  } else if (!seen.count("trace.model")) {
    throw BadInput(path, "needs an axis 'trace.file', or 'trace.model' with the generator's other settings");
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
      LoadedVariant v;
      v.decode = systems::is_cim_platform(loaded.platform);
      if (v.decode)  // a parameter the platform would ignore makes rows that differ in name only
        for (const std::string& ignored : systems::ignored_settings(loaded))
          throw BadInput(path, "axis '" + ignored + "' sets a parameter that platform '" +
                                   run.platform + "' does not use (list the runs that use it as points)");
      std::string text;
      google::protobuf::TextFormat::PrintToString(loaded.platform, &text);
      v.key = fnv1a_hex(text);
      v.platform = loaded.platform;
      v.microbenchmark = loaded.platform.program() == schema::Platform::MICROBENCHMARK;
      v.system = loaded.platform.name();
      it = variants.emplace(variant_key, v).first;
    }
    const LoadedVariant& variant = it->second;
    run.microbenchmark = variant.microbenchmark;
    run.system = variant.system;
    run.trace = trace_source(by_name, variant.decode, run.platform, path);

    if (!run.trace.file.empty()) {
      auto t = trace_files.find(run.trace.file);
      if (t == trace_files.end()) t = trace_files.emplace(run.trace.file, trace_file_info(run.trace.file)).first;
      run.trace.key = t->second.key;
      try {
        systems::program_source(variant.platform, t->second.header, run.trace.file);
      } catch (const BadInput& e) {
        throw BadInput(path, e.what());
      }
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
