// The statistics file of `ispsim run` (--stats), shared by every system.
#pragma once

#include <string>

#include "common/output_files.h"

namespace ispsim::systems {

// Opens the statistics file `path` among `outputs` (nullptr if `path` is empty);
// a name that ends in neither .json nor .csv is BadInput.
AtomicFile* open_stats_file(OutputFiles& outputs, const std::string& path);
// Writes every registered statistic to `file`: JSON if its name ends in .json, else CSV.
void write_stats(AtomicFile& file);

}  // namespace ispsim::systems
