// Small helpers shared by the benchmarks' command lines.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace ispsim::bench {

// "a,b,c" -> {"a", "b", "c"}.
inline std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

}  // namespace ispsim::bench
