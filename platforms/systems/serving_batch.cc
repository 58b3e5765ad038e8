#include "platforms/systems/serving_batch.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ispsim::systems {

DecodeBatcher::DecodeBatcher(sc_core::sc_module_name name, host::Gpu& gpu, const trace::ModelShape& shape,
                             bool grows_kv_by_copy, StoragePort& ssd)
    : sc_module(name), gpu_(gpu), shape_(shape), grows_kv_by_copy_(grows_kv_by_copy), ssd_(ssd) {
  stats_.formula_integer("largest", "requests", "most requests in one decode step", [this] { return largest_batch_; });
  SC_METHOD(advance);
  sensitive << advance_event_;
  dont_initialize();
}

std::unique_ptr<DecodeBatcher::Ports> DecodeBatcher::ports(uint64_t id, StoragePort& storage) {
  return std::make_unique<Ports>(*this, id, storage);
}

void DecodeBatcher::admit(uint64_t id, Done start) {
  Request& r = requests_[id];
  r.start = std::move(start);
  waiting_.push_back(id);
  advance_event_.notify(sc_core::SC_ZERO_TIME);
}

void DecodeBatcher::first_token(uint64_t id) {
  requests_.at(id).stage = Stage::kJoining;
  prefilling_.reset();
  advance_event_.notify(sc_core::SC_ZERO_TIME);
}

void DecodeBatcher::finished(uint64_t id) {
  requests_.erase(id);
  members_.erase(std::remove(members_.begin(), members_.end(), id), members_.end());
  advance_event_.notify(sc_core::SC_ZERO_TIME);
}

bool DecodeBatcher::in_decode(uint64_t id) const {
  const Stage s = requests_.at(id).stage;
  return s == Stage::kJoining || s == Stage::kDecoding;
}

// A held op's start is not known yet; the runtime only records it.
sc_core::sc_time DecodeBatcher::compute(uint64_t id, const trace::Op& op, Done done) {
  if (!in_decode(id)) {
    const sc_core::sc_time start = gpu_.free_at();
    gpu_.execute(op, shape_, std::move(done));
    return start;
  }
  hold(id, {&op, {}, std::move(done)});
  return sc_core::sc_time_stamp();
}

void DecodeBatcher::attention(uint64_t id, StoragePort& storage, const SsdAttention& work, Done done) {
  if (!in_decode(id)) return storage.attention(work, std::move(done));
  hold(id, {nullptr, storage.placed(work), std::move(done)});
}

void DecodeBatcher::hold(uint64_t id, Held held) {
  Request& r = requests_.at(id);
  if (r.held) throw std::logic_error("batcher: request " + std::to_string(id) + " sent a second op within one step op");
  r.held = std::move(held);
  advance_event_.notify(sc_core::SC_ZERO_TIME);
}

void DecodeBatcher::advance() {
  if (op_in_flight_) return;
  if (step_open_) return run_step_op();
  if (prefilling_) return;  // decode waits for the prefill
  if (!waiting_.empty()) {
    const uint64_t id = waiting_.front();
    waiting_.pop_front();
    Request& r = requests_.at(id);
    r.stage = Stage::kPrefill;
    prefilling_ = id;
    Done start = std::move(r.start);
    start();
    return;
  }
  begin_step();
}

// At a step boundary: the requests that finished their prefill join.
void DecodeBatcher::begin_step() {
  for (auto& [id, r] : requests_)
    if (r.stage == Stage::kJoining) {
      r.stage = Stage::kDecoding;
      members_.push_back(id);
    }
  std::sort(members_.begin(), members_.end());
  if (members_.empty()) return;
  step_open_ = true;
  ++steps_;
  largest_batch_ = std::max<uint64_t>(largest_batch_, members_.size());
  run_step_op();
}

// Runs the step's next op once every member has sent it.
void DecodeBatcher::run_step_op() {
  std::vector<const trace::Op*> ops;
  std::vector<SsdAttention> works;
  for (uint64_t id : members_) {
    const std::optional<Held>& h = requests_.at(id).held;
    if (!h) return;
    if (h->op) ops.push_back(h->op);
    else works.push_back(h->work);
  }
  if (!ops.empty() && !works.empty())
    throw std::logic_error("batcher: members of a decode step sent a GPU op and an SSD attention at once");
  for (const trace::Op* op : ops)
    if (op->label() != ops.front()->label() || op->layer() != ops.front()->layer())
      throw std::logic_error("batcher: members of a decode step sent different ops (" + op->label() + " and " +
                             ops.front()->label() + ")");
  op_in_flight_ = true;
  ++ops_;
  const bool step_end = !ops.empty() && ops.front()->has_lm_head();
  Done done = [this, ids = members_, step_end] { step_op_done(ids, step_end); };
  if (!ops.empty())
    gpu_.execute(ops, shape_, std::move(done));
  else
    ssd_.attention_batch(works, std::move(done));
}

void DecodeBatcher::step_op_done(const std::vector<uint64_t>& ids, bool step_end) {
  op_in_flight_ = false;
  step_open_ = step_open_ && !step_end;
  std::vector<Done> dones;
  for (uint64_t id : ids) {
    Request& r = requests_.at(id);
    dones.push_back(std::move(r.held->done));
    r.held.reset();
  }
  // A member's runtime sends its next op (or finishes) from inside its done.
  for (Done& d : dones) d();
  advance_event_.notify(sc_core::SC_ZERO_TIME);
}

}  // namespace ispsim::systems
