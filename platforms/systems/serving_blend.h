// A request stream served by a MemLLM-study platform (`ispsim workload serve`):
// one host runtime per request over the platform's devices, which persist for
// the whole stream (the GPU's queue, the PCIe link, the SSD with its
// background writes). Each request runs the platform's program of its
// single-request trace (traces/workload/request_trace.h). The host serves up
// to host.batch_limit requests at a time (FCFS): one by default; above one,
// their decode steps run batched (serving_batch.h). Host DRAM staging persists
// across requests, by document (serving_staging.h): a document's KV is where
// earlier requests left it, under the platform's staging policy and budget.
// The drive keeps its FTL state across requests: each request appends and
// writes back its KV into its own slot of the SSD's appended region
// (ssd::KvSpace::appended_slots: one per request that can be in service, and
// one for a request whose writes still drain), through its own SSD port, also
// inside a batched attention command; when its writes have drained, the
// slot's pages are TRIMmed and a later request reuses its logical pages. A
// request that finds every slot held waits for one. Documents ingested while
// the stream runs are written to a store on the SSD and evicted by TRIM
// (serving_store.h).
//
// What a request is charged (ServedRequest::usage): everything the devices do
// (the store's writes included) from the start of its service until its
// background writes have drained or, its last op done, the next request
// starts, whichever is first: dynamic energy as the devices record it, static
// energy of that time, whole NAND pages read and programmed, PCIe bytes per
// direction. Writes still draining when the next request starts are charged
// to that one; while several requests are charged (a batching host), what the
// devices do is split equally among them (bytes in whole bytes, the remainder
// to the earliest); static energy while no request is charged (an idle host)
// is charged to none. A stream of one request is charged exactly what
// `ispsim run` reports for its trace.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "platforms/systems/result_schema.h"
#include "platforms/systems/serving.h"
#include "schema/platform_loader.h"

namespace ispsim::systems {

struct ServeOptions {
  std::string requests_csv;  // per-request CSV, written atomically; "" for none
  std::string stats_path;    // statistics (.json or .csv); "" for none
  std::optional<StatsProvenance> stats_provenance;  // for the statistics file (RunOptions::stats_provenance)
  std::string drive_state_in;  // the SSD starts from this saved drive state; empty = a fresh drive
  bool precondition = false;   // the SSD's drive is preconditioned first (ftl.precondition_*)
  // Called with the statistics before the output files are committed.
  std::function<void(const ServingStatistics&)> before_commit;
};

// BadInput unless the platform serves request streams (a MemLLM-study program)
// with its host.batch_limit: batching needs decode GEMVs on the GPU, and on
// platforms with SSD attention placement.ssd_prefetch_layers = 0.
void check_serves_streams(const schema::LoadedPlatform& platform);

// Serves the stream at `stream_path` on the platform (call once per process).
// A platform that cannot hold a request of it (as `run` refuses it: out of
// memory) serves nothing and writes no file: the statistics say why.
// Throws BadInput for a platform whose program is not a MemLLM-study one, a
// stream or a request it cannot run.
ServingStatistics serve_blend_stream(const schema::LoadedPlatform& platform, const std::string& stream_path,
                                     const ServeOptions& options);

// The per-request CSV's header line and one row (times in ns, energy in J in
// its shortest exact form, bytes).
std::string served_csv_header();
std::string served_csv_row(const ServedRequest& r);

}  // namespace ispsim::systems
