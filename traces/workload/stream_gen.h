// The request stream of a workload (workload.proto), drawn from its seed.
//
// Independent streams of the seed (SeededRandom::derive_seed) draw the corpus
// lengths (0), the documents of each request (1), the arrival intervals or
// think times (2), the ingestion intervals and lengths (3) and the query and
// answer lengths (4), so that e.g. fixing the query length does not move the
// documents a request retrieves. A length given in the workload replaces the
// drawn one. The generator holds the live store's lengths and the Zipf table,
// nothing per request.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "traces/workload/workload.pb.h"

namespace ispsim::workload {

using RecordSink = std::function<void(const StreamRecord&)>;

// The header of the stream of a resolved workload (its model's shape filled in).
StreamHeader stream_header(const Workload& workload);

// Every record of the stream in file order (without the end record).
// `arrivals_path` is the arrival list file of an arrival_list workload.
void generate_records(const Workload& workload, const std::string& arrivals_path, const RecordSink& sink);

// Writes the stream of a resolved workload to `out_path` (atomically); returns
// the number of requests.
uint64_t generate_stream(const Workload& workload, const std::string& arrivals_path, const std::string& out_path);
// The same for a workload file.
uint64_t generate_stream(const std::string& workload_path, const std::string& out_path);

}  // namespace ispsim::workload
