// Where ispsim's data files are: platform files, the demo model, the
// calibration text, sample traces and the plot scripts, laid out as in the
// source tree (platforms/, assets/, kernels/int/data/, traces/samples/,
// tools/plot/).
//
// An installed binary (<prefix>/bin/ispsim) finds them in <prefix>/share/ispsim,
// relative to its own location (/proc/self/exe), so an install tree can be
// moved; a binary of the build tree finds them in the source tree it was built
// from. Never the current directory.
#pragma once

#include <string>

namespace ispsim {

// The data root, without a trailing slash.
const std::string& data_dir();

// data_dir() + "/" + relative.
std::string data_path(const std::string& relative);

// The data root of an installed binary at `executable` (a path), if that
// install tree holds one ("" otherwise); data_dir() asks this of /proc/self/exe.
std::string installed_data_dir(const std::string& executable);

}  // namespace ispsim
