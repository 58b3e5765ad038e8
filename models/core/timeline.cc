#include "models/core/timeline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <tuple>

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

// Six decimals, C locale; a value that rounds to zero prints as 0.000000, never -0.000000.
std::string decimal(double value) {
  if (std::fabs(value) < 5e-7) value = 0;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6f", value);
  return buf;
}

std::string quoted(const std::string& s) { return boost::json::serialize(boost::json::value(s)); }

std::string span_args(const SpanArgs& a) {
  std::string out;
  for (auto [key, value] : {std::pair{"op", a.op}, {"layer", a.layer}, {"bytes", a.bytes}})
    if (value >= 0) out += std::string(out.empty() ? "" : ",") + "\"" + key + "\":" + std::to_string(value);
  return out.empty() ? "" : ",\"args\":{" + out + "}";
}

}  // namespace

uint32_t Timeline::pid_of(const std::string& name) {
  uint32_t h = 2166136261u;  // FNV-1a: stable across runs and machines
  for (unsigned char c : name) h = (h ^ c) * 16777619u;
  return 1 + h % 2147483646u;  // a positive int32, as trace viewers expect
}

void Timeline::set_process(const std::string& name) {
  process_ = name;
  pid_ = pid_of(name);
}

void Timeline::span(const std::string& track, const std::string& name, const std::string& category,
                    uint64_t start_ps, uint64_t end_ps, SpanArgs args) {
  if (end_ps < start_ps) throw std::logic_error("timeline: span '" + name + "' on " + track + " ends before it starts");
  auto [it, inserted] = track_ids_.emplace(track, static_cast<uint32_t>(tracks_.size()));
  if (inserted) tracks_.push_back(track);
  spans_.push_back({it->second, name, category, start_ps, end_ps, args});
}

void Timeline::counter(const std::string& name, uint64_t at_ps, double value) {
  auto it = std::find(counters_.begin(), counters_.end(), name);
  if (it == counters_.end()) it = counters_.insert(counters_.end(), name);
  samples_.push_back({static_cast<uint32_t>(it - counters_.begin()), at_ps, value});
}

void Timeline::derive_counters(const std::string& track) {
  if (std::find(derived_.begin(), derived_.end(), track) == derived_.end()) derived_.push_back(track);
}

void Timeline::write_counter(std::ostream& os, const char*& sep, const std::string& name, uint64_t at_ps,
                             double value) const {
  os << sep << R"({"ph":"C","pid":)" << pid_ << ",\"name\":" << quoted(name) << ",\"ts\":" << microseconds(at_ps)
     << R"(,"args":{"value":)" << decimal(value) << "}}";
  sep = ",\n";
}

void Timeline::write_spans(std::ostream& os, const char*& sep) const {
  for (const Span& s : spans_) {
    os << sep << R"({"ph":"X","pid":)" << pid_ << ",\"tid\":" << s.track << ",\"name\":" << quoted(s.name)
       << ",\"cat\":" << quoted(s.category) << ",\"ts\":" << microseconds(s.start_ps)
       << ",\"dur\":" << microseconds(s.end_ps - s.start_ps) << span_args(s.args) << "}";
    sep = ",\n";
  }
}

// Spans open at once and bytes per second over `track`, sampled where they change
// (a track at rest starts at zero, so its first sample is its first span).
// Instants (empty spans) move nothing over time and are left out.
void Timeline::write_derived(std::ostream& os, const char*& sep, uint32_t track) const {
  std::vector<std::tuple<uint64_t, int, long double>> steps;  // time, open spans, GB/s (bytes per ps x 1000)
  bool has_bytes = false;
  for (const Span& s : spans_) {
    if (s.track != track || s.end_ps == s.start_ps) continue;
    has_bytes |= s.args.bytes >= 0;
    const long double rate = s.args.bytes > 0 ? 1000.0L * s.args.bytes / (s.end_ps - s.start_ps) : 0;
    steps.emplace_back(s.start_ps, 1, rate);
    steps.emplace_back(s.end_ps, -1, -rate);
  }
  std::stable_sort(steps.begin(), steps.end(),
            [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
  int open = 0, open_shown = 0;
  long double rate = 0, rate_shown = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    open += std::get<1>(steps[i]);
    rate += std::get<2>(steps[i]);
    if (i + 1 < steps.size() && std::get<0>(steps[i + 1]) == std::get<0>(steps[i])) continue;
    if (open == 0) rate = 0;  // no rounding residue once the track is idle
    if (open != open_shown) write_counter(os, sep, tracks_[track] + " in flight", std::get<0>(steps[i]), open);
    if (has_bytes && rate != rate_shown)
      write_counter(os, sep, tracks_[track] + " (GB/s)", std::get<0>(steps[i]), static_cast<double>(rate));
    open_shown = open;
    rate_shown = rate;
  }
}

void Timeline::write(std::ostream& os) const {
  os << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  os << R"({"ph":"M","pid":)" << pid_ << R"(,"name":"process_name","args":{"name":)" << quoted(process_) << "}}";
  const char* sep = ",\n";
  for (size_t t = 0; t < tracks_.size(); ++t) {
    os << sep << R"({"ph":"M","pid":)" << pid_ << ",\"tid\":" << t << R"(,"name":"thread_name","args":{"name":)"
       << quoted(tracks_[t]) << "}}";
    os << sep << R"({"ph":"M","pid":)" << pid_ << ",\"tid\":" << t
       << R"(,"name":"thread_sort_index","args":{"sort_index":)" << t << "}}";
  }
  write_spans(os, sep);
  for (const Sample& s : samples_) write_counter(os, sep, counters_[s.counter], s.at_ps, s.value);
  for (const std::string& track : derived_) {
    const auto it = track_ids_.find(track);
    if (it != track_ids_.end()) write_derived(os, sep, it->second);
  }
  os << "\n]}\n";
}

void Timeline::write_file(const std::string& path) const {
  AtomicFile out(path);
  write(out.stream());
  out.commit();
}

}  // namespace ispsim::core
