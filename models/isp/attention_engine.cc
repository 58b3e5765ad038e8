#include "models/isp/attention_engine.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "common/error.h"
#include "common/last_value.h"
#include "common/repeated_sum.h"

namespace ispsim::isp {

using sc_core::sc_time;

namespace {

uint64_t now_ps() { return sc_core::sc_time_stamp().value(); }

// `count` tiles on consecutive channels from `first` (mod `channels`), as
// visit(channel, tiles on it) for each channel that has some.
template <typename Visit>
void on_channels(unsigned first, uint64_t count, unsigned channels, Visit visit) {
  const uint64_t each = count / channels, extra = count % channels;
  for (unsigned j = 0; j < channels; ++j)
    if (const uint64_t n = each + (j < extra ? 1 : 0); n > 0) visit((first + j) % channels, n);
}

std::unique_ptr<const PageCompute> required(std::unique_ptr<const PageCompute> compute) {
  if (!compute) throw std::logic_error("AttentionEngine: no accelerator (PageCompute)");
  return compute;
}

}  // namespace

const char* to_string(Organization organization) {
  return organization == Organization::CENTRALIZED ? "CENTRALIZED" : "PER_CHANNEL";
}
const char* to_string(Reduction reduction) {
  return reduction == Reduction::GLOBAL_SRAM ? "GLOBAL_SRAM" : "CONTROLLER_DRAM";
}

// What computing a tile of the current pass charges to the op's statistics.
struct AttentionEngine::TileCharges {
  uint64_t compute_ps = 0;
  uint64_t sram_io_ps = 0;
  TileAccount account;
};

namespace {
constexpr uint64_t kNoStream = UINT64_MAX;
}  // namespace

struct AttentionEngine::Op {
  AttentionWork work;
  std::shared_ptr<const trace::BitVector> mask;  // work.hkvd_mask points into it (CheckedAttention)
  std::shared_ptr<const StreamFilter> filter;   // over mask
  std::function<void(const AttentionTraffic&)> done;
  AttentionTraffic traffic;  // prefetched pages included
  Shape shape;
  uint64_t start_ps = 0;
  uint64_t energy_ticket = 0;  // the ledger holds start_ps open until the op's energy is charged
  uint64_t pass = 0;
  PassTiles tiles;
  uint64_t nand_tiles = 0;       // the first nand_tiles of tiles.tiles are the stream
  uint64_t pages_left = 0;
  uint64_t outstanding = 0;      // asynchronous pieces (transfers, merges, central SIMD)
  unsigned supplied_pending = 0; // channels whose supplied tiles are not yet computed
  bool step_pending = false;
  std::vector<uint64_t> supplied_end_ps;
  std::vector<uint8_t> supplied_waiting;
  std::vector<uint8_t> first_page_seen;
  std::vector<uint64_t> channel_pages_left;
  std::vector<RepeatedSum> channel_pj;  // energies, in tile order per sum
  // While every run so far gave each channel as many alike tiles, the
  // channels' sums are one sum, kept once (copied out at the first run that
  // does not): a long context's run is a token tile's KV heads, a round of the channels.
  RepeatedSum alike_pj;
  bool pj_alike = true;
  uint64_t pass_start_ps = 0;
  std::vector<uint64_t> channel_last_page_ps;  // this pass: when each channel's last page was done
  bool prefetched = false;       // started by prefetch(), waiting for run()
  uint64_t aggregated_stream_ps = kNoStream;  // an aggregated prefetch: when its stream started
  std::vector<uint64_t> die_ready;  // aggregated: when each die (channel x dies + die) may sense; empty: unclaimed
  std::vector<uint64_t> compute_ps;  // accelerator time by channel (index 0 for CENTRALIZED)
  std::vector<uint64_t> sram_io_ps;  // of which exposed scratchpad / SRAM traffic
  uint64_t nand_stream_ps = 0;       // NAND-only time of the passes so far
  RepeatedSum central_pj;
  RepeatedSum reduction_pj;
};

AttentionEngine::AttentionEngine(sc_core::sc_module_name name, nand::FlashArray& flash,
                                 const KvPlacement& placement, const IspConfig& isp,
                                 std::unique_ptr<const PageCompute> compute,
                                 const CoordinatorConfig& coordinator, Organization organization,
                                 Reduction reduction, core::Server& controller_dram, core::Server& internal_bus,
                                 core::EnergyLedger* ledger)
    : sc_core::sc_module(name),
      flash_(flash),
      placement_(placement),
      organization_(organization),
      reduction_(reduction),
      dram_(controller_dram),
      bus_(internal_bus),
      ledger_(ledger),
      compute_(required(std::move(compute))),
      mode_encoding_(simd_mode_encoding(*compute_)),
      page_bytes_(flash.config().page_bytes),
      channels_(flash.config().channels),
      planner_(placement, isp, *compute_, coordinator, organization, reduction, controller_dram, page_bytes_, channels_),
      stats_(this->name()) {
  // The stream's page buffers live in the scratchpad (the out-of-place buffers and
  // the Q tile are not modelled as limits, see README).
  if (uint64_t(isp.precomputed_page_buffers) * page_bytes_ > isp.scratchpad_bytes) {
    throw BadInput("isp", "precomputed_page_buffers = " + std::to_string(isp.precomputed_page_buffers) + " pages of " +
                              std::to_string(page_bytes_) + " bytes do not fit scratchpad_bytes = " +
                              std::to_string(isp.scratchpad_bytes) + " bytes");
  }
  nand::StreamConfig stream;
  stream.mode = nand::ReadMode::kPipelined;
  stream.consume_per_page = sc_core::SC_ZERO_TIME;
  stream.buffers_per_channel = isp.precomputed_page_buffers;
  reader_ = std::make_unique<nand::StreamReader>("reader", flash, stream);
  reader_->set_delivery([this](const nand::PageAddress& page, uint32_t index, const sc_time& done_at) {
    on_page_done(page, index, done_at);
  });
  for (unsigned c = 0; c < channels_; ++c) {
    nand::PageConsumer& consumer = reader_->consumer(c);
    consumer.set_page_time([this](const nand::PageAddress& page, uint32_t index) { return page_time(page, index); });
    // Partials must reach the reduction engine at the exact time a page is done.
    consumer.set_eager(true);
  }
  reduction_engine_ = std::make_unique<core::Server>(
      "reduction", 0.0, sc_time::from_value(coordinator.cycles_to_ps(coordinator.lse_pipeline_cycles)));
  central_simd_ = std::make_unique<core::Server>("central_simd", 0.0, sc_core::SC_ZERO_TIME);
  mode_signals_.resize(organization == Organization::PER_CHANNEL ? channels_ : 1);

  SC_HAS_PROCESS(AttentionEngine);
  SC_METHOD(on_supplied_done);
  sensitive << supplied_event_;
  dont_initialize();
  SC_METHOD(on_step);
  sensitive << step_event_;
  dont_initialize();
  SC_METHOD(on_aggregated_pass_done);
  sensitive << aggregated_event_;
  dont_initialize();

  const std::string path = this->name();
  if (ledger_ != nullptr) {
    if (organization == Organization::PER_CHANNEL) {
      for (unsigned c = 0; c < channels_; ++c)
        ledger_->add_static_power(path + ".ch" + std::to_string(c), compute_->static_power_w());
    } else {
      ledger_->add_static_power(path + ".central", compute_->static_power_w());
    }
    if (reduction == Reduction::GLOBAL_SRAM) ledger_->add_static_power(path + ".reduction", coordinator.static_power_w);
  }

  // Derived values; the counters are declared with the members (attention_engine.h).
  stats_.formula_integer("bytes_read", "bytes", "KV bytes read from NAND", [this] { return bytes_read(); });
  stats_.formula_integer("bytes_consumed", "bytes", "NAND page bytes processed by an Elastic-SIMD",
                         [this] { return bytes_consumed(); });
  simd_busy_ps_.assign(compute_->modes().size(), 0);
  for (ComputeMode mode = 0; mode < compute_->modes().size(); ++mode) {
    const ModeInfo& info = compute_->modes()[mode];
    stats_.formula("simd_busy_" + info.name, "ns", info.busy_description,
                   [this, mode] { return simd_busy_ps_[mode] * 1e-3; });
  }
  stats_.formula("isp_compute_time", "ns",
                 "accelerator time of the busiest channel (all tiles when centralized), summed over ops",
                 [this] { return isp_compute_ps_ / 1e3; });
  stats_.formula("isp_sram_io_time", "ns",
                 "of isp_compute_time: the same accelerator's exposed scratchpad / SRAM traffic (Stream Filter pass, "
                 "staging, intermediate exchange), summed over ops",
                 [this] { return isp_sram_io_ps_ * 1e-3; });
  stats_.formula("nand_stream_time", "ns",
                 "time the flash alone needs to deliver each op's pages (accelerators infinitely fast), summed over ops",
                 [this] { return nand_stream_ps_ / 1e3; });
  stats_.formula("op_time", "ns", "attention op time, command start to O_final ready, summed over ops",
                 [this] { return op_time_ps_ * 1e-3; });
}

AttentionEngine::~AttentionEngine() = default;

void AttentionEngine::use_aggregated_passes(std::function<bool()> gate) {
  aggregated_ = std::make_unique<AggregatedPasses>(
      flash_, placement_, planner_, PassServers{dram_, bus_, *central_simd_, *reduction_engine_}, mode_signals_.size(),
      std::move(gate));
}

sc_time AttentionEngine::nand_stream_time(uint64_t pages) const {
  if (pages == 0) return sc_core::SC_ZERO_TIME;
  const nand::FlashConfig& fc = flash_.config();
  // A page's bus time, averaged over the pages of a multi-plane sense.
  const uint64_t t_r = fc.t_read.value(), t_first = fc.data_out_ps(true);
  const uint64_t t_out = fc.data_outs_ps(fc.planes_per_die, 1) / fc.planes_per_die;
  const uint64_t sense = (fc.cache_read ? t_r : t_r + t_out) / (uint64_t(fc.dies_per_channel) * fc.planes_per_die);
  return sc_time::from_value(t_r + t_first + (pages - 1) * std::max(t_out, sense));
}

sc_time AttentionEngine::simd_busy(ComputeMode mode) const {
  return sc_time::from_value(simd_busy_ps_.at(mode));
}

void AttentionEngine::take_work(Op& op, CheckedAttention checked) {
  op.work = checked.work_;
  op.mask = std::move(checked.mask_);  // keeps work.hkvd_mask valid
  op.shape = std::move(checked.shape_);
  op.filter = std::move(checked.filter_);
}

PassTiles AttentionEngine::current_tiles(bool listed) const {
  return planner_.tiles_of(op_->work, op_->shape, *op_->filter, op_->pass, false, listed);
}

bool AttentionEngine::prefetched() const { return op_ != nullptr && op_->prefetched; }

void AttentionEngine::prefetch(CheckedAttention checked) {
  if (active_) throw std::logic_error(std::string(name()) + ": prefetch() while an attention op is under way");
  auto op = std::make_unique<Op>();
  take_work(*op, std::move(checked));
  op_ = std::move(op);
  op_->start_ps = now_ps();
  op_->channel_pj.assign(channels_, RepeatedSum());
  op_->compute_ps.assign(channels_, 0);
  op_->sram_io_ps.assign(channels_, 0);
  op_->prefetched = true;
  active_ = true;
  const bool aggregate = may_aggregate();
  op_->tiles = current_tiles(/*listed=*/!aggregate);
  if (aggregate) {
    op_->aggregated_stream_ps = now_ps();  // run() schedules the stream from here
    op_->die_ready = aggregated_->claim_dies(op_->tiles, now_ps());
    return;
  }
  start_stream(/*held=*/true);
}

void AttentionEngine::count_pages(uint64_t pages) {
  pages_read_ += pages;
  op_->traffic.pages_read += pages;
}

void AttentionEngine::count_dram(uint64_t bytes) {
  dram_bytes_ += bytes;
  op_->traffic.dram_bytes += bytes;
}

void AttentionEngine::count_bus(uint64_t bytes) {
  bus_bytes_ += bytes;
  op_->traffic.bus_bytes += bytes;
}

namespace {

// Whether two ops have the same tiles: every field AttentionPlanner::tiles_of() reads is equal.
bool same_tiling(const AttentionWork& a, const AttentionWork& b) {
  const bool same_mask = a.hkvd_mask == nullptr
                             ? b.hkvd_mask == nullptr
                             : b.hkvd_mask != nullptr && a.hkvd_mask->bit_length() == b.hkvd_mask->bit_length() &&
                                   a.hkvd_mask->bits() == b.hkvd_mask->bits();
  return same_mask && a.layer == b.layer && a.query_rows == b.query_rows && a.context_tokens == b.context_tokens &&
         a.appended_tokens_in_flash == b.appended_tokens_in_flash && a.appended_base == b.appended_base &&
         a.appended_tokens_supplied == b.appended_tokens_supplied && a.causal == b.causal &&
         a.shape.SerializeAsString() == b.shape.SerializeAsString();
}

}  // namespace

void AttentionEngine::run(CheckedAttention checked, std::function<void(const AttentionTraffic&)> done) {
  const AttentionWork& work = checked.work();
  if (op_ && op_->prefetched) {
    Op& op = *op_;
    if (work.layer != op.work.layer || work.context_tokens != op.work.context_tokens ||
        work.appended_tokens_in_flash != op.work.appended_tokens_in_flash ||
        work.appended_base != op.work.appended_base)
      throw std::logic_error(std::string(name()) + ": run() of layer " + std::to_string(work.layer) +
                             " does not match the prefetched op of layer " + std::to_string(op.work.layer));
    const bool retile = !same_tiling(work, op.work);
    take_work(op, std::move(checked));
    op.done = std::move(done);
    op.prefetched = false;
    op.start_ps = now_ps();
    if (ledger_ != nullptr) op.energy_ticket = ledger_->open(op.start_ps);
    ++ops_;
    // The prefetched page list stays; when the command's rows or mask differ
    // from the prediction, the tiles' filter and SIMD costs are made again from it.
    if (retile) {
      const bool listed = op.tiles.listed;
      planner_.recycle(op.tiles);
      op.tiles = current_tiles(listed);
    }
    if (op.aggregated_stream_ps != kNoStream) return run_pass_aggregated(op.aggregated_stream_ps);
    schedule_supplied();
    for (unsigned c = 0; c < channels_; ++c) reader_->consumer(c).release();
    check_pass_done();
    return;
  }
  if (active_) throw std::logic_error(std::string(name()) + ": run() while an attention op is under way");
  auto op = std::make_unique<Op>();
  take_work(*op, std::move(checked));
  op_ = std::move(op);
  op_->done = std::move(done);
  op_->start_ps = now_ps();
  if (ledger_ != nullptr) op_->energy_ticket = ledger_->open(op_->start_ps);
  op_->channel_pj.assign(channels_, RepeatedSum());
  op_->compute_ps.assign(channels_, 0);
  op_->sram_io_ps.assign(channels_, 0);
  ++ops_;
  active_ = true;
  start_pass();
}

void AttentionEngine::start_pass() {
  planner_.recycle(op_->tiles);
  // Aggregated: only while nothing else uses the flash (no program under way);
  // otherwise the page events arbitrate with it.
  const bool aggregate = may_aggregate();
  op_->tiles = current_tiles(/*listed=*/!aggregate);
  if (aggregate) {
    run_pass_aggregated(now_ps());
    return;
  }
  start_stream(/*held=*/false);
  schedule_supplied();
  check_pass_done();
}

// The pass's bookkeeping and its NAND stream; with `held`, the pages wait in
// the scratchpad buffers until run() releases the consumers.
void AttentionEngine::start_stream(bool held) {
  prepare_pass();
  Op& op = *op_;
  if (op.nand_tiles > 0) {
    if (held)
      for (unsigned c = 0; c < channels_; ++c) reader_->consumer(c).hold();
    std::vector<nand::PageAddress> pages;
    pages.reserve(op.nand_tiles);
    for (uint64_t i = 0; i < op.nand_tiles; ++i) pages.push_back(op.tiles.tiles[i].address);
    reader_->start(std::move(pages), op.shape.where);
  }
}

// The bookkeeping of a pass that starts now (both modes).
void AttentionEngine::prepare_pass() {
  Op& op = *op_;
  op.pass_start_ps = now_ps();
  op.channel_last_page_ps.assign(channels_, 0);
  op.nand_tiles = 0;
  op.channel_pages_left.assign(channels_, 0);
  uint64_t rounds = 0;  // of runs that give every channel as many pages, added once
  // A borrowed listing's runs but its last count as they did before.
  const PassTiles& t = op.tiles;
  const size_t prefix = stream_prefixes_.runs(t);
  const StreamPrefix* kept = prefix > 0 ? stream_prefixes_.find(t) : nullptr;
  if (kept != nullptr) {
    op.nand_tiles = kept->nand_tiles;
    rounds = kept->rounds;
    op.channel_pages_left = kept->channel_pages;
  }
  for (size_t r = kept != nullptr ? prefix : 0; r < t.runs.size(); ++r) {  // the NAND pages' runs come first
    if (prefix > 0 && kept == nullptr && r == prefix)
      stream_prefixes_.keep(t, {op.nand_tiles, rounds, op.channel_pages_left});
    const PassTiles::Run& run = t.runs[r];
    const PlannedTile& first = op.tiles.tiles[run.first];
    if (!first.in_flash) break;
    op.nand_tiles += run.count;
    if (run.count % channels_ == 0) {
      rounds += run.count / channels_;
      continue;
    }
    on_channels(first.channel, run.count, channels_, [&](unsigned c, uint64_t n) { op.channel_pages_left[c] += n; });
  }
  for (uint64_t& left : op.channel_pages_left) left += rounds;
  op.pages_left = op.nand_tiles;
  op.supplied_pending = 0;
  op.supplied_waiting.assign(channels_, 0);
  op.first_page_seen.assign(channels_, 0);
  op.nand_stream_ps +=
      nand_stream_time(*std::max_element(op.channel_pages_left.begin(), op.channel_pages_left.end())).value();
}

// The aggregated pass: the bookkeeping of a pass, then its outcome, looked up
// (a first pass with the key of a recent one) or scheduled, applied.
void AttentionEngine::run_pass_aggregated(uint64_t stream_start_ps) {
  prepare_pass();
  if (op_->die_ready.empty()) op_->die_ready = aggregated_->claim_dies(op_->tiles, stream_start_ps);
  Op& op = *op_;
  op.aggregated_stream_ps = kNoStream;
  op.pass_start_ps = stream_start_ps;
  std::vector<uint64_t> die_ready = std::move(op.die_ready);  // this pass's; the next one claims anew
  op.die_ready.clear();
  const uint64_t start = now_ps();  // the command: supplied tiles and the consumers start here
  ++aggregated_passes_;
  bool reused = false;
  const PassOutcome& outcome =
      aggregated_->outcome({op.work, op.shape, op.tiles, op.nand_tiles, op.channel_pages_left, stream_start_ps, start,
                            die_ready},
                           &reused);
  if (reused) ++reused_passes_;
  apply_pass(outcome, stream_start_ps, start);
}

// Applies an aggregated pass's outcome to a stream started at `stream_start_ps`
// (the command at `start`); the pass ends with one kernel event.
void AttentionEngine::apply_pass(const PassOutcome& out, uint64_t stream_start_ps, uint64_t start) {
  Op& op = *op_;
  const uint64_t base = stream_start_ps;
  const uint64_t mode_value = simd_mode_value(op.shape.mode);
  for (size_t s = 0; s < mode_signals_.size(); ++s)
    if (out.mode_set[s]) mode_signals_[s].set(mode_value);
  op.supplied_end_ps.resize(channels_);
  for (unsigned c = 0; c < channels_; ++c) {
    op.supplied_end_ps[c] = base + out.supplied_end_ps[c];
    op.channel_last_page_ps[c] = out.channel_last_page_ps[c] == PassOutcome::kNone ? 0 : base + out.channel_last_page_ps[c];
  }
  out.dies.end_stream(flash_, base);
  count_dram(out.dram_bytes);
  count_bus(out.bus_bytes);
  auto book = [&](core::Server& server, core::ClockUse use) {
    if (use.requests == 0) return;
    use.free_ps += base;
    server.book(use);
  };
  book(dram_, out.dram);
  book(bus_, out.bus);
  book(*central_simd_, out.central);
  book(*reduction_engine_, out.reduction);
  aggregated_event_.notify(sc_time::from_value(base + out.end_ps - start));
}

namespace {

// What charges_of() reads of a tile: tiles with the same charge alike.
auto charge_key(const PlannedTile& tile) {
  return std::make_tuple(tile.in_flash, tile.entries, tile.filter.kept > 0, tile.cost.cycles,
                         tile.cost.sram_io_cycles, tile.cost.energy_pj);
}

}  // namespace

// The counts and sums of a first pass's runs before a point: the counters'
// increments, the op's sums, and the runs not yet charged (see below).
struct AttentionEngine::ChargedPrefix {
  uint64_t pages = 0, kept = 0, dropped = 0, substituted = 0, macs = 0, sram_io_cycles = 0, simd_busy_ps = 0;
  std::vector<uint64_t> compute_ps, sram_io_ps;
  std::vector<RepeatedSum> channel_pj;
  RepeatedSum alike_pj, central_pj, reduction_pj;
  bool pj_alike = true;
  bool pending = false;
  size_t pending_tile = 0;
  uint64_t pending_count = 0;
};

// The end of an aggregated pass: its tiles are counted as computed (the page
// callbacks' bookkeeping), then the pass completes as a page-accurate one.
// Consecutive runs of the same charges are charged as one run: every charge is
// a sum linear in the count (on whole rounds of the channels, when per
// channel, the channels' shares do not depend on where the run starts), and a
// RepeatedSum adds a value n times and then m times as n + m times.
void AttentionEngine::on_aggregated_pass_done() {
  Op& op = *op_;
  LastValue<decltype(charge_key(PlannedTile())), TileCharges> charges;
  const PlannedTile* pending = nullptr;  // the first tile of the runs not yet charged
  uint64_t pending_count = 0;
  auto whole_rounds = [&](uint64_t count) {
    return organization_ == Organization::CENTRALIZED || count % channels_ == 0;
  };
  auto charge_pending = [&] {
    if (pending == nullptr) return;
    charge_tiles(*pending, pending_count, charges.get(charge_key(*pending), [&] { return charges_of(*pending); }));
  };
  // A first pass that borrows a listing counts and charges its runs but the
  // last as the first pass that did before.
  const PassTiles& t = op.tiles;
  const size_t prefix = op.pass == 0 ? charged_prefixes_.runs(t) : 0;
  const std::shared_ptr<const ChargedPrefix>* kept = prefix > 0 ? charged_prefixes_.find(t) : nullptr;
  ChargedPrefix start;  // the counters before, when the runs' charges are to be kept
  if (prefix > 0 && kept == nullptr) start = charged_so_far(nullptr, 0);
  if (kept != nullptr) {
    const ChargedPrefix& k = **kept;
    pages_computed_ += k.pages, tokens_kept_ += k.kept, tokens_dropped_ += k.dropped;
    tokens_substituted_ += k.substituted, macs_ += k.macs, sram_io_cycles_ += k.sram_io_cycles;
    simd_busy_ps_[op.shape.mode] += k.simd_busy_ps;
    op.compute_ps = k.compute_ps, op.sram_io_ps = k.sram_io_ps, op.channel_pj = k.channel_pj;
    op.alike_pj = k.alike_pj, op.central_pj = k.central_pj, op.reduction_pj = k.reduction_pj;
    op.pj_alike = k.pj_alike;
    pending = k.pending ? &t.tiles[k.pending_tile] : nullptr;
    pending_count = k.pending_count;
  }
  for (size_t r = kept != nullptr ? prefix : 0; r < t.runs.size(); ++r) {
    if (prefix > 0 && kept == nullptr && r == prefix) {
      auto made = std::make_shared<ChargedPrefix>(charged_so_far(pending, pending_count));
      ChargedPrefix& m = *made;
      m.pages -= start.pages, m.kept -= start.kept, m.dropped -= start.dropped, m.substituted -= start.substituted;
      m.macs -= start.macs, m.sram_io_cycles -= start.sram_io_cycles, m.simd_busy_ps -= start.simd_busy_ps;
      charged_prefixes_.keep(t, std::move(made));
    }
    const PassTiles::Run& run = t.runs[r];
    const PlannedTile& first = op.tiles.tiles[run.first];
    count_tiles(first, run.count);
    if (pending != nullptr && charge_key(*pending) == charge_key(first) && whole_rounds(pending_count) &&
        whole_rounds(run.count)) {
      pending_count += run.count;
      continue;
    }
    charge_pending();
    pending = &first;
    pending_count = run.count;
  }
  charge_pending();
  count_pages(op.nand_tiles);
  op.pages_left = 0;
  check_pass_done();
}

// The counters and the op's sums as they stand, with the runs not yet charged.
AttentionEngine::ChargedPrefix AttentionEngine::charged_so_far(const PlannedTile* pending,
                                                              uint64_t pending_count) const {
  const Op& op = *op_;
  ChargedPrefix c;
  c.pages = pages_computed_.value(), c.kept = tokens_kept_.value(), c.dropped = tokens_dropped_.value();
  c.substituted = tokens_substituted_.value(), c.macs = macs_.value(), c.sram_io_cycles = sram_io_cycles_;
  c.simd_busy_ps = simd_busy_ps_[op.shape.mode];
  c.compute_ps = op.compute_ps, c.sram_io_ps = op.sram_io_ps, c.channel_pj = op.channel_pj;
  c.alike_pj = op.alike_pj, c.central_pj = op.central_pj, c.reduction_pj = op.reduction_pj;
  c.pj_alike = op.pj_alike;
  c.pending = pending != nullptr;
  c.pending_tile = pending != nullptr ? size_t(pending - op.tiles.tiles.data()) : 0;
  c.pending_count = pending_count;
  return c;
}

// Supplied tiles (on chip from the command on) and the SIMD mode signals.
void AttentionEngine::schedule_supplied() {
  Op& op = *op_;
  op.supplied_end_ps.assign(channels_, now_ps());
  const uint64_t mode_value = simd_mode_value(op.shape.mode);
  if (organization_ == Organization::PER_CHANNEL) {
    for (unsigned c = 0; c < channels_; ++c) {
      if (op.channel_pages_left[c] > 0) mode_signals_[c].set(mode_value);
    }
    // Supplied tiles are on chip at once: each channel computes its own first.
    for (uint64_t i = op.nand_tiles; i < op.tiles.tiles.size(); ++i) {
      const PlannedTile& tile = op.tiles.tiles[i];
      op.supplied_end_ps[tile.channel] += planner_.page_time_ps(tile, op.tiles.row_heads_per_tile, op.shape.act_bits);
      if (!op.supplied_waiting[tile.channel]) {
        op.supplied_waiting[tile.channel] = 1;
        ++op.supplied_pending;
        mode_signals_[tile.channel].set(mode_value);
      }
    }
    if (op.supplied_pending > 0) {
      uint64_t first = UINT64_MAX;
      for (unsigned c = 0; c < channels_; ++c) {
        if (op.supplied_waiting[c]) first = std::min(first, op.supplied_end_ps[c]);
      }
      supplied_event_.notify(sc_time::from_value(first - now_ps()));
    }
  } else {
    mode_signals_[0].set(mode_value);
    // Supplied tiles sit in controller DRAM (P2P DMA): read, then computed centrally.
    for (uint64_t i = op.nand_tiles; i < op.tiles.tiles.size(); ++i) {
      const PlannedTile* tile = &op.tiles.tiles[i];
      const TileAccount a = planner_.account(*tile, op.tiles.row_heads_per_tile, op.shape, op.work.shape);
      ++op.outstanding;
      count_dram(a.dram_bytes);
      dram_.transfer(a.dram_bytes, [this, tile] {
        central_simd_->submit(sc_time::from_value(planner_.compute_ps(*tile)), 0, [this, tile] {
          tile_computed(*tile);
          piece_done();
        });
      });
    }
  }
}

sc_time AttentionEngine::page_time(const nand::PageAddress& page, uint32_t index) {
  if (!op_ || organization_ == Organization::CENTRALIZED) return sc_core::SC_ZERO_TIME;
  Op& op = *op_;
  uint64_t t = planner_.page_time_ps(op.tiles.tiles[index], op.tiles.row_heads_per_tile, op.shape.act_bits);
  if (!op.first_page_seen[page.channel]) {
    // The channel's supplied tiles come first (they were on chip at the start).
    op.first_page_seen[page.channel] = 1;
    const uint64_t now = now_ps();
    if (op.supplied_end_ps[page.channel] > now) t += op.supplied_end_ps[page.channel] - now;
  }
  return sc_time::from_value(t);
}

void AttentionEngine::on_page_done(const nand::PageAddress& page, uint32_t index, const sc_time& done_at) {
  Op& op = *op_;
  op.channel_last_page_ps[page.channel] = std::max<uint64_t>(op.channel_last_page_ps[page.channel], done_at.value());
  const PlannedTile* tile = &op.tiles.tiles[index];
  count_pages(1);
  --op.pages_left;
  if (organization_ == Organization::PER_CHANNEL) {
    tile_computed(*tile);
    emit_partial(*tile);
    if (--op.channel_pages_left[page.channel] == 0 && !op.supplied_waiting[page.channel]) {
      mode_signals_[page.channel].set(0);
    }
  } else {
    const TileAccount a = planner_.account(*tile, op.tiles.row_heads_per_tile, op.shape, op.work.shape);
    count_bus(a.bus_bytes);
    count_dram(a.dram_bytes);
    const uint64_t read_back = a.dram_bytes - page_bytes_;  // page + Q + state RMW
    ++op.outstanding;
    bus_.transfer(page_bytes_, [this, tile, read_back] {
      dram_.transfer(page_bytes_, [this, tile, read_back] {
        dram_.transfer(read_back, [this, tile] {
          central_simd_->submit(sc_time::from_value(planner_.compute_ps(*tile)), 0, [this, tile] {
            tile_computed(*tile);
            piece_done();
          });
        });
      });
    });
  }
  check_pass_done();
}

void AttentionEngine::on_supplied_done() {
  Op& op = *op_;
  const uint64_t now = now_ps();
  for (unsigned c = 0; c < channels_; ++c) {
    if (!op.supplied_waiting[c] || op.supplied_end_ps[c] > now) continue;
    op.supplied_waiting[c] = 0;
    --op.supplied_pending;
    for (uint64_t i = op.nand_tiles; i < op.tiles.tiles.size(); ++i) {
      const PlannedTile& tile = op.tiles.tiles[i];
      if (tile.channel != c) continue;
      tile_computed(tile);
      emit_partial(tile);
    }
    if (op.channel_pages_left[c] == 0) mode_signals_[c].set(0);
  }
  if (op.supplied_pending > 0) {
    uint64_t next = UINT64_MAX;
    for (unsigned c = 0; c < channels_; ++c) {
      if (op.supplied_waiting[c]) next = std::min(next, op.supplied_end_ps[c]);
    }
    supplied_event_.notify(sc_time::from_value(next - now));
  }
  check_pass_done();
}

uint64_t AttentionEngine::passes_scheduled_on_one_channel() const {
  return aggregated_ ? aggregated_->scheduled_on_one_channel() : 0;
}

uint64_t AttentionEngine::passes_resumed() const { return aggregated_ ? aggregated_->resumed() : 0; }

AttentionEngine::TileCharges AttentionEngine::charges_of(const PlannedTile& tile) const {
  const Op& op = *op_;
  TileCharges c;
  c.compute_ps = planner_.compute_ps(tile);
  c.sram_io_ps = compute_->cycles_to_ps(tile.cost.sram_io_cycles);
  c.account = planner_.account(tile, op.tiles.row_heads_per_tile, op.shape, op.work.shape);
  return c;
}

void AttentionEngine::tile_computed(const PlannedTile& tile) {
  count_tiles(tile, 1);
  charge_tiles(tile, 1, charges_of(tile));
}

void AttentionEngine::count_tiles(const PlannedTile& first, uint64_t count) {
  if (first.in_flash) pages_computed_ += count;
  tokens_kept_ += uint64_t(first.filter.kept) * count;
  tokens_dropped_ += uint64_t(first.filter.dropped) * count;
  tokens_substituted_ += uint64_t(first.filter.substituted) * count;
  macs_ += first.cost.macs * count;
  sram_io_cycles_ += first.cost.sram_io_cycles * count;
}

// The energies are sums tile by tile, in tile order per sum (RepeatedSum: the
// same bits at a cost that does not grow with the run): floating-point sums
// that do not depend on how the tiles are grouped.
void AttentionEngine::charge_tiles(const PlannedTile& first, uint64_t count, const TileCharges& charges) {
  Op& op = *op_;
  simd_busy_ps_[op.shape.mode] += charges.compute_ps * count;
  const TileAccount& a = charges.account;
  if (organization_ == Organization::PER_CHANNEL) {
    if (op.pj_alike && count % channels_ == 0) {
      const uint64_t n = count / channels_;
      for (unsigned c = 0; c < channels_; ++c) {
        op.compute_ps[c] += charges.compute_ps * n;
        op.sram_io_ps[c] += charges.sram_io_ps * n;
      }
      op.alike_pj.add(a.compute_pj, n);
    } else {
      if (op.pj_alike) {
        op.channel_pj.assign(channels_, op.alike_pj);
        op.pj_alike = false;
      }
      on_channels(first.channel, count, channels_, [&](unsigned c, uint64_t n) {
        op.compute_ps[c] += charges.compute_ps * n;
        op.sram_io_ps[c] += charges.sram_io_ps * n;
        op.channel_pj[c].add(a.compute_pj, n);
      });
    }
  } else {
    op.compute_ps[0] += charges.compute_ps * count;
    op.sram_io_ps[0] += charges.sram_io_ps * count;
    op.central_pj.add(a.compute_pj, count);
  }
  op.reduction_pj.add(a.reduction_pj, count);
}

void AttentionEngine::emit_partial(const PlannedTile& tile) {
  if (tile.filter.kept == 0) return;  // nothing computed, nothing to merge
  Op& op = *op_;
  const uint64_t n = op.tiles.row_heads_per_tile;
  const ReductionCost cost = planner_.lse().partial_cost(n, op.shape.head_dim, op.shape.act_bits);
  const sc_time occupancy = sc_time::from_value(planner_.coordinator().cycles_to_ps(cost.occupancy_cycles));
  if (reduction_ == Reduction::GLOBAL_SRAM) {
    ++op.outstanding;
    reduction_engine_->submit(occupancy, cost.partial_bytes, [this] { piece_done(); });
    return;
  }
  // Q came from DRAM; the partial goes to DRAM and is read back to be merged.
  const uint64_t q = planner_.q_bytes(tile, n, op.shape.act_bits);
  const uint64_t bytes = cost.partial_bytes;
  count_dram(q + 2 * bytes);
  op.outstanding += 2;
  dram_.transfer(q, [this] { piece_done(); });
  dram_.transfer(bytes, [this, bytes, occupancy] {
    dram_.transfer(bytes, [this, bytes, occupancy] {
      reduction_engine_->submit(occupancy, bytes, [this] { piece_done(); });
    });
  });
}

void AttentionEngine::piece_done() {
  --op_->outstanding;
  check_pass_done();
}

void AttentionEngine::check_pass_done() {
  Op& op = *op_;
  if (op.step_pending || op.pages_left > 0 || op.supplied_pending > 0 || op.outstanding > 0) return;
  // A delta later, outside the reader's and the servers' callbacks, so that the
  // next pass (or the caller's next op) may start a new stream.
  op.step_pending = true;
  step_event_.notify(sc_core::SC_ZERO_TIME);
}

void AttentionEngine::on_step() {
  Op& op = *op_;
  op.step_pending = false;
  for (vcd::Signal& signal : mode_signals_) signal.set(0);
  if (timeline_ != nullptr) {
    const std::string label = "L" + std::to_string(op.work.layer) + " rows " + std::to_string(op.work.query_rows) +
                              (op.shape.passes > 1 ? " pass " + std::to_string(op.pass + 1) : "");
    for (unsigned c = 0; c < channels_; ++c)
      if (op.channel_last_page_ps[c] > op.pass_start_ps)
        timeline_->span(std::string(name()) + ".ch" + std::to_string(c), label, "NAND stream + ISP",
                        op.pass_start_ps, op.channel_last_page_ps[c]);
  }
  if (++op.pass < op.shape.passes) {
    start_pass();
    return;
  }
  const uint64_t end = now_ps();
  // The busiest accelerator (the first of equals); one only when CENTRALIZED.
  const size_t busiest = organization_ == Organization::PER_CHANNEL
                             ? size_t(std::max_element(op.compute_ps.begin(), op.compute_ps.end()) - op.compute_ps.begin())
                             : 0;
  const uint64_t compute = op.compute_ps[busiest];
  isp_compute_ps_ += compute;
  isp_sram_io_ps_ += op.sram_io_ps[busiest];
  nand_stream_ps_ += op.nand_stream_ps;
  op_time_ps_ += end - op.start_ps;
  if (compute > op.nand_stream_ps) ++compute_bound_ops_;
  if (timeline_ != nullptr) {
    char label[160];
    std::snprintf(label, sizeof label, "L%u rows %llu: ISP %.3f us, NAND stream %.3f us", unsigned(op.work.layer),
                  static_cast<unsigned long long>(op.work.query_rows), compute * 1e-6, op.nand_stream_ps * 1e-6);
    timeline_->span(std::string(name()) + ".ops", label, "ISP compute vs NAND stream", op.start_ps, end);
  }
  if (ledger_ != nullptr) {
    const std::string path = name();
    for (unsigned c = 0; c < channels_; ++c) {
      const double pj = op.pj_alike ? op.alike_pj.total() : op.channel_pj[c].total();
      if (pj > 0) ledger_->add(path + ".ch" + std::to_string(c), pj * 1e-12, op.start_ps, end);
    }
    if (const double pj = op.central_pj.total(); pj > 0) ledger_->add(path + ".central", pj * 1e-12, op.start_ps, end);
    if (const double pj = op.reduction_pj.total(); pj > 0)
      ledger_->add(path + ".reduction", pj * 1e-12, op.start_ps, end);
    ledger_->close(op.energy_ticket);
  }
  std::function<void(const AttentionTraffic&)> done = std::move(op.done);
  const AttentionTraffic traffic = op.traffic;
  planner_.recycle(op.tiles);
  op_.reset();
  active_ = false;
  if (done) done(traffic);
}

vcd::Encoding AttentionEngine::simd_mode_encoding(const PageCompute& compute) {
  vcd::Encoding encoding{"simd_mode", {{0, "idle"}}};
  for (ComputeMode mode = 0; mode < compute.modes().size(); ++mode)
    encoding.values.push_back({simd_mode_value(mode), compute.modes()[mode].name});
  return encoding;
}

void AttentionEngine::trace(vcd::Writer& writer) {
  const std::string path = name();
  unsigned width = 1;  // bits for the values 0 .. modes
  while ((uint64_t(1) << width) <= compute_->modes().size()) ++width;
  if (organization_ == Organization::PER_CHANNEL) {
    for (unsigned c = 0; c < channels_; ++c)
      writer.add(path + ".ch" + std::to_string(c) + ".simd_mode", width, mode_signals_[c],
                 {vcd::Role::kSimd, static_cast<int>(c), &mode_encoding_});
  } else {
    writer.add(path + ".central.simd_mode", width, mode_signals_[0], {vcd::Role::kSimd, -1, &mode_encoding_});
  }
  reader_->trace(writer);
  // The LSE merges run in the Flash-Coordinator with its global SRAM, else in the controller.
  reduction_engine_->trace(writer, {reduction_ == Reduction::GLOBAL_SRAM ? vcd::Role::kCoordinator : vcd::Role::kController});
}

}  // namespace ispsim::isp
