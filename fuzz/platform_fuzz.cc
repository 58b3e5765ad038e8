// Platform textproto files with --set overrides: every line "#set path=value"
// (a comment to the textproto parser) is also passed as an override.
#include <sstream>
#include <vector>

#include "common/error.h"
#include "fuzz/fuzz_support.h"
#include "schema/platform_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> overrides;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("#set ", 0) == 0) overrides.push_back(line.substr(5));
  try {
    (void)ispsim::schema::load_platform_text(text, "fuzz.textproto", overrides);
  } catch (const ispsim::BadInput&) {
  }
  return 0;
}
