#include "platforms/systems/runtime.h"

#include <algorithm>
#include <memory>
#include <stdexcept>

#include "traces/trace_validator.h"

namespace ispsim::systems {
namespace {

using Device = schema::PlacementParams::Device;

uint64_t now_ps() { return sc_core::sc_time_stamp().value(); }

uint64_t span_tokens(const trace::KvSpan& s) { return s.tokens().end() - s.tokens().begin(); }

}  // namespace

Runtime::Runtime(const trace::Header& header, std::vector<trace::Op> ops, const schema::PlacementParams& placement,
                 HostComputePort& host, StagingPort& staging, StoragePort& storage, uint64_t write_chunk_bytes)
    : Runtime(header, trace::intern_hkvd_masks(std::move(ops)), placement, host, staging, storage,
              write_chunk_bytes) {}

Runtime::Runtime(const trace::Header& header, trace::InternedOps ops, const schema::PlacementParams& placement,
                 HostComputePort& host, StagingPort& staging, StoragePort& storage, uint64_t write_chunk_bytes)
    : header_(header),
      ops_(std::move(ops.ops)),
      masks_(std::move(ops.masks)),
      placement_(placement),
      host_(host),
      staging_(staging),
      storage_(storage),
      write_chunk_bytes_(std::max<uint64_t>(write_chunk_bytes, 1)) {
  const trace::ModelShape& m = header_.model();
  kv_bytes_per_token_ = (uint64_t{m.kv_heads()} * m.head_dim() * 2 * m.kv_bits() + 7) / 8;
  for (const auto& d : header_.request().documents()) context_tokens_ += d.tokens();
  dependants_.resize(ops_.size());
  waiting_on_.assign(ops_.size(), 0);
  timing_.resize(ops_.size());
  completed_flag_.assign(ops_.size(), 0);
  for (size_t i = 0; i < ops_.size(); ++i) {
    for (uint64_t dep : ops_[i].deps()) {
      const size_t d = index_before(i, dep);
      // The trace reader guarantees this; a caller building ops by hand may not.
      if (d == i)
        throw std::logic_error("runtime: op " + std::to_string(ops_[i].id()) + " depends on unknown op " +
                               std::to_string(dep));
      dependants_[d].push_back(i);
      ++waiting_on_[i];
    }
    if (ops_[i].has_attention() && attention_device(ops_[i]) == schema::PlacementParams::HOST_GPU) {
      host_attention_rank_[i] = host_attention_order_.size();
      host_attention_order_.push_back(i);
    }
  }
  check_kv_reads();
  plan_ssd_prefetch();
}

void Runtime::check_kv_reads() const {
  std::map<uint32_t, uint64_t> appended;  // by layer
  for (size_t i = 0; i < ops_.size(); ++i) {
    const trace::Op& op = ops_[i];
    if (op.has_kv_append()) appended[op.layer()] += trace::moved_tokens(op.kv_append());
    if (!op.has_attention() || attention_device(op) != schema::PlacementParams::SSD_ISP) continue;
    const std::string problem =
        trace::attention_kv_problem(op.attention(), hkvd_mask(i), context_tokens_, appended[op.layer()]);
    if (!problem.empty()) throw std::logic_error("runtime: op " + std::to_string(op.id()) + ": " + problem);
  }
}

// The index of the op with id `id` among the first `end` ops, else `end`: ids
// increase in index order (trace validator), so a binary search finds it.
size_t Runtime::index_before(size_t end, uint64_t id) const {
  const auto it = std::lower_bound(ops_.begin(), ops_.begin() + std::ptrdiff_t(end), id,
                                   [](const trace::Op& op, uint64_t x) { return op.id() < x; });
  return it != ops_.begin() + std::ptrdiff_t(end) && it->id() == id ? size_t(it - ops_.begin()) : end;
}

// Whether op `later` needs op `earlier` (directly or through other ops); deps
// always point to earlier ops, so the search stays within [earlier, later].
bool Runtime::depends_on(size_t later, size_t earlier) const {
  std::vector<size_t> stack{later};
  std::vector<uint8_t> seen(later - earlier + 1, 0);
  while (!stack.empty()) {
    const size_t i = stack.back();
    stack.pop_back();
    for (uint64_t dep_id : ops_[i].deps()) {
      const size_t d = index_before(i, dep_id);
      if (d == earlier) return true;
      if (d < earlier || seen[d - earlier]) continue;
      seen[d - earlier] = 1;
      stack.push_back(d);
    }
  }
  return false;
}

// The SSD attention ops in id order, which of them are certain to be the next
// SSD command once their predecessor completes, and the appended KV each
// command will carry (the kv_append ops of its layer and phase since the
// previous command of that layer and phase).
void Runtime::plan_ssd_prefetch() {
  std::map<std::pair<uint32_t, int>, Pending> acc;
  for (size_t i = 0; i < ops_.size(); ++i) {
    const trace::Op& op = ops_[i];
    if (op.has_kv_append() && attention_device(op) == schema::PlacementParams::SSD_ISP) {
      const trace::KvTransfer& t = op.kv_append();
      Pending& p = acc[{op.layer(), op.phase()}];
      p.tokens += trace::moved_tokens(t);
      p.bytes += t.bytes();
    } else if (op.has_attention() && attention_device(op) == schema::PlacementParams::SSD_ISP) {
      ssd_attention_rank_[i] = ssd_attention_order_.size();
      ssd_attention_order_.push_back(i);
      auto it = acc.find({op.layer(), op.phase()});
      predicted_supplied_[i] = it == acc.end() ? Pending{} : it->second;
      if (it != acc.end()) acc.erase(it);
    }
  }
  const size_t n = ssd_attention_order_.size();
  prefetchable_.assign(n, 0);
  if (placement_.ssd_prefetch_layers() == 0) return;
  // Op r is certain to be the next SSD command once op r - 1 completes when it
  // needs op r - 1 and every later SSD attention op needs it (a chain from r on).
  bool chain_from_here = true;  // ops r, r + 1, ... form a chain
  for (size_t r = n; r-- > 1;) {
    if (r + 1 < n) chain_from_here = chain_from_here && depends_on(ssd_attention_order_[r + 1], ssd_attention_order_[r]);
    prefetchable_[r] = chain_from_here && depends_on(ssd_attention_order_[r], ssd_attention_order_[r - 1]);
  }
}

void Runtime::prefetch_after(size_t index) {
  const size_t next_rank = ssd_attention_rank_.at(index) + 1;
  if (next_rank >= ssd_attention_order_.size() || !prefetchable_[next_rank]) return;
  const size_t next = ssd_attention_order_[next_rank];
  // One prefetch at a time, of an op not yet under way, once every earlier SSD
  // attention op has completed: one merely issued may still be crossing PCIe,
  // and the SSD would take its command for the prefetched op's.
  if (!prefetched_.empty() || ssd_attention_issued_ != next_rank || ssd_attention_completed_ != next_rank) return;
  const SsdAttention work = ssd_work(next, predicted_supplied_.at(next));
  prefetched_[next] = work;
  ++ssd_prefetches_;
  storage_.prefetch_attention(work);
}

Device Runtime::attention_device(const trace::Op& op) const {
  switch (op.phase()) {
    case trace::PHASE_RECOMPUTATION:
    case trace::PHASE_QUERY_PREFILL:
    case trace::PHASE_FUSED_PREFILL:
      return placement_.prefill_attention();
    case trace::PHASE_DECODE:
      return placement_.decode_attention();
    default:
      return schema::PlacementParams::HOST_GPU;
  }
}

bool Runtime::appends_in_place(const trace::KvTransfer& t) const {
  return t.has_token_mask() && t.tokens().end() <= context_tokens_;
}

uint64_t Runtime::host_kv_bytes() const {
  std::map<uint32_t, uint64_t> tokens;  // by layer
  std::set<uint32_t> reads_precomputed;
  for (const trace::Op& op : ops_) {
    if (op.has_kv_load() && op.kv_load().region() == trace::KV_REGION_PRECOMPUTED) reads_precomputed.insert(op.layer());
    if (op.has_attention() && attention_device(op) == schema::PlacementParams::HOST_GPU)
      for (const trace::KvSpan& s : op.attention().kv())
        if (s.region() == trace::KV_REGION_PRECOMPUTED) reads_precomputed.insert(op.layer());
    if (op.has_kv_append() && attention_device(op) == schema::PlacementParams::HOST_GPU &&
        !appends_in_place(op.kv_append())) {
      const trace::KvTransfer& t = op.kv_append();
      tokens[op.layer()] += trace::moved_tokens(t);
    }
  }
  for (uint32_t layer : reads_precomputed) tokens[layer] += context_tokens_;
  uint64_t total = 0;
  for (const auto& [layer, n] : tokens) total += n;
  return total * kv_bytes_per_token_;
}

void Runtime::start() {
  staging_.plan(host_kv_bytes());
  for (size_t r = 0; r < host_attention_order_.size() && r < placement_.prefetch_layers(); ++r)
    start_fetch(host_attention_order_[r], false);
  for (size_t i = 0; i < ops_.size(); ++i)
    if (waiting_on_[i] == 0) ready_queue_.push_back(i);
  run_ready();
  if (ops_.empty()) flush_writes(true);
}

// Ops that complete at once (a staging hit, a staged append) complete inside
// issue(); the queue keeps that iterative instead of recursive.
void Runtime::run_ready() {
  if (running_ready_) return;
  running_ready_ = true;
  for (size_t next = 0; next < ready_queue_.size(); ++next) issue(ready_queue_[next]);
  ready_queue_.clear();
  running_ready_ = false;
}

void Runtime::issue(size_t index) {
  const trace::Op& op = ops_[index];
  timing_[index].issued_ps = now_ps();
  timing_[index].start_ps = now_ps();
  in_flight_.insert(index);
  in_flight_changed();
  if (op.has_attention()) {
    if (attention_device(op) == schema::PlacementParams::SSD_ISP)
      issue_ssd_attention(index);
    else
      issue_host_attention(index);
  } else if (op.has_kv_append()) {
    issue_kv_append(index);
  } else if (op.has_kv_load()) {
    issue_kv_load(index);
  } else if (in_flash_gemv(op)) {
    issue_in_flash_gemv(index);
  } else {
    compute_on_host(index);
  }
}

void Runtime::compute_on_host(size_t index) {
  timing_[index].on_gpu = true;
  timing_[index].start_ps = host_.compute(op_for_host(index), [this, index] { complete(index); }).value();
}

const trace::Op& Runtime::op_for_host(size_t index) {
  if (hkvd_mask(index) == nullptr) return ops_[index];
  return lent_to_host_[index] = masks_.with_mask(index, ops_[index]);
}

void Runtime::complete(size_t index) {
  if (completed_flag_[index])
    throw std::logic_error("runtime: op " + std::to_string(ops_[index].id()) + " completed twice");
  completed_flag_[index] = 1;
  lent_to_host_.erase(index);
  ++completed_;
  timing_[index].end_ps = now_ps();
  last_end_ps_ = std::max(last_end_ps_, now_ps());
  in_flight_.erase(index);
  in_flight_changed();
  if (completion_listener_) completion_listener_(index);
  for (size_t d : dependants_[index])
    if (--waiting_on_[d] == 0) ready_queue_.push_back(d);
  run_ready();
  if (completed_ == ops_.size()) flush_writes(true);
}

void Runtime::in_flight_changed() {
  std::optional<trace::Phase> phase;
  if (!in_flight_.empty()) phase = ops_[*in_flight_.begin()].phase();
  if (phase == phase_now_) return;
  phase_now_ = phase;
  if (phase_listener_) phase_listener_(phase, now_ps());
}

void Runtime::check_finished() const {
  for (size_t i = 0; i < ops_.size(); ++i)
    if (!completed_flag_[i])
      throw std::logic_error("runtime: op " + std::to_string(ops_[i].id()) + " never completed (" +
                             std::to_string(waiting_on_[i]) + " dependencies outstanding)");
  if (writes_in_flight_ > 0 || !write_buffer_.empty()) throw std::logic_error("runtime: background writes not drained");
}

// --- KV movement ------------------------------------------------------------

void Runtime::issue_kv_load(size_t index) {
  const trace::Op& op = ops_[index];
  const trace::KvTransfer& t = op.kv_load();
  const uint64_t resident = staging_.lookup(op.layer(), t.region(), t.bytes());
  if (resident >= t.bytes()) {
    staging_hit_bytes_ += t.bytes();
    complete(index);
    return;
  }
  staging_hit_bytes_ += resident;
  const uint64_t missing = t.bytes() - resident;
  const uint64_t tokens = std::min<uint64_t>(t.tokens().end() - t.tokens().begin(),
                                             (missing + kv_bytes_per_token_ - 1) / kv_bytes_per_token_);
  read_kv(op.layer(), t.region(), t.tokens().end() - tokens, t.tokens().end(), missing, t.bytes(),
          read_path(op.phase(), t.region()), [this, index] { complete(index); });
}

// One SSD read per (layer, region) at a time: a second request for a key whose
// read is under way waits for that read instead of reading the KV again.
void Runtime::read_kv(uint32_t layer, trace::KvRegion region, uint64_t token_begin, uint64_t token_end,
                      uint64_t bytes, uint64_t key_bytes, HostReadPath path, Done done) {
  const auto key = std::make_pair(layer, static_cast<int>(region));
  auto [it, first] = reads_in_flight_.try_emplace(key);
  it->second.push_back(std::move(done));
  if (!first) return;
  kv_read_bytes_ += bytes;
  ++foreground_in_flight_;
  auto read = [this, key, token_begin, token_end, bytes, key_bytes, path] {
    storage_.read_to_host(key.first, static_cast<trace::KvRegion>(key.second), token_begin, token_end, bytes, path,
                          [this, key, bytes, key_bytes] {
                            staging_.fetched(key.first, static_cast<trace::KvRegion>(key.second), bytes, key_bytes);
                            std::vector<Done> waiters = std::move(reads_in_flight_[key]);
                            reads_in_flight_.erase(key);
                            for (Done& d : waiters) d();
                            foreground_done();
                          });
  };
  // Appended entries are addressed in append order; reading them back needs
  // them written first.
  if (region == trace::KV_REGION_APPENDED)
    flush_layer_writes(layer, read);
  else
    read();
}

void Runtime::issue_kv_append(size_t index) {
  const trace::Op& op = ops_[index];
  const trace::KvTransfer& t = op.kv_append();
  const uint64_t tokens = trace::moved_tokens(t);
  appended_tokens_[op.layer()] += tokens;
  // The KV goes where the attention of the same phase runs: with an SSD
  // attention command (plan_ssd_prefetch), or staged in host memory.
  if (attention_device(op) != schema::PlacementParams::SSD_ISP) {
    const bool in_place = appends_in_place(t);
    if (in_place)
      staging_.overwrite(op.layer(), trace::KV_REGION_PRECOMPUTED, t.bytes());
    else
      staging_.append(op.layer(), trace::KV_REGION_APPENDED, t.bytes());
    // KV that lives in GPU/host memory for good is not offloaded.
    if (!placement_.kv_resident_in_host_memory()) buffer_write(true, op.layer(), tokens, t.bytes());
    if (!in_place && t.tokens().begin() > 0 && host_.grows_kv_by_copy()) {
      compute_on_host(index);  // the cache so far is copied into a grown tensor
      return;
    }
  }
  complete(index);
}

HostReadPath Runtime::read_path(trace::Phase phase, trace::KvRegion region) {
  return region == trace::KV_REGION_PRECOMPUTED && phase != trace::PHASE_DECODE ? HostReadPath::kLoad
                                                                                   : HostReadPath::kSwap;
}

// Host attention needs its KV in host memory: precomputed span bytes in the
// PRECOMPUTED key (with the HKVD tokens recomputed in place), appended span
// bytes in APPENDED. Ahead of the op (`appended_too` false) the appended
// region is fetched in decode only, less the rows the op's step appends.
void Runtime::start_fetch(size_t index, bool appended_too) {
  Fetch& f = fetches_[index];
  const trace::Op& op = ops_[index];
  const trace::Attention& a = op.attention();
  uint64_t need[2] = {0, 0};  // tokens: precomputed, appended
  for (const trace::KvSpan& s : a.kv())
    need[s.region() == trace::KV_REGION_PRECOMPUTED ? 0 : 1] += span_tokens(s);
  const bool decode_ahead = !appended_too && op.phase() == trace::PHASE_DECODE;
  if (appended_too && need[1] > appended_tokens_[op.layer()]) {
    refusal_ = "op " + std::to_string(op.id()) + ": attention reads " + std::to_string(need[1]) +
               " appended KV tokens of layer " + std::to_string(op.layer()) + " but only " +
               std::to_string(appended_tokens_[op.layer()]) +
               " were appended when it ran (it does not depend on the kv_append ops of the rest)";
    sc_core::sc_stop();  // the op never completes; the caller reports the refusal
    return;
  }
  if (decode_ahead) need[1] -= std::min(need[1], a.query_rows());
  const trace::KvRegion regions[2] = {trace::KV_REGION_PRECOMPUTED, trace::KV_REGION_APPENDED};
  bool* started[2] = {&f.precomputed_started, &f.appended_started};
  for (int r = 0; r < 2; ++r) {
    if (*started[r] || (r == 1 && !appended_too && !decode_ahead)) continue;
    // KV not yet appended to the layer is not read ahead: the op fetches it when it runs.
    if (r == 1 && decode_ahead && need[1] > appended_tokens_[op.layer()]) continue;
    *started[r] = true;
    const auto in_flight = reads_in_flight_.find({op.layer(), static_cast<int>(regions[r])});
    if (in_flight != reads_in_flight_.end()) {  // the read under way brings this key's KV
      ++f.outstanding;
      in_flight->second.push_back([this, index] { fetch_arrived(index); });
      continue;
    }
    const uint64_t bytes = need[r] * kv_bytes_per_token_;
    const uint64_t resident = std::min(bytes, staging_.lookup(op.layer(), regions[r], bytes));
    staging_hit_bytes_ += resident;
    if (resident == bytes) continue;
    const uint64_t missing = bytes - resident;
    const uint64_t tokens = (missing + kv_bytes_per_token_ - 1) / kv_bytes_per_token_;
    ++f.outstanding;
    read_kv(op.layer(), regions[r], 0, tokens, missing, bytes, read_path(op.phase(), regions[r]),
            [this, index] { fetch_arrived(index); });
  }
}

void Runtime::fetch_arrived(size_t index) {
  Fetch& fetch = fetches_[index];
  if (--fetch.outstanding == 0 && fetch.op_waiting) {
    fetch.op_waiting = false;
    compute_on_host(index);
  }
}

void Runtime::issue_host_attention(size_t index) {
  start_fetch(index, true);
  if (!refusal_.empty()) return;
  // Prefetch: the next host attention ops get their precomputed KV read now.
  const size_t rank = host_attention_rank_.at(index);
  for (size_t r = rank + 1; r <= rank + placement_.prefetch_layers() && r < host_attention_order_.size(); ++r)
    start_fetch(host_attention_order_[r], false);
  Fetch& f = fetches_[index];
  if (f.outstanding == 0)
    compute_on_host(index);
  else
    f.op_waiting = true;
}

SsdAttention Runtime::ssd_work(size_t index, const Pending& supplied) const {
  const trace::Op& op = ops_[index];
  const trace::Attention& a = op.attention();
  const trace::ModelShape& m = header_.model();
  SsdAttention w;
  w.layer = op.layer();
  w.shape = m;
  w.query_rows = a.query_rows();
  uint64_t appended = 0;
  for (const trace::KvSpan& s : a.kv())
    (s.region() == trace::KV_REGION_PRECOMPUTED ? w.context_tokens : appended) += span_tokens(s);
  if (const trace::BitVector* mask = hkvd_mask(index)) {
    w.hkvd_mask = mask;
    w.hkvd_tokens = trace::popcount(*mask);
    w.mask_bytes = (mask->bit_length() + 7) / 8;
  }
  w.appended_tokens_supplied = supplied.tokens;
  w.supplied_kv_bytes = supplied.bytes;
  const uint64_t seen_appended = appended + w.hkvd_tokens;
  if (w.appended_tokens_supplied > seen_appended)
    throw std::logic_error("runtime: op " + std::to_string(op.id()) + " is sent " +
                           std::to_string(w.appended_tokens_supplied) + " appended tokens but sees only " +
                           std::to_string(seen_appended));
  w.appended_tokens_in_flash = seen_appended - w.appended_tokens_supplied;
  w.q_bytes = (a.query_rows() * m.heads() * m.head_dim() * m.activation_bits() + 7) / 8;
  w.output_bytes = w.q_bytes;
  w.causal = a.causal();
  return w;
}

void Runtime::issue_ssd_attention(size_t index) {
  // The KV the command carries is fixed by the trace's order, not by the order
  // the appends happened to be issued in.
  const SsdAttention w = ssd_work(index, predicted_supplied_.at(index));
  ++ssd_attention_issued_;
  prefetched_.erase(index);
  ++foreground_in_flight_;
  storage_.attention(w, [this, index, w] {
    if (w.appended_tokens_supplied > 0)
      buffer_write(false, ops_[index].layer(), w.appended_tokens_supplied, w.supplied_kv_bytes);
    ++ssd_attention_completed_;
    prefetch_after(index);
    complete(index);
    foreground_done();
  });
}

// --- in-flash GEMV (AiF) ------------------------------------------------------

bool Runtime::in_flash_gemv(const trace::Op& op) const {
  if (placement_.decode_linear() != schema::PlacementParams::IN_FLASH || op.phase() != trace::PHASE_DECODE) return false;
  return (op.has_gemm() && op.gemm().b_is_weight()) || op.has_lm_head();
}

void Runtime::issue_in_flash_gemv(size_t index) {
  const trace::Op& op = ops_[index];
  const trace::ModelShape& m = header_.model();
  uint64_t rows, in, out;  // elements
  if (op.has_gemm()) {
    rows = op.gemm().m();
    in = op.gemm().k();
    out = op.gemm().n();
  } else {
    rows = op.lm_head().rows();
    in = m.hidden();
    out = m.vocab();
  }
  const uint64_t weight_elements = in * out;
  const uint64_t weight_bytes = (weight_elements * m.weight_bits() + 7) / 8;
  const uint64_t act_bits = m.activation_bits();
  ++foreground_in_flight_;  // it holds the dies: background writes wait for a gap
  storage_.gemv_in_flash(weight_bytes, weight_elements, rows, (rows * in * act_bits + 7) / 8,
                         (rows * out * act_bits + 7) / 8, [this, index] {
                           complete(index);
                           foreground_done();
                         });
}

// --- background writes ------------------------------------------------------

void Runtime::buffer_write(bool from_host, uint32_t layer, uint64_t tokens, uint64_t bytes) {
  if (bytes == 0) return;
  if (tokens == 0 || bytes % tokens != 0)
    throw std::logic_error("runtime: a write of " + std::to_string(bytes) + " bytes for " + std::to_string(tokens) +
                           " tokens");
  write_buffer_.push_back({from_host, layer, tokens, bytes});
  buffered_bytes_ += bytes;
  flush_writes(false);
}

void Runtime::foreground_done() {
  --foreground_in_flight_;
  flush_writes(draining_);
}

// Sends the oldest buffered write (at most one chunk of it) when the storage has
// no foreground work and no write under way; with `all`, partial chunks go too.
void Runtime::flush_writes(bool all) {
  draining_ = draining_ || all;
  if (writes_in_flight_ > 0 || foreground_in_flight_ > 0) return;
  if (write_buffer_.empty()) {
    if (draining_ && completed_ == ops_.size() && drained_ps_ == 0) {
      drained_ps_ = std::max(now_ps(), last_end_ps_);
      if (drained_listener_) drained_listener_();
    }
    return;
  }
  if (!draining_ && buffered_bytes_ < write_chunk_bytes_) return;
  // Whole tokens only: a buffered write's bytes are tokens x (bytes per token).
  BufferedWrite& head = write_buffer_.front();
  const uint64_t per_token = head.bytes / head.tokens;
  BufferedWrite chunk = head;
  chunk.tokens = std::min(head.tokens, std::max<uint64_t>(1, write_chunk_bytes_ / per_token));
  chunk.bytes = chunk.tokens * per_token;
  head.bytes -= chunk.bytes;
  head.tokens -= chunk.tokens;
  if (head.tokens == 0) write_buffer_.erase(write_buffer_.begin());
  buffered_bytes_ -= chunk.bytes;
  send_write(chunk);
}

void Runtime::flush_layer_writes(uint32_t layer, Done then) {
  std::vector<BufferedWrite> writes;
  for (auto it = write_buffer_.begin(); it != write_buffer_.end();) {
    if (it->layer != layer) {
      ++it;
      continue;
    }
    buffered_bytes_ -= it->bytes;
    writes.push_back(*it);
    it = write_buffer_.erase(it);
  }
  if (writes.empty()) {
    then();
    return;
  }
  auto remaining = std::make_shared<size_t>(writes.size());
  for (const BufferedWrite& w : writes)
    send_write(w, [remaining, then] {
      if (--*remaining == 0) then();
    });
}

void Runtime::send_write(const BufferedWrite& w, Done then) {
  ++writes_in_flight_;
  auto done = [this, then] {
    --writes_in_flight_;
    if (then) then();
    flush_writes(draining_);
  };
  if (w.from_host)
    storage_.write_from_host(w.layer, w.tokens, w.bytes, done);
  else
    storage_.append_in_ssd(w.layer, w.tokens, w.bytes, done);
}

}  // namespace ispsim::systems
