// The GTKWave view written beside every waveform, so that `gtkwave X.gtkw`
// opens a ready-made view instead of an empty signal list:
//   - "X.gtkw", a GTKWave save file: one group per module (host, PCIe,
//     controller, coordinator, then each flash channel with its bus, dies,
//     scratchpad and SIMD), every signal under its full name (with '/' between
//     levels: GTKWave shortens '.'-separated names to their last level), the
//     time window zoomed to the run and named markers (A..Z);
//   - "X.<encoding>.filter", one GTKWave translate filter file per Encoding in
//     use, so that enum-valued signals read by name ("sense", "cascaded").
// Files refer to each other by name relative to the save file's folder, so the
// set can be moved together.
//
// Save file format (GTKWave 3.3, read by savefile.c's parsewavline; written
// here from its documented structure, no code taken): "[*]" comment lines;
// "[dumpfile] "..."" and "[savefile] "..."" from which GTKWave resolves
// relative names; "[timestart] t", "[size] w h", "[signals_width] px",
// "[sst_expanded] 0"; "*zoom marker A B ... Z" where zoom is the base-2
// logarithm of pixels per 200 time units (-log2(span * 200 / width) fits span
// into width pixels) and -1 leaves a marker unset; "[markername] A<text>";
// per trace a "@<hex flags>" line (when the flags change), for a translated one
// "^<n> <filter file>", then "+{alias} <facility>" (a vector declared without
// a bit range is the facility "name[w-1:0]"); a group is a blank trace "-title"
// with the group-begin flag before its members and another with group-end after
// (a closed group: both also flagged closed, and its end collapsed).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "models/core/vcd.h"

namespace ispsim::vcd {

struct ViewSignal {
  std::string name;  // full hierarchical name
  unsigned width;
  Role role;
  int channel;           // -1 = none
  std::string encoding;  // Encoding::name, empty = shown as a number
};

struct View {
  std::string dump_path;  // the .vcd or .fst the view shows
  uint64_t begin_ps = 0;  // the run's window
  uint64_t end_ps = 0;
  std::vector<ViewSignal> signals;  // any order
  std::vector<Marker> markers;      // any order; those outside the window are dropped
};

// GTKWave shows at most 26 named markers (A..Z).
constexpr size_t kMaxMarkers = 26;

// "out/x.vcd" -> "out/x.gtkw" (also for .fst).
std::string view_path(const std::string& dump_path);
// "out/x.vcd", "die_state" -> "out/x.die_state.filter".
std::string filter_path(const std::string& dump_path, const std::string& encoding);

// Writes the save file (see above); filters are named by filter_path().
void write_view(std::ostream& out, const View& view);
// Writes a translate filter: "<decimal value> <name>" per value.
void write_filter(std::ostream& out, const Encoding& encoding);

// The group a signal is shown in: "host", "PCIe", "controller", "coordinator",
// "channel <c>", "flash" (flash signals without a channel) or "other".
std::string group_of(const ViewSignal& signal);
// The name GTKWave shows for it: "system.ssd.ch0.busy" -> "system/ssd/ch0/busy".
std::string display_name(const std::string& name);
// GTKWave's name for the signal's data: "a.b.state[2:0]" for a vector.
std::string facility_name(const ViewSignal& signal);

}  // namespace ispsim::vcd
