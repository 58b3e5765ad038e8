// The metrics of one run as named numbers: the row of a sweep's results. The
// names, units and order are the metric list's (platforms/systems/metrics.h;
// `ispsim describe metrics`).
#pragma once

#include <string>

#include "platforms/systems/metrics.h"

namespace ispsim::sweep {

using Metrics = systems::MetricValues;

// Every metric of a completed run (none for a run out of memory), in list order.
Metrics summary_metrics(const systems::RunSummary& summary);

// The metrics of a NAND stream run from its statistics CSV (name,value,unit,description).
Metrics nand_stream_metrics(const std::string& stats_csv, const std::string& where);

using systems::is_known_metric;
using systems::known_metrics_help;

}  // namespace ispsim::sweep
