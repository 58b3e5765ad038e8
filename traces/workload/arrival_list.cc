#include "traces/workload/arrival_list.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "common/error.h"
#include "common/input_file.h"

namespace ispsim::workload {

ArrivalListReader::ArrivalListReader(std::string path) : path_(std::move(path)) {
  check_input_file(path_);
  in_.open(path_);
  if (!in_) throw BadInput(path_, "cannot open the arrival list");
}

bool ArrivalListReader::next(double& seconds) {
  std::string line;
  while (std::getline(in_, line)) {
    ++line_number_;
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    const size_t last = line.find_last_not_of(" \t\r");
    const std::string text = line.substr(first, last - first + 1);
    const std::string where = path_ + ":" + std::to_string(line_number_);
    char* end = nullptr;
    errno = 0;
    const double value = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size() || errno != 0 || !std::isfinite(value) || value < 0)
      throw BadInput(where, "'" + text + "' is not an arrival time (a non-negative number of seconds)");
    if (value < previous_)
      throw BadInput(where, "arrival " + text + " s is before the previous one (" + std::to_string(previous_) +
                                " s): the list must be in time order");
    previous_ = value;
    seconds = value;
    return true;
  }
  if (in_.bad()) throw BadInput(path_, "read failed");
  return false;
}

}  // namespace ispsim::workload
