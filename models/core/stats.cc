#include "models/core/stats.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <stdexcept>

#include "common/atomic_file.h"
#include "common/error.h"

namespace ispsim::stats {

namespace {

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Shortest decimal text that reads back to exactly `v` (std::to_chars), so the
// same value always prints the same way. Whole numbers below 1e15 print as
// integers: the shortest form of 1000000.0 would be "1e+06", which reads badly
// for a time in ns. Non-finite values (a formula dividing by zero) have no JSON
// spelling: null in JSON, nan/inf/-inf in CSV.
std::string format_double(double v, bool json) {
  if (std::isnan(v)) return json ? "null" : "nan";
  if (std::isinf(v)) return json ? "null" : (v > 0 ? "inf" : "-inf");
  char buf[64];
  if (v == std::trunc(v) && std::fabs(v) < 1e15) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  const auto result = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, result.ptr);
}


std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += buf;
        } else {
          out += c;  // UTF-8 passes through unchanged
        }
    }
  }
  return out + "\"";
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace

SiUnit si_unit(const std::string& unit) {
  static const std::map<std::string, SiUnit> kToSi = {
      {"ps", {"s", 1, 1e12}}, {"ns", {"s", 1, 1e9}}, {"us", {"s", 1, 1e6}}, {"ms", {"s", 1, 1e3}},
      {"pJ", {"J", 1, 1e12}}, {"nJ", {"J", 1, 1e9}}, {"uJ", {"J", 1, 1e6}}, {"mJ", {"J", 1, 1e3}},
      {"mW", {"W", 1, 1e3}},  {"GB/s", {"bytes/s", 1e9, 1}}, {"MB/s", {"bytes/s", 1e6, 1}}};
  const auto it = kToSi.find(unit);
  return it == kToSi.end() ? SiUnit{unit} : it->second;
}

std::string format_value(const Entry& e, bool json, bool si) {
  const SiUnit to = si ? si_unit(e.unit) : SiUnit{e.unit};
  if (e.integral && e.read_integer && !to.converts()) return std::to_string(e.read_integer());
  const double v = to.of(e.read());
  if (e.integral && std::isfinite(v) && !to.converts()) {
    char buf[400];  // %.0f of the largest double has 309 digits
    std::snprintf(buf, sizeof buf, "%.0f", std::nearbyint(v));
    return buf;
  }
  return format_double(v, json);
}

Registry& Registry::global() {
  static Registry registry;
  return registry;
}

void Registry::add(Entry e) {
  const std::string bad_name = names::check(e.name);
  if (!bad_name.empty()) throw std::logic_error("statistic: " + bad_name);
  if (e.unit.empty()) throw std::logic_error("statistic " + e.name + ": empty unit");
  if (e.desc.empty()) throw std::logic_error("statistic " + e.name + ": empty description");
  if (!e.read) throw std::logic_error("statistic " + e.name + ": no read function");
  if (entries_.count(e.name)) throw std::logic_error("statistic " + e.name + ": declared twice");
  // A name must not be both a statistic and a group: the JSON could not hold both.
  for (size_t dot = e.name.find('.'); dot != std::string::npos; dot = e.name.find('.', dot + 1)) {
    const std::string prefix = e.name.substr(0, dot);
    if (entries_.count(prefix))
      throw std::logic_error("statistic " + e.name + ": " + prefix + " is already a statistic, not a group");
  }
  // Everything under "name." sorts directly after "name" (HierarchicalLess).
  const auto next = entries_.upper_bound(e.name);
  if (next != entries_.end() && starts_with(next->first, e.name + "."))
    throw std::logic_error("statistic " + e.name + ": already a group (holds " + next->first + ")");
  std::string name = e.name;
  entries_.emplace(std::move(name), std::move(e));
}

void Registry::remove(const std::string& name) { entries_.erase(name); }

void Registry::remove_prefix(const std::string& prefix) {
  auto it = entries_.lower_bound(prefix);
  const std::string under = prefix + ".";
  while (it != entries_.end() && (it->first == prefix || starts_with(it->first, under))) it = entries_.erase(it);
}

void Registry::clear() { entries_.clear(); }

std::vector<const Entry*> Registry::sorted() const {
  std::vector<const Entry*> out;
  out.reserve(entries_.size());
  for (const auto& kv : entries_) out.push_back(&kv.second);
  return out;
}

const Entry* Registry::find(const std::string& name) const {
  const auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second;
}

void Registry::write_json(std::ostream& os, const DumpOptions& options) const {
  bool any = false;
  for (const auto& kv : entries_) any |= !options.skip || !options.skip(kv.second);
  if (!any) {
    os << "{}\n";
    return;
  }
  // Walk the sorted names, closing and opening one object per hierarchy level.
  // open[i] is the i-th open group; the outermost object is implicit.
  std::vector<std::string> open;
  bool first_in_object = true;
  auto indent = [&os](size_t depth) { os << std::string(2 * (depth + 1), ' '); };
  os << "{";
  for (const auto& kv : entries_) {
    const Entry& e = kv.second;
    if (options.skip && options.skip(e)) continue;
    std::vector<std::string> parts = names::split(e.name);
    const std::string leaf = parts.back();
    parts.pop_back();
    size_t common = 0;
    while (common < open.size() && common < parts.size() && open[common] == parts[common]) ++common;
    while (open.size() > common) {
      open.pop_back();
      os << "\n";
      indent(open.size());
      os << "}";
      first_in_object = false;
    }
    for (size_t i = common; i < parts.size(); ++i) {
      os << (first_in_object ? "\n" : ",\n");
      indent(open.size());
      os << json_string(parts[i]) << ": {";
      open.push_back(parts[i]);
      first_in_object = true;
    }
    os << (first_in_object ? "\n" : ",\n");
    indent(open.size());
    os << json_string(leaf) << ": {\"value\": " << format_value(e, true, options.si)
       << ", \"unit\": " << json_string(options.si ? si_unit(e.unit).unit : e.unit)
       << ", \"desc\": " << json_string(e.desc) << "}";
    first_in_object = false;
  }
  while (!open.empty()) {
    open.pop_back();
    os << "\n";
    indent(open.size());
    os << "}";
  }
  os << "\n}\n";
}

void Registry::write_csv(std::ostream& os) const {
  os << "name,value,unit,description\n";
  for (const auto& kv : entries_) {
    const Entry& e = kv.second;
    os << csv_field(e.name) << ',' << csv_field(format_value(e, false)) << ',' << csv_field(e.unit) << ','
       << csv_field(e.desc) << '\n';
  }
}

void Registry::write_file(const std::string& path) const {
  const bool json = ends_with(path, ".json");
  if (!json && !ends_with(path, ".csv"))
    throw BadInput(path, "statistics file name must end in .json or .csv");
  AtomicFile file(path);
  if (json) {
    write_json(file.stream());
  } else {
    write_csv(file.stream());
  }
  file.commit();
}

Group::Group(std::string path) : Group(Registry::global(), std::move(path)) {}

Group::Group(Registry& registry, std::string path) : registry_(registry), path_(std::move(path)) {}

Group::~Group() {
  for (const std::string& name : names_) registry_.remove(name);
}

std::string Group::full_name(const std::string& name) const {
  return path_.empty() ? name : path_ + "." + name;
}

Counter& Group::counter(const std::string& name, const std::string& unit, const std::string& desc) {
  auto counter = std::make_unique<Counter>();
  const Counter* c = counter.get();
  Entry e;
  e.name = full_name(name);
  e.unit = unit;
  e.desc = desc;
  e.read = [c] { return static_cast<double>(c->value()); };
  e.read_integer = [c] { return c->value(); };
  e.integral = true;
  // Reserve first so nothing can throw once the entry is registered.
  names_.reserve(names_.size() + 1);
  counters_.reserve(counters_.size() + 1);
  registry_.add(e);
  names_.push_back(e.name);
  counters_.push_back(std::move(counter));
  return *counters_.back();
}

Scalar& Group::scalar(const std::string& name, const std::string& unit, const std::string& desc) {
  auto scalar = std::make_unique<Scalar>();
  const Scalar* s = scalar.get();
  Entry e;
  e.name = full_name(name);
  e.unit = unit;
  e.desc = desc;
  e.read = [s] { return s->value(); };
  names_.reserve(names_.size() + 1);
  scalars_.reserve(scalars_.size() + 1);
  registry_.add(e);
  names_.push_back(e.name);
  scalars_.push_back(std::move(scalar));
  return *scalars_.back();
}

void Group::formula(const std::string& name, const std::string& unit, const std::string& desc,
                    std::function<double()> f) {
  Entry e;
  e.name = full_name(name);
  e.unit = unit;
  e.desc = desc;
  e.read = std::move(f);
  names_.reserve(names_.size() + 1);
  registry_.add(e);
  names_.push_back(e.name);
}

void Group::formula_integer(const std::string& name, const std::string& unit, const std::string& desc,
                            std::function<uint64_t()> f) {
  Entry e;
  e.name = full_name(name);
  e.unit = unit;
  e.desc = desc;
  if (f) e.read = [f] { return static_cast<double>(f()); };
  e.read_integer = std::move(f);
  e.integral = true;
  names_.reserve(names_.size() + 1);
  registry_.add(e);
  names_.push_back(e.name);
}

}  // namespace ispsim::stats
