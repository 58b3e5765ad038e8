// expect_vcd_valid(path): checks that a VCD file is well formed and that
// gtkwave reads it back unchanged. Header-only; any test may use it.
//
// vcd2fst alone is a weak judge: it exits 0 and writes an FST even for a file
// of garbage. So the check (1) parses the file itself (declarations, known
// identifier codes, values no wider than their signal, non-decreasing time),
// (2) converts it with `vcd2fst` (exit 0, non-empty output) and back with
// `fst2vcd`, and (3) requires the round trip to hold the same signals (by full
// hierarchical name and width), the same value changes at the same times and
// the same end time. vcd2fst/fst2vcd come with gtkwave (tools/setup.sh installs
// it); if they are missing the check fails rather than passing silently.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace ispsim::testing {

// What a VCD file says, independent of identifier codes and formatting.
struct VcdContent {
  std::string timescale;                                          // whitespace removed, e.g. "1ps"
  std::map<std::string, unsigned> widths;                         // full signal name -> bits
  std::map<uint64_t, std::map<std::string, std::string>> values;  // time -> name -> value
  uint64_t end_time = 0;                                          // last "#t"
  std::vector<std::string> errors;
};

// Parses VCD text. Vector values are kept without leading zeros ("b0101" ->
// "101"), so a writer that pads and one that does not compare equal.
inline VcdContent parse_vcd(std::istream& in) {
  VcdContent out;
  std::vector<std::string> tokens;
  for (std::string t; in >> t;) tokens.push_back(t);
  std::map<std::string, std::string> code_to_name;
  std::vector<std::string> scope;
  size_t i = 0;
  auto error = [&out](const std::string& e) { out.errors.push_back(e); };
  auto skip_to_end = [&](const std::string& keyword) {
    std::string text;
    for (++i; i < tokens.size() && tokens[i] != "$end"; ++i) text += tokens[i];
    if (i >= tokens.size()) error(keyword + " without $end");
    ++i;
    return text;
  };
  bool definitions_done = false;
  while (i < tokens.size() && !definitions_done) {
    const std::string& t = tokens[i];
    if (t == "$scope") {
      if (i + 3 >= tokens.size() || tokens[i + 3] != "$end") {
        error("malformed $scope");
        return out;
      }
      scope.push_back(tokens[i + 2]);
      i += 4;
    } else if (t == "$upscope") {
      if (scope.empty()) error("$upscope without $scope");
      if (!scope.empty()) scope.pop_back();
      skip_to_end(t);
    } else if (t == "$var") {
      // $var <type> <width> <code> <reference> [<bit range>] $end
      size_t end = i + 1;
      while (end < tokens.size() && tokens[end] != "$end") ++end;
      if (end >= tokens.size() || end - i < 5) {
        error("malformed $var");
        return out;
      }
      std::string name;
      for (const std::string& s : scope) name += s + ".";
      name += tokens[i + 4];
      const unsigned width = static_cast<unsigned>(std::strtoul(tokens[i + 2].c_str(), nullptr, 10));
      if (width == 0) error("$var " + name + ": width 0");
      if (out.widths.count(name)) error("$var " + name + ": declared twice");
      out.widths[name] = width;
      code_to_name[tokens[i + 3]] = name;
      i = end + 1;
    } else if (t == "$timescale") {
      out.timescale = skip_to_end(t);
    } else if (t == "$enddefinitions") {
      skip_to_end(t);
      definitions_done = true;
    } else if (t.size() > 1 && t[0] == '$') {
      skip_to_end(t);  // $date, $version, $comment
    } else {
      error("unexpected token '" + t + "' in the declarations");
      return out;
    }
  }
  if (!definitions_done) error("no $enddefinitions");
  if (!scope.empty()) error("unclosed $scope");

  bool have_time = false;
  uint64_t time = 0;
  auto set_value = [&](const std::string& raw, const std::string& code) {
    const auto it = code_to_name.find(code);
    if (it == code_to_name.end()) {
      error("value change of undeclared code '" + code + "'");
      return;
    }
    if (!have_time) error("value change of " + it->second + " before the first #time");
    if (raw.empty() || raw.find_first_not_of("01xXzZ") != std::string::npos)
      error("value '" + raw + "' of " + it->second + " is not binary");
    if (raw.size() > out.widths[it->second]) error("value '" + raw + "' wider than " + it->second);
    const size_t first = raw.find_first_not_of('0');
    out.values[time][it->second] = first == std::string::npos ? "0" : raw.substr(first);
  };
  for (; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    if (t[0] == '#') {
      char* end = nullptr;
      const uint64_t next = std::strtoull(t.c_str() + 1, &end, 10);
      if (t.size() < 2 || *end != '\0') error("bad time '" + t + "'");
      if (have_time && next < time) error("time goes backwards at " + t);
      time = next;
      have_time = true;
      out.end_time = time;
    } else if (t == "$dumpvars" || t == "$dumpall" || t == "$dumpon" || t == "$dumpoff" || t == "$end") {
      continue;
    } else if (t[0] == 'b' || t[0] == 'B') {
      if (i + 1 >= tokens.size()) {
        error("vector value without code");
        break;
      }
      set_value(t.substr(1), tokens[++i]);
    } else if (t.size() >= 2 && std::string("01xXzZ").find(t[0]) != std::string::npos) {
      set_value(t.substr(0, 1), t.substr(1));
    } else {
      error("unexpected token '" + t + "'");
    }
  }
  return out;
}

inline VcdContent parse_vcd_file(const std::string& path) {
  std::ifstream in(path);
  VcdContent content;
  if (!in) {
    content.errors.push_back(path + ": cannot open");
    return content;
  }
  return parse_vcd(in);
}

// Runs `command` through the shell; returns its exit code, or -1 if it did not exit normally.
inline int run_command(const std::string& command) {
  const int status = std::system(command.c_str());
  if (status == -1 || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

inline void expect_vcd_valid(const std::string& vcd_path) {
  SCOPED_TRACE("VCD file " + vcd_path);
  const VcdContent original = parse_vcd_file(vcd_path);
  for (const std::string& e : original.errors) ADD_FAILURE() << vcd_path << ": " << e;
  if (!original.errors.empty()) return;

  const std::string fst_path = vcd_path + ".check.fst";
  const std::string back_path = vcd_path + ".check.vcd";
  std::remove(fst_path.c_str());
  std::remove(back_path.c_str());
  // Both tools print banners and warnings; keep them out of the test log.
  const int to_fst = run_command("vcd2fst '" + vcd_path + "' '" + fst_path + "' >/dev/null 2>&1");
  ASSERT_NE(to_fst, 127) << "vcd2fst not found (install gtkwave: bash tools/setup.sh)";
  ASSERT_EQ(to_fst, 0) << "vcd2fst rejected the file";
  struct stat fst {};
  ASSERT_EQ(::stat(fst_path.c_str(), &fst), 0) << "vcd2fst wrote no " << fst_path;
  ASSERT_GT(fst.st_size, 0) << "vcd2fst wrote an empty " << fst_path;
  const int to_vcd = run_command("fst2vcd '" + fst_path + "' > '" + back_path + "' 2>/dev/null");
  ASSERT_EQ(to_vcd, 0) << "fst2vcd could not read what vcd2fst wrote";

  const VcdContent round_trip = parse_vcd_file(back_path);
  std::remove(fst_path.c_str());
  std::remove(back_path.c_str());
  for (const std::string& e : round_trip.errors) ADD_FAILURE() << "after vcd2fst/fst2vcd: " << e;
  EXPECT_EQ(round_trip.timescale, original.timescale) << "timescale changed by vcd2fst";
  EXPECT_EQ(round_trip.widths, original.widths) << "signals changed by vcd2fst";
  EXPECT_EQ(round_trip.values, original.values) << "value changes changed by vcd2fst";
  EXPECT_EQ(round_trip.end_time, original.end_time) << "end time changed by vcd2fst";
}

}  // namespace ispsim::testing
