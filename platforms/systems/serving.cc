#include "platforms/systems/serving.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ispsim::systems {
namespace {

uint64_t now_ps() { return sc_core::sc_time_stamp().value(); }
double ns(uint64_t ps) { return static_cast<double>(ps) / 1e3; }

// When an ingest or evict record happens, ps.
uint64_t store_event_ps(const workload::StreamRecord& r) {
  return (r.has_ingest() ? r.ingest().at_ns() : r.evict().at_ns()) * 1000;
}

uint64_t context_tokens(const workload::StreamRequest& r) {
  uint64_t c = 0;
  for (const workload::DocumentRef& d : r.documents()) c += d.tokens();
  return c;
}

}  // namespace

double ServedRequest::mean_tbt_ps() const {
  if (tokens < 2) return 0.0;
  return static_cast<double>(end_ps - first_token_ps) / static_cast<double>(tokens - 1);
}

void ServingStatistics::add(const ServedRequest& r) {
  if (requests == 0 || r.arrival_ps < first_arrival_ps) first_arrival_ps = r.arrival_ps;
  last_end_ps = std::max(last_end_ps, r.end_ps);
  ++requests;
  tokens += r.tokens;
  queueing.add(ns(r.queueing_ps()));
  ttft.add(ns(r.ttft_ps()));
  latency.add(ns(r.latency_ps()));
  energy.add(r.usage.energy_j);
  nand_read.add(static_cast<double>(r.usage.nand_read_bytes));
  nand_written.add(static_cast<double>(r.usage.nand_written_bytes));
  pcie_host_to_device.add(static_cast<double>(r.usage.pcie_host_to_device_bytes));
  pcie_device_to_host.add(static_cast<double>(r.usage.pcie_device_to_host_bytes));
}

double ServingStatistics::throughput_per_s() const {
  if (requests == 0 || last_end_ps <= first_arrival_ps) return 0.0;
  return static_cast<double>(requests) / (static_cast<double>(last_end_ps - first_arrival_ps) * 1e-12);
}

void ServingStatistics::declare(stats::Group& group) const {
  group.formula_integer("requests", "count", "requests completed", [this] { return requests; });
  group.formula_integer("tokens", "count", "output tokens of the completed requests", [this] { return tokens; });
  group.formula("throughput", "requests/s",
                "requests completed per second from the first arrival to the last completion",
                [this] { return throughput_per_s(); });
  const std::string accuracy = "within " + std::to_string(ttft.relative_accuracy() * 100).substr(0, 3) +
                               " % of the exact value (streaming quantile sketch)";
  const auto metric = [&](const char* name, const QuantileSketch& sketch, const char* unit, const char* what) {
    const std::string base = std::string(name) + ".";
    group.formula(base + "mean", unit, std::string("mean ") + what + " (exact)", [&sketch] { return sketch.mean(); });
    group.formula(base + "max", unit, std::string("largest ") + what + " (exact)", [&sketch] { return sketch.max(); });
    for (const auto& [key, q] : {std::pair<const char*, double>{"p50", 0.5}, {"p95", 0.95}, {"p99", 0.99}})
      group.formula(base + key, unit, std::string(key) + " of the " + what + ", " + accuracy,
                    [&sketch, q = q] { return sketch.quantile(q); });
  };
  metric("queueing", queueing, "ns", "queueing delay: arrival to the start of service");
  metric("ttft", ttft, "ns", "time to first token: arrival to the first output token");
  metric("tbt", tbt, "ns", "time between two output tokens of a request");
  metric("latency", latency, "ns", "end-to-end latency: arrival to the completion of the request's last op");
  metric("energy", energy, "J", "energy charged to a request, dynamic and static");
  metric("nand_read", nand_read, "bytes", "flash bytes read for a request (whole pages)");
  metric("nand_written", nand_written, "bytes", "flash bytes programmed for a request (whole pages)");
  metric("pcie_host_to_device", pcie_host_to_device, "bytes", "PCIe bytes host to device of a request");
  metric("pcie_device_to_host", pcie_device_to_host, "bytes", "PCIe bytes device to host of a request");
  group.formula("energy.total", "J", "energy charged to the requests, all of them (exact)",
                [this] { return energy.sum(); });
}

Server::Server(sc_core::sc_module_name name, workload::StreamReader& stream, RequestExecutor& executor,
               unsigned concurrency, Sink sink)
    : sc_module(name),
      stream_(stream),
      executor_(executor),
      concurrency_(concurrency),
      closed_loop_(stream.header().workload().has_closed_loop()),
      sink_(std::move(sink)) {
  if (concurrency_ == 0) throw std::invalid_argument("Server: concurrency 0");
  SC_METHOD(on_arrival);
  sensitive << arrival_event_;
  dont_initialize();
  SC_METHOD(on_dispatch);
  sensitive << dispatch_event_;
  dont_initialize();
  SC_METHOD(on_store);
  sensitive << store_event_;
  dont_initialize();
  const uint64_t users = closed_loop_ ? stream.header().workload().closed_loop().users() : 1;
  for (uint64_t u = 0; u < users; ++u) next_for(u, 0);
  schedule_arrival();
}

bool Server::read_request(workload::StreamRequest& request) {
  workload::StreamRecord record;
  while (stream_.next(record)) {
    if (record.has_request()) {
      request = std::move(*record.mutable_request());
      ++read_;
      return true;
    }
    if (!record.has_ingest() && !record.has_evict()) continue;
    ++store_events_;
    store_queue_.push_back(std::move(record));
    schedule_store();
  }
  return false;
}

void Server::schedule_store() {
  if (store_queue_.empty()) return;
  const uint64_t at = std::max(store_event_ps(store_queue_.front()), now_ps());
  store_event_.notify(sc_core::sc_time::from_value(at - now_ps()));
}

void Server::on_store() {
  while (!store_queue_.empty()) {
    if (store_event_ps(store_queue_.front()) > now_ps()) break;
    executor_.store(store_queue_.front());
    store_queue_.pop_front();
  }
  schedule_store();
}

void Server::next_for(uint64_t user, uint64_t at_ps) {
  Waiting w;
  if (!read_request(w.request)) return;
  w.user = user;
  const uint64_t arrival =
      closed_loop_ ? at_ps + w.request.think_ns() * 1000 : w.request.arrival_ns() * 1000;
  arriving_.emplace(arrival, std::move(w));
}

void Server::schedule_arrival() {
  if (arriving_.empty()) return;
  const uint64_t at = std::max(arriving_.begin()->first, now_ps());
  arrival_event_.notify(sc_core::sc_time::from_value(at - now_ps()));
}

void Server::on_arrival() {
  while (!arriving_.empty() && arriving_.begin()->first <= now_ps()) {
    auto node = arriving_.extract(arriving_.begin());
    queue_.emplace_back(node.key(), std::move(node.mapped()));
    if (!closed_loop_) next_for(0, 0);  // the stream's next arrival
  }
  schedule_arrival();
  dispatch_event_.notify(sc_core::SC_ZERO_TIME);
}

void Server::on_dispatch() {
  while (in_service_.size() < concurrency_ && !queue_.empty()) {
    auto [arrival, waiting] = std::move(queue_.front());
    queue_.pop_front();
    const uint64_t slot = next_slot_++;
    InService& s = in_service_[slot];
    s.user = waiting.user;
    s.served.index = waiting.request.index();
    s.served.arrival_ps = arrival;
    s.served.start_ps = now_ps();
    s.served.context_tokens = context_tokens(waiting.request);
    s.served.query_tokens = waiting.request.query_tokens();
    s.served.answer_tokens = waiting.request.answer_tokens();
    executor_.execute(waiting.request, {[this, slot] { in_service_.at(slot).served.start_ps = now_ps(); },
                                        [this, slot] { token(slot); }, [this, slot] { finish(slot); },
                                        [this, slot](const RequestUsage& usage) { settle(slot, usage); }});
  }
  if (!queue_.empty()) executor_.upcoming(queue_.front().second.request);
}

void Server::token(uint64_t slot) {
  InService& s = in_service_.at(slot);
  const uint64_t now = now_ps();
  if (s.served.tokens++ == 0) {
    s.served.first_token_ps = now;
  } else {
    statistics_.tbt.add(ns(now - s.last_token_ps));
    s.served.max_token_gap_ps = std::max(s.served.max_token_gap_ps, now - s.last_token_ps);
  }
  s.last_token_ps = now;
}

void Server::finish(uint64_t slot) {
  auto node = in_service_.extract(slot);
  ServedRequest& served = node.mapped().served;
  served.end_ps = now_ps();
  if (served.tokens == 0) served.first_token_ps = served.end_ps;  // prefill-only requests
  settling_.emplace(slot, served);
  if (closed_loop_) {
    next_for(node.mapped().user, served.end_ps);
    schedule_arrival();
  }
  dispatch_event_.notify(sc_core::SC_ZERO_TIME);
}

void Server::settle(uint64_t slot, const RequestUsage& usage) {
  auto node = settling_.extract(slot);
  if (node.empty()) throw std::logic_error("server: request in slot " + std::to_string(slot) + " settled before done");
  node.mapped().usage = usage;
  statistics_.add(node.mapped());
  if (sink_) sink_(node.mapped());
}

}  // namespace ispsim::systems
