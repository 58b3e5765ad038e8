// Workload files (workload.proto): read, checked and completed with defaults.
// Every problem is one BadInput naming the file and the field.
#pragma once

#include <cstdint>
#include <string>

#include "traces/workload/workload.pb.h"

namespace ispsim::workload {

// Defaults of the optional fields (workload.proto gives their meaning).
constexpr uint64_t kDefaultSeed = 1;
// YCSB's zipfian request distribution constant (Cooper et al., "Benchmarking
// Cloud Serving Systems with YCSB", SoCC 2010, Sec. 4.1).
constexpr double kDefaultZipfS = 0.99;
// Limits that keep the generator's memory bounded (it holds the live store's
// document lengths and the Zipf prefix sums: 16 bytes per document).
constexpr uint64_t kMaxStoreDocuments = uint64_t{1} << 22;
constexpr uint64_t kMaxRequests = uint64_t{1} << 40;

// Reads `path` (protobuf text format) and returns the workload with every
// default filled in.
Workload load_workload(const std::string& path);

// Checks a parsed workload and fills in the defaults; `where` names it in errors.
Workload resolve_workload(Workload workload, const std::string& where);

// The workload's arrival list file, resolved against the folder of the
// workload file `workload_path` when relative.
std::string arrival_list_path(const Workload& workload, const std::string& workload_path);

}  // namespace ispsim::workload
