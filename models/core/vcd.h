// Value-change-dump waveforms of module state. ispsim writes VCD itself rather
// than through sc_trace: SystemC's writer samples every traced variable at every
// time step and cannot open or close a time window, while here a module reports
// a change only when it happens and the writer drops what is filtered out or
// outside the window. Files are accepted by gtkwave's vcd2fst.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ispsim::vcd {

class Writer;

// A traced state variable owned by a module. set() costs one branch when the
// signal is not being written (no --vcd, filtered out).
class Signal {
 public:
  Signal() = default;
  // Records the value at the current SystemC time if attached and changed.
  void set(uint64_t value) {
    if (writer_ && value != last_) record(value);
  }
  uint64_t value() const { return last_; }

 private:
  friend class Writer;
  void record(uint64_t value);
  Writer* writer_ = nullptr;
  uint32_t id_ = 0;
  uint64_t last_ = 0;
};

struct Options {
  std::string path;                    // output file (written atomically)
  std::vector<std::string> filters;    // glob patterns on full names; empty = all
  uint64_t window_begin_ps = 0;        // changes before this are folded into the initial value
  uint64_t window_end_ps = UINT64_MAX; // changes after this are dropped
};

class Writer {
 public:
  explicit Writer(Options opts);
  ~Writer();
  // Attaches `sig` under the hierarchical name `name` ("top.nand.ch0.die1.state")
  // with `width` bits, if the name passes the filters. Call before the simulation starts.
  void add(const std::string& name, unsigned width, Signal& sig);
  // Writes the header and all changes, 1 ns timescale... see vcd.cc; commits the file.
  void close();
  // ...
 private:
  friend class Signal;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ispsim::vcd
