// Reads an arrival list (workload.proto, ArrivalList) one line at a time: one
// arrival time per line in seconds since the start, non-decreasing; blank
// lines and lines starting with '#' are skipped. A bad line is a BadInput
// "file:line: problem".
#pragma once

#include <cstdint>
#include <fstream>
#include <string>

namespace ispsim::workload {

class ArrivalListReader {
 public:
  explicit ArrivalListReader(std::string path);
  // The next arrival time in seconds; false at the end of the file.
  bool next(double& seconds);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::ifstream in_;
  uint64_t line_number_ = 0;
  double previous_ = 0;
};

}  // namespace ispsim::workload
