// Value-change-dump waveforms of module state. ispsim writes VCD itself rather
// than through sc_trace: SystemC's writer samples every traced variable at every
// time step and cannot open or close a time window, while here a module reports
// a change only when it happens and the writer drops what is filtered out or
// outside the window. Files are accepted by gtkwave's vcd2fst.
//
// File format (IEEE 1364-2005 §18.2): no $date (the same run gives the same
// bytes), "$timescale 1ps" because SystemC's default time resolution is 1 ps,
// so every timestamp is exact; one "$scope module" per component of the dotted
// names, "$var wire <width> <code> <leaf> $end" per signal; the values at the
// window begin under "#<begin> $dumpvars"; then "#<t>" followed by the signals
// that changed at t (vectors "b1010 <code>" without leading zeros, 1-bit
// signals "1<code>"); finally "#<t>" of the simulation end (or window end) when
// close() is called. Changes stream to the output's temporary file as time
// advances, so memory stays bounded whatever the run length.
//
// Beside "X.vcd" the writer puts a GTKWave view, "X.gtkw" (vcd_view.h): the
// signals grouped by module, enum-valued signals shown by name through
// translate filter files "X.<encoding>.filter", the window zoomed to the run
// and markers at the times close() is given. "X.fst" instead of "X.vcd" writes
// FST, converted at close() by GTKWave's vcd2fst.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ispsim {
class OutputFiles;
}

namespace ispsim::vcd {

class Writer;

// What a traced signal is part of: --vcd-filter selects by role, and the view
// groups by it (a signal with a channel goes into that channel's group).
enum class Role : uint8_t { kOther, kHost, kPcie, kController, kCoordinator, kChannel, kDie, kScratchpad, kSimd };

struct RoleInfo {
  Role role;
  const char* name;     // as given to --vcd-filter
  const char* meaning;  // one line, for the README and the error message
};
// Every role but kOther, in the order of the view's groups.
const std::vector<RoleInfo>& roles();
// "dies" -> kDie; nullptr if no role has that name.
const RoleInfo* find_role(const std::string& name);
const char* to_string(Role role);

// The names of the values of an enum-valued signal: one table per module,
// used for the waveform's translate filter, its README table and any
// statistic named after a value, so that they cannot drift apart.
struct Encoding {
  std::string name;  // [a-z0-9_]+, e.g. "die_state"; names the filter file
  std::vector<std::pair<uint64_t, std::string>> values;  // value -> name (no spaces)
  // The name of `value`, or its decimal digits if it has none.
  std::string name_of(uint64_t value) const;
};

// How a module declares a traced signal beyond its name and width.
struct Kind {
  Role role = Role::kOther;
  int channel = -1;                    // flash channel it belongs to, -1 = none
  const Encoding* encoding = nullptr;  // names of its values; nullptr = a number (copied by add())
};

// A named time in the view (GTKWave named markers A..Z).
struct Marker {
  uint64_t time_ps;
  std::string name;
};

// A traced state variable owned by a module. set() costs one branch when the
// signal is not being written (no --vcd, filtered out).
//
// Lifetime: a Writer keeps a pointer to each attached Signal until close() or
// its destruction, so close the writer before the signals' owners go away and
// attach signals only once they sit at their final address (a std::vector of
// Signals must not grow afterwards). Copying gives a detached signal with the
// same value.
class Signal {
 public:
  Signal() = default;
  Signal(const Signal& other) : last_(other.last_) {}
  Signal& operator=(const Signal& other) {
    last_ = other.last_;
    return *this;
  }
  // Records the value at the current SystemC time if attached and changed.
  void set(uint64_t value) {
    if (writer_ && value != last_) record(value);
    last_ = value;
  }
  uint64_t value() const { return last_; }
  // Whether set() reaches a writer: false when filtered out, after close(), and
  // once the simulation has passed the window end (nothing more is written).
  bool attached() const { return writer_ != nullptr; }

 private:
  friend class Writer;
  void record(uint64_t value);
  Writer* writer_ = nullptr;
  uint32_t id_ = 0;
  uint64_t last_ = 0;
};

struct Options {
  std::string path;                    // output file, ending in .vcd or .fst (written atomically)
  std::vector<std::string> filters;    // glob patterns (fnmatch, '*' also matches '.') on full names
  uint64_t window_begin_ps = 0;        // changes at or before this are folded into the initial value
  uint64_t window_end_ps = UINT64_MAX; // changes after this are dropped
  std::vector<Role> roles;             // signals of these roles pass too; no filters and no roles = all
};

class Writer {
 public:
  // Opens the temporary output files. Throws BadInput if the window is empty
  // (begin > end), a filter is empty, the path does not end in .vcd or .fst,
  // FST is asked for without vcd2fst on PATH, or a file cannot be opened.
  explicit Writer(Options opts);
  // Without close() the output is discarded (no half-written file).
  ~Writer();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Attaches `sig` under the hierarchical name `name` ("top.nand.ch0.die1.state")
  // with `width` bits (1..64), if the name passes the filters; the signal's
  // current value is its initial value. Values are truncated to `width` bits.
  // Returns whether the signal was attached. Call before the simulation passes
  // the window begin. Throws std::logic_error on a malformed or duplicate name,
  // a name that is also a scope ("a.b" next to "a.b.c"), a bad width, or a
  // signal already attached.
  // `kind` gives its role, channel and value names (see Kind).
  bool add(const std::string& name, unsigned width, Signal& sig, const Kind& kind = {});
  // Writes what is still pending and the end time (the current SystemC time,
  // capped at the window end), commits the file, its GTKWave view and filters,
  // and detaches every signal. `markers` (at most 26 inside the window are
  // kept, the earliest) become the view's named markers.
  void close(const std::vector<Marker>& markers = {});
  // The same, but the files join `outputs` instead of being committed: they are
  // committed with the command's other outputs, or not at all.
  void close(const std::vector<Marker>& markers, OutputFiles& outputs);
  // Number of signals attached (passed the filters).
  size_t signal_count() const;
  // Throws BadInput naming --vcd-filter when the filters selected none of the
  // signals offered, with the scopes they are under. Call after adding them.
  void require_signals() const;

 private:
  friend class Signal;
  void record(uint32_t id, uint64_t value);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Whether `name` passes `filters` (empty = everything passes).
bool matches(const std::vector<std::string>& filters, const std::string& name);

// --vcd-filter: comma-separated items, each a role name ("dies") or a glob
// (anything with '*', '?', '[' or '.', e.g. '*.ch0.*'), added to opts.filters
// or opts.roles. Throws BadInput(where, ...) on an empty item or an unknown
// role, listing the known ones.
void add_filter(const std::string& text, const std::string& where, Options& opts);

// Command-line helpers. parse_time_ps("1.5us") = 1500000: a decimal number and
// a unit (ps, ns, us, ms, s), converted exactly (no floating point); a value
// finer than 1 ps or beyond 2^64-1 ps is an error. Throws BadInput(where, ...).
uint64_t parse_time_ps(const std::string& text, const std::string& where);
// parse_window("10us:20us", where, opts) sets opts.window_begin_ps/end_ps;
// either side may be empty ("10us:" runs to the end, ":5ns" starts at 0).
void parse_window(const std::string& text, const std::string& where, Options& opts);

}  // namespace ispsim::vcd
