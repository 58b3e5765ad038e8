#include "models/core/timeline.h"

#include <cstdio>
#include <ostream>
#include <stdexcept>

#include <boost/json.hpp>

#include "common/atomic_file.h"

namespace ispsim::core {
namespace {

std::string microseconds(uint64_t ps) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%llu.%06llu", static_cast<unsigned long long>(ps / 1000000),
                static_cast<unsigned long long>(ps % 1000000));
  return buf;
}

std::string quoted(const std::string& s) { return boost::json::serialize(boost::json::value(s)); }

}  // namespace

void Timeline::span(const std::string& track, const std::string& name, const std::string& category,
                    uint64_t start_ps, uint64_t end_ps) {
  if (end_ps < start_ps) throw std::logic_error("timeline: span '" + name + "' on " + track + " ends before it starts");
  auto [it, inserted] = track_ids_.emplace(track, static_cast<uint32_t>(tracks_.size()));
  if (inserted) tracks_.push_back(track);
  spans_.push_back({it->second, name, category, start_ps, end_ps});
}

void Timeline::write(std::ostream& os) const {
  os << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  bool first = true;
  auto sep = [&] { os << (first ? "" : ",\n"); first = false; };
  sep();
  os << R"({"ph":"M","pid":1,"name":"process_name","args":{"name":"ispsim"}})";
  for (size_t t = 0; t < tracks_.size(); ++t) {
    sep();
    os << R"({"ph":"M","pid":1,"tid":)" << t << R"(,"name":"thread_name","args":{"name":)" << quoted(tracks_[t])
       << "}}";
    sep();
    os << R"({"ph":"M","pid":1,"tid":)" << t << R"(,"name":"thread_sort_index","args":{"sort_index":)" << t << "}}";
  }
  for (const Span& s : spans_) {
    sep();
    os << R"({"ph":"X","pid":1,"tid":)" << s.track << ",\"name\":" << quoted(s.name) << ",\"cat\":" << quoted(s.category)
       << ",\"ts\":" << microseconds(s.start_ps) << ",\"dur\":" << microseconds(s.end_ps - s.start_ps) << "}";
  }
  os << "\n]}\n";
}

void Timeline::write_file(const std::string& path) const {
  AtomicFile out(path);
  write(out.stream());
  out.commit();
}

}  // namespace ispsim::core
