// SHA-1 as 40 lower-case hex digits (what `sha1sum` prints), to record which
// trace and configuration a result was made from. SHA-1 identifies a file
// against accidental change well enough here (nobody is forging traces) and
// comes with Boost, which the project already uses.
#pragma once

#include <string>

namespace ispsim {

std::string text_sha1(const std::string& text);
// BadInput(path, ...) when the file cannot be read.
std::string file_sha1(const std::string& path);

}  // namespace ispsim
