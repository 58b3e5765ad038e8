#include "models/core/names.h"

namespace ispsim::names {

bool HierarchicalLess::operator()(const std::string& a, const std::string& b) const {
  const size_t n = a.size() < b.size() ? a.size() : b.size();
  for (size_t i = 0; i < n; ++i) {
    if (a[i] == b[i]) continue;
    // The separator sorts before every other character.
    if (a[i] == '.') return true;
    if (b[i] == '.') return false;
    return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[i]);
  }
  return a.size() < b.size();
}

std::vector<std::string> split(const std::string& name) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t dot = name.find('.', start);
    parts.push_back(name.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return parts;
}

std::string check(const std::string& name) {
  if (name.empty()) return "empty name";
  for (const std::string& part : split(name)) {
    if (part.empty()) return "empty component in name '" + name + "'";
  }
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f) return "name '" + name + "' contains a space or non-printable character";
  }
  return {};
}

}  // namespace ispsim::names
