// Serving a request stream (traces/workload): requests arrive at their times
// (open loop) or when their user has thought after the previous answer (closed
// loop), queue at the host in arrival order (FCFS) and are served by a
// RequestExecutor, at most `concurrency` at a time. Per request it measures
// the queueing delay, the time to first token (TTFT), the times between tokens
// (TBT) and the end-to-end latency, each from the arrival, and what the
// executor charges the request (energy, NAND and PCIe bytes); the statistics keep
// streaming quantiles (common/quantile_sketch.h), so memory does not grow with
// the number of requests.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <systemc>

#include "common/quantile_sketch.h"
#include "models/core/stats.h"
#include "traces/workload/stream_io.h"

namespace ispsim::systems {

// What the devices did for one request (serving_blend.h says how it is charged).
struct RequestUsage {
  double energy_j = 0;
  uint64_t nand_read_bytes = 0, nand_written_bytes = 0;
  uint64_t pcie_host_to_device_bytes = 0, pcie_device_to_host_bytes = 0;
};

// What serves one request on a platform.
class RequestExecutor {
 public:
  struct Callbacks {
    // Its service starts now (optional: by default when execute() is called; a
    // batching host starts a prefill at the next decode step boundary).
    std::function<void()> started;
    std::function<void()> token;  // an output token is ready (the first one ends the prefill)
    std::function<void()> done;   // the request's last op completed
    // After `done`, once: what the request used (its background work may end later).
    std::function<void(const RequestUsage&)> settled;
  };
  virtual ~RequestExecutor() = default;
  // Starts `request` at the current simulated time.
  virtual void execute(const workload::StreamRequest& request, Callbacks callbacks) = 0;
  // A store event of the stream (a document ingested or evicted) at its time,
  // now; an executor without a document store ignores it.
  virtual void store(const workload::StreamRecord& event) {}
  // The request execute() will most likely get next (the head of the server's
  // queue): work that depends on it alone may begin ahead. A hint only.
  virtual void upcoming(const workload::StreamRequest& request) {}
};

// One served request; times in picoseconds since the start.
struct ServedRequest {
  uint64_t index = 0;
  uint64_t arrival_ps = 0, start_ps = 0, first_token_ps = 0, end_ps = 0;
  uint64_t tokens = 0;              // output tokens
  uint64_t max_token_gap_ps = 0;    // longest time between two tokens
  uint64_t context_tokens = 0, query_tokens = 0, answer_tokens = 0;
  RequestUsage usage;
  uint64_t queueing_ps() const { return start_ps - arrival_ps; }
  uint64_t ttft_ps() const { return first_token_ps - arrival_ps; }
  uint64_t latency_ps() const { return end_ps - arrival_ps; }
  // Mean time between tokens: (last token - first token) / (tokens - 1); 0 with one token.
  double mean_tbt_ps() const;
};

// Streaming statistics of the served requests: times in ns, energy in J, bytes.
struct ServingStatistics {
  QuantileSketch queueing, ttft, tbt, latency;  // tbt: every gap between two tokens of a request
  QuantileSketch energy, nand_read, nand_written, pcie_host_to_device, pcie_device_to_host;  // per request
  uint64_t requests = 0, tokens = 0;
  uint64_t first_arrival_ps = 0, last_end_ps = 0;
  std::string out_of_memory;  // why the platform cannot hold the stream (nothing was served); "" otherwise
  void add(const ServedRequest& r);  // its token gaps went to `tbt` as they came
  // Completed requests per second of simulated time from the first arrival to the last completion.
  double throughput_per_s() const;
  // Registers everything under `group` (e.g. system.serving) as formulas.
  void declare(stats::Group& group) const;
};

class Server : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(Server);
  using Sink = std::function<void(const ServedRequest&)>;
  // Serves the requests of `stream` (read as they are needed); `sink` sees each
  // request when it completes.
  Server(sc_core::sc_module_name name, workload::StreamReader& stream, RequestExecutor& executor,
         unsigned concurrency, Sink sink);

  const ServingStatistics& statistics() const { return statistics_; }
  // Requests read from the stream but not settled (a deadlock if nonzero after the run).
  uint64_t unfinished() const { return read_ - statistics_.requests; }
  uint64_t store_events() const { return store_events_; }

 private:
  struct Waiting {
    workload::StreamRequest request;
    uint64_t user = 0;
  };
  struct InService {
    ServedRequest served;
    uint64_t last_token_ps = 0, user = 0;
  };
  // The next request of the stream; false at its end. Store events on the way
  // are queued for their times (they come before the request's arrival).
  bool read_request(workload::StreamRequest& request);
  void schedule_store();
  void on_store();  // hands the store events due to the executor
  // Reads the next request for `user` and lets it arrive at `at_ps`.
  void next_for(uint64_t user, uint64_t at_ps);
  void schedule_arrival();
  void on_arrival();
  void on_dispatch();
  void token(uint64_t slot);
  void finish(uint64_t slot);
  void settle(uint64_t slot, const RequestUsage& usage);

  workload::StreamReader& stream_;
  RequestExecutor& executor_;
  const unsigned concurrency_;
  const bool closed_loop_;
  Sink sink_;
  std::multimap<uint64_t, Waiting> arriving_;  // by arrival time: one per user (closed loop) or the next (open)
  std::deque<std::pair<uint64_t, Waiting>> queue_;  // (arrival, request) in FCFS order
  std::map<uint64_t, InService> in_service_;        // by slot
  std::map<uint64_t, ServedRequest> settling_;      // by slot: done, usage not known yet
  std::deque<workload::StreamRecord> store_queue_;  // store events read, not yet due, in time order
  uint64_t next_slot_ = 0, read_ = 0, store_events_ = 0;
  sc_core::sc_event arrival_event_, dispatch_event_, store_event_;
  ServingStatistics statistics_;
};

}  // namespace ispsim::systems
