// A timeline of what ran where, written as Chrome trace-event JSON (opens in
// Perfetto and chrome://tracing): one process per platform, one track (a
// "thread") per device or channel, one complete event ("ph":"X") per span with
// its arguments (op id, layer, bytes) where known, and counter tracks
// ("ph":"C"). Times are kept in picoseconds and written in microseconds with
// six decimals, so nothing is rounded away and the same run gives the same
// bytes. Tracks appear in the order they were first used.
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace ispsim::core {

// What a span is about; a negative value is not known and not written.
struct SpanArgs {
  int64_t op = -1;     // the trace op's id
  int64_t layer = -1;  // decoder layer
  int64_t bytes = -1;  // bytes the span moves or reads
};

class Timeline {
 public:
  // Names the process (the platform); its pid is derived from the name, so
  // timelines of different platforms load side by side in one Perfetto view.
  // Without it: pid 1, "ispsim".
  void set_process(const std::string& name);
  static uint32_t pid_of(const std::string& name);

  // Records a span [start_ps, end_ps) named `name` on `track`; `category`
  // groups spans (e.g. the op's phase). An empty span (start == end) is kept,
  // as an instant op; a reversed one throws std::logic_error (a programming error).
  void span(const std::string& track, const std::string& name, const std::string& category,
            uint64_t start_ps, uint64_t end_ps, SpanArgs args = {});
  // One sample of counter `name` (its unit in the name): `value` from `at_ps`
  // on. Callers add a bounded number per span, never per event.
  void counter(const std::string& name, uint64_t at_ps, double value);
  // Derives counters from `track`'s spans when written, so they cost no memory
  // while the run goes: "<track> in flight" (spans open at once) and, when its
  // spans carry bytes, "<track> (GB/s)" (each span's bytes spread evenly over it).
  void derive_counters(const std::string& track);

  size_t size() const { return spans_.size(); }
  // Writes through AtomicFile; an unwritable path throws BadInput.
  void write_file(const std::string& path) const;
  void write(std::ostream& os) const;

 private:
  struct Span {
    uint32_t track;
    std::string name, category;
    uint64_t start_ps, end_ps;
    SpanArgs args;
  };
  struct Sample {
    uint32_t counter;
    uint64_t at_ps;
    double value;
  };
  void write_spans(std::ostream& os, const char*& sep) const;
  void write_derived(std::ostream& os, const char*& sep, uint32_t track) const;
  void write_counter(std::ostream& os, const char*& sep, const std::string& name, uint64_t at_ps, double value) const;

  uint32_t pid_ = 1;
  std::string process_ = "ispsim";
  std::map<std::string, uint32_t> track_ids_;
  std::vector<std::string> tracks_;
  std::vector<Span> spans_;
  std::vector<std::string> counters_;
  std::vector<Sample> samples_;
  std::vector<std::string> derived_;  // tracks whose counters are derived when written
};

}  // namespace ispsim::core
