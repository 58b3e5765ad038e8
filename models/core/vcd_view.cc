#include "models/core/vcd_view.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

#include "models/core/names.h"

namespace ispsim::vcd {

namespace {

// GTKWave trace flags (analyzer.h's TR_* bits, the save file's "@" lines).
constexpr uint64_t kDecimal = 1u << 2;
constexpr uint64_t kBinary = 1u << 3;
constexpr uint64_t kBlank = 1u << 9;
constexpr uint64_t kCollapsed = 1u << 12;
constexpr uint64_t kFileTranslated = 1u << 13;
constexpr uint64_t kClosed = 1u << 22;
constexpr uint64_t kGroupBegin = 1u << 23;
constexpr uint64_t kGroupEnd = 1u << 24;

// Window geometry the save file asks for and the zoom is fitted to. The wave
// area is what remains of the width after the signal list, the collapsed
// signal search tree and the frames (64 px measured on GTKWave 3.3.118/GTK3).
constexpr int kWindowWidthPx = 1280;
constexpr int kWindowHeightPx = 760;
constexpr int kFramesPx = 64;
// With more rows than fit the window (about 28 at 760 px), channel groups from
// the third on start closed: one click on a group opens it.
constexpr size_t kRowsThatFit = 28;
constexpr int kOpenChannelGroups = 2;

std::string strip_suffix(const std::string& path) {
  const size_t dot = path.rfind('.');
  const size_t slash = path.rfind('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return path;
  return path.substr(0, dot);
}

std::string base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Where a signal's group goes: the modules in the order of a request's path,
// then the channels, then anything else.
std::tuple<int, std::string> group_key(const ViewSignal& s) {
  if (s.channel >= 0) return {10 + s.channel, "channel " + std::to_string(s.channel)};
  switch (s.role) {
    case Role::kHost: return {0, "host"};
    case Role::kPcie: return {1, "PCIe"};
    case Role::kController:
    case Role::kSimd:        // a centralized accelerator sits in the controller
    case Role::kScratchpad:
      return {2, "controller"};
    case Role::kCoordinator: return {3, "coordinator"};
    case Role::kChannel:
    case Role::kDie:
      return {1 << 20, "flash"};
    case Role::kOther: break;
  }
  return {(1 << 20) + 1, "other"};
}

std::string marker_letter(size_t index) { return std::string(1, static_cast<char>('A' + index)); }

// One line of text: GTKWave reads a marker name to the end of its line.
std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  std::replace(text.begin(), text.end(), '\r', ' ');
  return text;
}

// Signal list width: the longest shown name plus room for "=value".
int signals_width_px(const std::vector<ViewSignal>& signals) {
  size_t longest = 12;
  for (const ViewSignal& s : signals) longest = std::max(longest, s.name.size());
  return static_cast<int>(std::clamp<size_t>(8 * longest + 90, 200, 520));
}

// GTKWave's zoom for `span_ps` to fill `width_px`, 3 % narrower so the end
// of the run stays on screen.
double fit_zoom(uint64_t span_ps, int width_px) {
  if (span_ps == 0) return 0.0;
  const double usable = 0.97 * (width_px - 4);
  return std::min(0.0, -std::log2(static_cast<double>(span_ps) * 200.0 / usable));
}

void write_flags(std::ostream& out, uint64_t flags, uint64_t& current) {
  if (flags == current) return;
  char text[24];
  std::snprintf(text, sizeof text, "@%llx\n", static_cast<unsigned long long>(flags));
  out << text;
  current = flags;
}

}  // namespace

std::string view_path(const std::string& dump_path) { return strip_suffix(dump_path) + ".gtkw"; }

std::string filter_path(const std::string& dump_path, const std::string& encoding) {
  return strip_suffix(dump_path) + "." + encoding + ".filter";
}

std::string group_of(const ViewSignal& signal) { return std::get<1>(group_key(signal)); }

std::string display_name(const std::string& name) {
  std::string shown = name;
  std::replace(shown.begin(), shown.end(), '.', '/');
  return shown;
}

std::string facility_name(const ViewSignal& signal) {
  if (signal.width == 1) return signal.name;
  return signal.name + "[" + std::to_string(signal.width - 1) + ":0]";
}

void write_filter(std::ostream& out, const Encoding& encoding) {
  out << "# ispsim " << encoding.name << ": GTKWave translate filter (decimal value, name)\n";
  for (const auto& [value, name] : encoding.values) out << value << ' ' << name << '\n';
}

void write_view(std::ostream& out, const View& view) {
  // Groups in display order, members by role then name.
  std::map<std::tuple<int, std::string>, std::vector<const ViewSignal*>> groups;
  for (const ViewSignal& s : view.signals) groups[group_key(s)].push_back(&s);
  for (auto& [key, members] : groups) {
    std::sort(members.begin(), members.end(), [](const ViewSignal* a, const ViewSignal* b) {
      if (a->role != b->role) return a->role < b->role;
      return names::HierarchicalLess()(a->name, b->name);
    });
  }
  const bool crowded = view.signals.size() + 2 * groups.size() > kRowsThatFit;

  std::vector<Marker> markers;
  for (const Marker& m : view.markers)
    if (m.time_ps >= view.begin_ps && m.time_ps <= view.end_ps) markers.push_back(m);
  std::stable_sort(markers.begin(), markers.end(),
                   [](const Marker& a, const Marker& b) { return a.time_ps < b.time_ps; });
  const size_t dropped = markers.size() > kMaxMarkers ? markers.size() - kMaxMarkers : 0;
  markers.resize(std::min(markers.size(), kMaxMarkers));

  const int signals_px = signals_width_px(view.signals);
  const int wave_px = kWindowWidthPx - signals_px - kFramesPx;
  char zoom[32];
  std::snprintf(zoom, sizeof zoom, "%.6f", fit_zoom(view.end_ps - view.begin_ps, wave_px));

  out << "[*] ispsim waveform view: gtkwave " << base_name(view_path(view.dump_path)) << "\n"
      << "[*] " << view.signals.size() << " signals in " << groups.size() << " groups; times in ps\n";
  if (dropped > 0)
    out << "[*] " << dropped << " later markers left out (GTKWave has " << kMaxMarkers << ")\n";
  out << "[dumpfile] \"" << base_name(view.dump_path) << "\"\n"
      << "[savefile] \"" << base_name(view_path(view.dump_path)) << "\"\n"
      << "[timestart] " << view.begin_ps << "\n"
      << "[size] " << kWindowWidthPx << ' ' << kWindowHeightPx << "\n"
      << "[pos] -1 -1\n"
      << '*' << zoom << " -1";
  for (size_t i = 0; i < kMaxMarkers; ++i) {
    out << ' ';
    if (i < markers.size()) out << markers[i].time_ps; else out << -1;
  }
  out << "\n";
  for (size_t i = 0; i < markers.size(); ++i)
    out << "[markername] " << marker_letter(i) << one_line(markers[i].name) << "\n";
  out << "[sst_expanded] 0\n"
      << "[signals_width] " << signals_px << "\n";

  std::map<std::string, int> filter_slot;  // encoding -> GTKWave's filter number (1, 2, ...)
  uint64_t flags = ~uint64_t{0};
  for (const auto& [key, members] : groups) {
    const auto& [rank, title] = key;
    const bool closed = crowded && rank >= 10 + kOpenChannelGroups && title.rfind("channel ", 0) == 0;
    write_flags(out, kGroupBegin | kBlank | (closed ? kClosed : 0), flags);
    out << '-' << title << "\n";
    for (const ViewSignal* s : members) {
      if (s->encoding.empty()) {
        write_flags(out, s->width == 1 ? kBinary : kDecimal, flags);
      } else {
        write_flags(out, kDecimal | kFileTranslated, flags);
        const auto slot = filter_slot.emplace(s->encoding, static_cast<int>(filter_slot.size()) + 1).first;
        out << '^' << slot->second << ' ' << base_name(filter_path(view.dump_path, s->encoding)) << "\n";
      }
      out << "+{" << display_name(s->name) << "} " << facility_name(*s) << "\n";
    }
    write_flags(out, kGroupEnd | kBlank | (closed ? kClosed | kCollapsed : 0), flags);
    out << '-' << title << "\n";
  }
}

}  // namespace ispsim::vcd
