// Hierarchical '.'-separated names ("top.nand.ch0.die1.state") shared by the
// statistics and the waveform writer, so both list things in the same order.
#pragma once

#include <string>
#include <vector>

namespace ispsim::names {

// Orders names component by component: "a.b" < "a.c" < "a-x", i.e. every name
// under "a." sorts directly after "a" and before any sibling of "a". A plain
// string compare would put "a-x" between "a" and "a.b" because '-' < '.'.
struct HierarchicalLess {
  bool operator()(const std::string& a, const std::string& b) const;
};

// Splits at '.'; "a.b.c" -> {"a", "b", "c"}.
std::vector<std::string> split(const std::string& name);

// Empty if `name` is well formed (non-empty components of printable ASCII other
// than space), otherwise what is wrong with it.
std::string check(const std::string& name);

}  // namespace ispsim::names
