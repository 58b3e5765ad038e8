#include "platforms/systems/stats_output.h"

#include "common/error.h"
#include "models/core/stats.h"

namespace ispsim::systems {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

AtomicFile* open_stats_file(OutputFiles& outputs, const std::string& path) {
  if (!path.empty() && !ends_with(path, ".json") && !ends_with(path, ".csv"))
    throw BadInput(path, "statistics file must end in .json or .csv");
  return outputs.open(path);
}

void write_stats(AtomicFile& file) {
  if (ends_with(file.path(), ".json"))
    stats::Registry::global().write_json(file.stream());
  else
    stats::Registry::global().write_csv(file.stream());
}

}  // namespace ispsim::systems
