// The statistics file of `ispsim run` (--stats), shared by every system.
#pragma once

#include <string>

#include "common/output_files.h"

namespace ispsim::systems {

// Opens the statistics file `path` among `outputs` (nullptr if `path` is empty);
// a name that ends in neither .json nor .csv is BadInput.
AtomicFile* open_stats_file(OutputFiles& outputs, const std::string& path);
// Writes every registered statistic to `file`: JSON if its name ends in .json
// (after the members `provenance`, when given), else CSV.
void write_stats(AtomicFile& file, const std::string& provenance);

struct RunSummary;  // report.h
// Copies into summary.stats the registry statistics the metric list reads
// (metrics.h), converted to SI units; the modules must still be alive.
void capture_stats(RunSummary& summary);

}  // namespace ispsim::systems
