// Statistics with hierarchical names, units and descriptions (the gem5 ADD_STAT
// discipline). A module owns a stats::Group named after its SystemC path and
// declares each statistic once; the global Registry dumps all of them, sorted
// by name, as JSON or CSV. Same inputs give byte-identical output.
//
// The idiom: a count or an accumulated quantity is a member that registers
// itself where it is declared (the Group declared before it),
//   stats::Counter& pages_read_ = stats_.counter("pages_read", "count", "...");
// incremented where the event happens and read by the module's getter
// (pages_read_.value()); formula()/formula_integer() only for derived values
// (bytes = pages x page size, ns from ps, sums over parts). See models/ssd/ssd.h.
//
// Order: names are sorted component by component (names::HierarchicalLess), so
// the CSV rows and the JSON objects list statistics in the same order.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "models/core/names.h"

namespace ispsim::stats {

// An exact event count (pages read, bytes moved). Printed as an integer.
class Counter {
 public:
  Counter& operator++() { ++value_; return *this; }
  Counter& operator+=(uint64_t n) { value_ += n; return *this; }
  uint64_t value() const { return value_; }
  void reset() { value_ = 0; }

 private:
  uint64_t value_ = 0;
};

// A real-valued quantity that is set or accumulated (energy in pJ, busy time in ns).
class Scalar {
 public:
  Scalar& operator=(double v) { value_ = v; return *this; }
  Scalar& operator+=(double v) { value_ += v; return *this; }
  double value() const { return value_; }
  void reset() { value_ = 0.0; }

 private:
  double value_ = 0.0;
};

// One registered statistic as seen by the dumpers.
struct Entry {
  std::string name;  // full hierarchical name, '.'-separated
  std::string unit;  // never empty: "count", "bytes", "ns", "pJ", "GB/s", "ratio", ...
  std::string desc;
  std::function<double()> read;  // current value
  bool integral = false;         // printed without a fraction
  // Exact value of an integral statistic (counters above 2^53 do not survive a
  // double). When empty, an integral statistic prints read() rounded.
  std::function<uint64_t()> read_integer;
};

// The SI unit of a declared unit and how to convert a value to it: value *
// multiply / divide (ns -> s: / 1e9, pJ -> J: / 1e12, GB/s -> bytes/s: * 1e9;
// powers of ten are exact doubles, so a division rounds once). Other units
// (count, bytes, ratio, ...) convert to themselves.
struct SiUnit {
  std::string unit;
  double multiply = 1, divide = 1;
  double of(double value) const { return value * multiply / divide; }
  bool converts() const { return multiply != 1 || divide != 1; }
};
SiUnit si_unit(const std::string& unit);

// How a dump shows each statistic: in its declared unit, or converted to SI
// (a count or an integral statistic already in an SI unit stays an exact
// integer); `skip` leaves out the statistics it returns true for.
struct DumpOptions {
  bool si = false;
  std::function<bool(const Entry&)> skip;
};

// The value of `e` as a dump prints it: shortest exact text, integers without a
// fraction; non-finite values are null in JSON, nan/inf/-inf in CSV.
std::string format_value(const Entry& e, bool json, bool si = false);

class Registry {
 public:
  // The process-wide registry (SystemC elaborates once per process).
  static Registry& global();

  // Throws std::logic_error (a programming error, not bad input) on a duplicate
  // name, a malformed name (empty component, space), an empty unit/description,
  // a missing read function, or a name that would be both a statistic and a
  // group of statistics ("a.b" next to "a.b.c").
  void add(Entry e);
  // Removes the statistic `name` if present.
  void remove(const std::string& name);
  // Removes `prefix` itself and everything under "prefix.".
  void remove_prefix(const std::string& prefix);
  void clear();
  size_t size() const { return entries_.size(); }
  std::vector<const Entry*> sorted() const;
  // The statistic `name`, or nullptr.
  const Entry* find(const std::string& name) const;

  // JSON: nested objects following the name hierarchy; each leaf is
  // {"value": v, "unit": "...", "desc": "..."}. Doubles use the shortest
  // representation that round-trips, so output is deterministic.
  void write_json(std::ostream& os, const DumpOptions& options = {}) const;
  // CSV: header "name,value,unit,description", one row per statistic, sorted.
  // Fields containing a comma, quote, or line break are quoted (RFC 4180); rows
  // end in "\n".
  void write_csv(std::ostream& os) const;
  // Writes through ispsim::AtomicFile: JSON if `path` ends in ".json", CSV if
  // it ends in ".csv"; anything else, or an unwritable path, throws BadInput.
  void write_file(const std::string& path) const;

 private:
  std::map<std::string, Entry, names::HierarchicalLess> entries_;
};

// The statistics of one module. Declares into Registry::global() (or the given
// registry) under "<path>.<name>" ("<name>" when path is empty); removes exactly
// its own statistics again when destroyed.
class Group {
 public:
  explicit Group(std::string path);
  Group(Registry& registry, std::string path);
  ~Group();
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;

  Counter& counter(const std::string& name, const std::string& unit, const std::string& desc);
  Scalar& scalar(const std::string& name, const std::string& unit, const std::string& desc);
  // A value derived from others, evaluated at dump time (e.g. bandwidth = bytes / time).
  void formula(const std::string& name, const std::string& unit, const std::string& desc,
               std::function<double()> f);
  // The same for an exact integer (e.g. bytes = pages * page size), printed
  // without a fraction and exact beyond 2^53.
  void formula_integer(const std::string& name, const std::string& unit, const std::string& desc,
                       std::function<uint64_t()> f);
  const std::string& path() const { return path_; }

 private:
  std::string full_name(const std::string& name) const;
  Registry& registry_;
  std::string path_;
  std::vector<std::string> names_;  // what the destructor removes
  std::vector<std::unique_ptr<Counter>> counters_;
  std::vector<std::unique_ptr<Scalar>> scalars_;
};

}  // namespace ispsim::stats
