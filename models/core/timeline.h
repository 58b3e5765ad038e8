// A timeline of what ran where, written as Chrome trace-event JSON (opens in
// Perfetto and chrome://tracing): one track (a "thread") per device or channel,
// one complete event ("ph":"X") per span. Times are kept in picoseconds and
// written in microseconds with six decimals, so nothing is rounded away and the
// same run gives the same bytes. Tracks appear in the order they were first used.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ispsim::core {

class Timeline {
 public:
  // Records a span [start_ps, end_ps) named `name` on `track`; `category`
  // groups spans (e.g. the op's phase). An empty span (start == end) is kept,
  // as an instant op; a reversed one throws std::logic_error (a programming error).
  void span(const std::string& track, const std::string& name, const std::string& category,
            uint64_t start_ps, uint64_t end_ps);
  size_t size() const { return spans_.size(); }
  // Writes through AtomicFile; an unwritable path throws BadInput.
  void write_file(const std::string& path) const;
  void write(std::ostream& os) const;

 private:
  struct Span {
    uint32_t track;
    std::string name, category;
    uint64_t start_ps, end_ps;
  };
  std::map<std::string, uint32_t> track_ids_;
  std::vector<std::string> tracks_;
  std::vector<Span> spans_;
};

}  // namespace ispsim::core
