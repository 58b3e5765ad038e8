// The statistics file of `ispsim run` (--stats), shared by every system.
//
// Machine output in SI units (s, J, W, bytes, bytes/s; counts as integers):
// first the run's metrics under the metric list's names (metrics.h), then every
// registered statistic under its hierarchical name, converted to SI (those a
// metric reads too, so that a script may read either name).
//   JSON: {"schema_version", "provenance", "configuration", "metrics": {name: value},
//          <statistics nested by name: {"value", "unit", "desc"}>}
//   CSV:  name,value,unit,description[,schema_version,ispsim_version,trace_sha1,
//          trace_seed,configuration_sha1], one row per metric, then per statistic.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "common/output_files.h"
#include "platforms/systems/result_schema.h"

namespace ispsim::systems {

struct RunSummary;  // report.h

// Opens the statistics file `path` among `outputs` (nullptr if `path` is empty);
// a name that ends in neither .json nor .csv is BadInput.
AtomicFile* open_stats_file(OutputFiles& outputs, const std::string& path);
// Writes the metrics and every registered statistic to `file`: JSON if its name
// ends in .json, else CSV; with the provenance when given. The metrics are the
// summary's (metric_values), or without one those the registry holds.
void write_stats(AtomicFile& file, const std::optional<StatsProvenance>& provenance,
                 const RunSummary* summary = nullptr);

// The registry statistics the metric list and the tables read (metrics.h:
// metric_list, table_statistics), by statistic name, in SI units;
// std::logic_error for one whose unit is not its metric's.
std::map<std::string, double> metric_statistics();
// Copies the statistics metric_statistics() names into summary.stats, each in
// its declared unit (Statistic); the modules must still be alive.
void capture_stats(RunSummary& summary);

}  // namespace ispsim::systems
