#include "models/isp/attention_engine.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "common/error.h"
#include "common/last_value.h"
#include "common/recent_outcomes.h"
#include "common/sorted_runs.h"

namespace ispsim::isp {

using sc_core::sc_time;

namespace {

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
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

// Costs of one computed tile that both run() and plan() count.
struct TileAccount {
  uint64_t dram_bytes = 0;
  uint64_t bus_bytes = 0;
  bool partial = false;
  uint64_t reduction_cycles = 0;
  double compute_pj = 0;    // accelerator (channel or central)
  double reduction_pj = 0;  // LSE engine (+ global SRAM)
};

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
  std::vector<double> channel_pj;
  uint64_t pass_start_ps = 0;
  std::vector<uint64_t> channel_last_page_ps;  // this pass: when each channel's last page was done
  bool prefetched = false;       // started by prefetch(), waiting for run()
  uint64_t aggregated_stream_ps = kNoStream;  // an aggregated prefetch: when its stream started
  std::vector<uint64_t> die_ready;  // aggregated: when each die (channel x dies + die) may sense; empty: unclaimed
  std::vector<uint64_t> compute_ps;  // accelerator time by channel (index 0 for CENTRALIZED)
  std::vector<uint64_t> sram_io_ps;  // of which exposed scratchpad / SRAM traffic
  uint64_t nand_stream_ps = 0;       // NAND-only time of the passes so far
  double central_pj = 0;
  double reduction_pj = 0;
};

// A time-ordered queue of the aggregated pass's steps (submissions to the bus
// and DRAM clocks, which several kinds of step share), ties in the order they
// were queued: requests reach each FCFS clock in the order the kernel would
// have submitted them.
// Not a heap: the steps queued before the first pop (the pass's pages and
// supplied tiles, in runs already in order: a channel's pages) are merged once;
// every later step of a kind is the completion of one FCFS clock, and those
// never go back in time, so each kind is a FIFO already in order. A pop takes
// the earliest of a few heads.
// Kept across passes (clear()): its buffers are reused, not reallocated.
class AttentionEngine::StepQueue {
 public:
  enum Kind : uint8_t { kPartial, kPartialRead, kPage, kPageToDram, kPageReadBack };
  static constexpr size_t kKinds = kPageReadBack + 1;
  struct Step {
    uint64_t at_ps;
    uint64_t seq;
    Kind kind;
    uint32_t tile;
    bool operator<(const Step& o) const { return at_ps != o.at_ps ? at_ps < o.at_ps : seq < o.seq; }
  };
  void push(uint64_t at_ps, Kind kind, uint32_t tile) {
    const Step step{at_ps, seq_++, kind, tile};
    if (!popping_) {
      if (!first_.empty() && at_ps < first_.back().at_ps) first_runs_.push_back(first_.size());
      first_.push_back(step);
      return;
    }
    Fifo& fifo = later_[kind];
    if (fifo.head < fifo.steps.size() && at_ps < fifo.steps.back().at_ps)
      throw std::logic_error("StepQueue: a step queued earlier than the one before it of its kind");
    fifo.steps.push_back(step);
  }
  void clear() {
    first_.clear();
    first_runs_.assign(1, 0);
    first_head_ = 0;
    for (Fifo& fifo : later_) {
      fifo.steps.clear();
      fifo.head = 0;
    }
    popping_ = false;
    seq_ = 0;
  }
  bool empty() const {
    if (first_head_ < first_.size()) return false;
    for (const Fifo& fifo : later_)
      if (fifo.head < fifo.steps.size()) return false;
    return true;
  }
  Step pop() {
    if (!popping_) {
      popping_ = true;
      first_runs_.push_back(first_.size());
      merge_sorted_runs(first_, std::move(first_runs_));
    }
    const Step* best = first_head_ < first_.size() ? &first_[first_head_] : nullptr;
    Fifo* from = nullptr;
    for (Fifo& fifo : later_) {
      if (fifo.head == fifo.steps.size()) continue;
      const Step& head = fifo.steps[fifo.head];
      if (best == nullptr || head < *best) {
        best = &head;
        from = &fifo;
      }
    }
    const Step step = *best;
    if (from == nullptr) {
      ++first_head_;
    } else if (++from->head == from->steps.size()) {
      from->steps.clear();  // keeps its capacity
      from->head = 0;
    } else if (from->head >= kCompactAfter && 2 * from->head >= from->steps.size()) {
      // A FIFO that never runs dry would grow to the pass's size: drop what was popped.
      from->steps.erase(from->steps.begin(), from->steps.begin() + std::ptrdiff_t(from->head));
      from->head = 0;
    }
    return step;
  }

 private:
  static constexpr size_t kCompactAfter = 4096;
  struct Fifo {
    std::vector<Step> steps;
    size_t head = 0;
  };
  std::vector<Step> first_;
  std::vector<size_t> first_runs_{0};  // where each run of first_ in order begins
  size_t first_head_ = 0;
  Fifo later_[kKinds];
  bool popping_ = false;
  uint64_t seq_ = 0;
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
      isp_(isp),
      coordinator_(coordinator),
      organization_(organization),
      reduction_(reduction),
      dram_(controller_dram),
      bus_(internal_bus),
      ledger_(ledger),
      compute_(required(std::move(compute))),
      mode_encoding_(simd_mode_encoding(*compute_)),
      lse_(coordinator),
      page_bytes_(flash.config().page_bytes),
      channels_(flash.config().channels),
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
  schedule_ = std::make_unique<nand::PipelineSchedule>(flash.config());
  steps_ = std::make_unique<StepQueue>();
  pass_memo_ = std::make_unique<PassMemo>();

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
                 [this] { return isp_compute_ps_ * 1e-3; });
  stats_.formula("isp_sram_io_time", "ns",
                 "of isp_compute_time: the same accelerator's exposed scratchpad / SRAM traffic (Stream Filter pass, "
                 "staging, intermediate exchange), summed over ops",
                 [this] { return isp_sram_io_ps_ * 1e-3; });
  stats_.formula("nand_stream_time", "ns",
                 "time the flash alone needs to deliver each op's pages (accelerators infinitely fast), summed over ops",
                 [this] { return nand_stream_ps_ * 1e-3; });
  stats_.formula("op_time", "ns", "attention op time, command start to O_final ready, summed over ops",
                 [this] { return op_time_ps_ * 1e-3; });
}

AttentionEngine::~AttentionEngine() = default;

const std::vector<std::string>& AttentionEngine::isp_parameters() {
  static const std::vector<std::string> fields{"scratchpad_bytes", "precomputed_page_buffers",
                                               "out_of_place_page_buffers"};
  return fields;
}

sc_time AttentionEngine::nand_stream_time(uint64_t pages) const {
  if (pages == 0) return sc_core::SC_ZERO_TIME;
  const nand::FlashConfig& fc = flash_.config();
  const uint64_t t_r = fc.t_read.value(), t_out = fc.t_page_transfer.value();
  const uint64_t sense = (fc.cache_read ? t_r : t_r + t_out) / (uint64_t(fc.dies_per_channel) * fc.planes_per_die);
  return sc_time::from_value(t_r + t_out + (pages - 1) * std::max(t_out, sense));
}

sc_time AttentionEngine::simd_busy(ComputeMode mode) const {
  return sc_time::from_value(simd_busy_ps_.at(mode));
}

CheckedAttention AttentionEngine::check(const AttentionWork& work) const {
  CheckedAttention checked;
  Shape& s = checked.shape_;
  s.where = "attention layer " + std::to_string(work.layer);
  const trace::ModelShape& want = placement_.shape();
  const trace::ModelShape& got = work.shape;
  if (got.layers() != want.layers() || got.heads() != want.heads() || got.kv_heads() != want.kv_heads() ||
      got.head_dim() != want.head_dim() || got.kv_bits() != want.kv_bits()) {
    throw BadInput(s.where, "model shape (layers " + std::to_string(got.layers()) + ", heads " +
                                std::to_string(got.heads()) + "/" + std::to_string(got.kv_heads()) + ", head_dim " +
                                std::to_string(got.head_dim()) + ", kv_bits " + std::to_string(got.kv_bits()) +
                                ") differs from the KV placement's");
  }
  if (work.layer >= want.layers()) {
    throw BadInput(s.where, "layer out of range (the model has " + std::to_string(want.layers()) + ")");
  }
  if (got.activation_bits() == 0) throw BadInput(s.where, "activation_bits is 0");
  if (work.context_tokens > placement_.precomputed_tokens()) {
    throw BadInput(s.where, std::to_string(work.context_tokens) + " context tokens exceed the " +
                                std::to_string(placement_.precomputed_tokens()) + " placed per layer");
  }
  if (work.appended_tokens_in_flash > placement_.appended_capacity()) {
    throw BadInput(s.where, std::to_string(work.appended_tokens_in_flash) + " appended tokens in flash exceed the " +
                                std::to_string(placement_.appended_capacity()) + " placed per layer");
  }
  s.group = got.heads() / got.kv_heads();
  s.head_dim = got.head_dim();
  s.kv_bits = got.kv_bits();
  s.act_bits = got.activation_bits();
  // A layer's ops in decode share their mask: its last op's copy and filter
  // serve while it stays the same.
  if (last_checked_.size() < want.layers()) last_checked_.resize(want.layers());
  Checked& last = last_checked_[work.layer];
  if (work.hkvd_mask != nullptr && last.mask != nullptr && last.context_tokens == work.context_tokens &&
      last.causal == work.causal && last.mask->bit_length() == work.hkvd_mask->bit_length() &&
      last.mask->bits() == work.hkvd_mask->bits()) {
    checked.mask_ = last.mask;
    checked.filter_ = last.filter;
  } else {
    if (work.hkvd_mask != nullptr) checked.mask_ = std::make_shared<const trace::BitVector>(*work.hkvd_mask);
    FilterContext context;
    context.context_tokens = work.context_tokens;
    context.hkvd_mask = checked.mask_.get();
    context.causal = work.causal;
    checked.filter_ = std::make_shared<const StreamFilter>(isp_, context, s.where);
    last = {checked.mask_, checked.filter_, work.context_tokens, work.causal};
  }
  s.substitutes = checked.filter_->substitutes();
  s.appended_total = work.appended_tokens_in_flash + work.appended_tokens_supplied;
  if (s.substitutes > s.appended_total) {
    throw BadInput(s.where, "the HKVD mask selects " + std::to_string(s.substitutes) + " tokens but only " +
                                std::to_string(s.appended_total) + " appended entries exist");
  }
  if (work.query_rows == 0) throw BadInput(s.where, "no query rows");
  if (work.query_rows > s.appended_total) {
    throw BadInput(s.where, std::to_string(work.query_rows) + " query rows but only " +
                                std::to_string(s.appended_total) +
                                " appended entries (the rows are the last appended entries)");
  }
  if (reduction_ == Reduction::GLOBAL_SRAM) {
    const RowChunking chunks = lse_.chunk_rows(work.query_rows, got.heads(), s.head_dim, s.act_bits, s.where);
    s.passes = chunks.passes;
    s.rows_per_pass = chunks.rows_per_pass;
  } else {
    s.passes = 1;
    s.rows_per_pass = work.query_rows;
  }
  s.mode = compute_->choose_mode(placement_.tokens_per_tile(),
                                 TileShape{s.rows_per_pass * s.group, s.head_dim, s.kv_bits, s.act_bits});
  checked.work_ = work;
  checked.work_.hkvd_mask = checked.mask_.get();
  return checked;
}

namespace {

// Whether two tiles are alike in all but their place (PassTiles::Run): their
// counts, costs and size, whatever tokens they list.
bool alike(const PlannedTile& a, const PlannedTile& b) {
  const FilterResult& f = a.filter;
  const FilterResult& g = b.filter;
  const TileCost& c = a.cost;
  const TileCost& d = b.cost;
  return a.in_flash == b.in_flash && a.region == b.region && a.entries == b.entries && f.kept == g.kept &&
         f.substituted == g.substituted && f.dropped == g.dropped && f.forwarded == g.forwarded &&
         f.cycles == g.cycles && f.tokens.empty() && g.tokens.empty() && c.cycles == d.cycles &&
         c.compute_cycles == d.compute_cycles && c.sram_io_cycles == d.sram_io_cycles && c.macs == d.macs &&
         c.computed_tokens == d.computed_tokens && c.scratchpad_bytes == d.scratchpad_bytes &&
         c.energy_pj == d.energy_pj;
}

}  // namespace

PassTiles AttentionEngine::tiles_of(const AttentionWork& work, const Shape& shape, const StreamFilter& op_filter,
                                    uint64_t pass, bool with_tokens, bool listed) const {
  PassTiles out;
  // Storage of a finished pass, reused: a long op's tile list is megabytes, and
  // allocating it afresh for every pass costs more than filling it.
  out.tiles = std::move(spare_.tiles);
  out.tiles.clear();
  out.runs = std::move(spare_.runs);
  out.runs.clear();
  out.first_row = pass * shape.rows_per_pass;
  out.rows = std::min(shape.rows_per_pass, work.query_rows - out.first_row);
  out.row_heads_per_tile = out.rows * shape.group;
  const uint64_t first_row_entry = shape.appended_total - work.query_rows + out.first_row;

  StreamFilter filter = op_filter;
  for (uint64_t r = 0; r < out.rows; ++r) out.row_positions.push_back(filter.position_of_appended(first_row_entry + r));
  filter.set_max_row_position(out.row_positions.back());  // positions grow with the append index

  // A token tile's filter and SIMD costs, the same for its KV heads.
  auto costed = [&](bool in_flash, trace::KvRegion region, uint64_t first_entry, uint32_t entries) {
    PlannedTile tile;
    tile.in_flash = in_flash;
    tile.region = region;
    tile.first_entry = first_entry;
    tile.entries = entries;
    tile.filter = region == trace::KV_REGION_PRECOMPUTED ? filter.precomputed_page(first_entry, entries, with_tokens)
                                                         : filter.appended_page(first_entry, entries, with_tokens);
    tile.cost = compute_->tile_cost(shape.mode, tile.filter, entries,
                                    TileShape{out.row_heads_per_tile, shape.head_dim, shape.kv_bits, shape.act_bits});
    return tile;
  };
  // `count` tiles like `tile`, which goes next in `tiles` if it starts a run.
  auto extend_runs = [&](const PlannedTile& tile, uint64_t count) {
    if (!out.runs.empty() && alike(out.tiles[out.runs.back().first], tile)) {
      out.runs.back().count += count;
      return false;
    }
    out.runs.push_back({out.tiles.size(), count});
    return true;
  };
  // Listed: every tile, each KV head after the first a copy of it.
  auto place = [&](PlannedTile tile) {
    if (tile.kv_head == 0) {
      extend_runs(tile, 1);
    } else {
      ++out.runs.back().count;
    }
    out.tiles.push_back(std::move(tile));
  };
  const uint64_t T = placement_.tokens_per_tile();
  const uint32_t heads = placement_.kv_heads();
  const uint64_t own_begin = std::max(work.appended_tokens_in_flash, shape.substitutes);
  const uint64_t supplied_tiles = ceil_div(shape.appended_total - std::min(own_begin, shape.appended_total), T);
  out.listed = listed;
  if (listed) {
    out.tiles.reserve((ceil_div(work.context_tokens, T) + ceil_div(work.appended_tokens_in_flash, T) + supplied_tiles) *
                      heads);
  }
  // The NAND pages: a token tile's KV heads are consecutive pages.
  // The firmware knows the pass's visible range: a page that no row of the pass
  // can see is neither read nor filtered, whatever the accelerator.
  for (trace::KvRegion region : {trace::KV_REGION_PRECOMPUTED, trace::KV_REGION_APPENDED}) {
    const uint64_t stored =
        region == trace::KV_REGION_PRECOMPUTED ? work.context_tokens : work.appended_tokens_in_flash;
    const uint64_t end = std::min(stored, ceil_div(filter.visible_entries(region, stored), T) * T);
    if (!listed) {
      for (uint64_t t = 0; t * T < end; ++t) {
        PlannedTile tile = costed(true, region, t * T, uint32_t(std::min(end, (t + 1) * T) - t * T));
        if (!extend_runs(tile, heads)) continue;
        tile.address = placement_.address(work.layer, region, t, 0);
        tile.channel = tile.address.channel;
        out.tiles.push_back(std::move(tile));
      }
      continue;
    }
    placement_.for_each_page(work.layer, region, 0, end, [&](const KvPlacement::PageRef& ref) {
      PlannedTile tile = ref.kv_head == 0 ? costed(true, region, ref.first_entry, ref.entries) : out.tiles.back();
      tile.address = ref.address;
      tile.channel = ref.address.channel;
      tile.kv_head = ref.kv_head;
      place(std::move(tile));
    });
  }
  // Own tokens that came with the command (substitutes among the supplied
  // entries are forwarded to their precomputed pages, not computed here);
  // tile k of them goes to channel k mod C.
  auto channel_of = [&](uint64_t k) { return organization_ == Organization::PER_CHANNEL ? unsigned(k % channels_) : 0u; };
  uint64_t k = 0;
  for (uint64_t first = own_begin; first < shape.appended_total; first += T, k += heads) {
    PlannedTile tile = costed(false, trace::KV_REGION_APPENDED, first, uint32_t(std::min(T, shape.appended_total - first)));
    tile.channel = channel_of(k);
    if (!listed) {
      if (extend_runs(tile, heads)) out.tiles.push_back(std::move(tile));
      continue;
    }
    for (uint32_t h = 0; h < heads; ++h) {
      tile.channel = channel_of(k + h);
      tile.kv_head = h;
      place(tile);
    }
  }
  return out;
}

template <typename Visit>
void AttentionEngine::for_each_tile(const PassTiles& pass, size_t first_run, size_t end_run, uint64_t first_index,
                                    Visit visit) const {
  const bool per_channel = organization_ == Organization::PER_CHANNEL;
  uint64_t index = first_index;
  for (size_t r = first_run; r < end_run; ++r) {
    const PlannedTile& first = pass.tiles[pass.runs[r].first];
    nand::PageAddress address = first.address;
    unsigned channel = first.channel;
    for (uint64_t k = 0; k < pass.runs[r].count; ++k, ++index) {
      visit(first, index, address, channel);
      if (first.in_flash) {  // a run's pages follow each other in the layout
        placement_.layout().next(address);
        channel = address.channel;
      } else if (per_channel) {  // supplied tile k -> channel k mod C
        channel = channel + 1 == channels_ ? 0 : channel + 1;
      }
    }
  }
}

void AttentionEngine::recycle(PassTiles& tiles) {
  spare_.tiles = std::move(tiles.tiles);
  spare_.runs = std::move(tiles.runs);
}

PassTiles AttentionEngine::pass_tiles(const CheckedAttention& op, uint64_t pass, bool with_tokens) const {
  if (pass >= op.shape().passes) {
    throw std::logic_error("pass_tiles: pass " + std::to_string(pass) + " of " + std::to_string(op.shape().passes));
  }
  return tiles_of(op.work(), op.shape(), *op.filter_, pass, with_tokens);
}

uint64_t AttentionEngine::q_bytes(const PlannedTile& tile, uint64_t row_heads, uint32_t act_bits) const {
  if (tile.filter.kept == 0) return 0;
  return row_heads * placement_.shape().head_dim() * act_bits / 8;
}

uint64_t AttentionEngine::compute_ps(const PlannedTile& tile) const {
  return compute_->cycles_to_ps(tile.cost.cycles);
}

uint64_t AttentionEngine::page_time_ps(const PlannedTile& tile, uint64_t row_heads, uint32_t act_bits) const {
  const uint64_t compute = compute_ps(tile);
  const uint64_t q = q_bytes(tile, row_heads, act_bits);
  if (q == 0) return compute;
  // The page's Q rows arrive while the previous page is computed (Q tile double
  // buffer); a page cannot finish faster than its Q can be delivered.
  const uint64_t q_ps = reduction_ == Reduction::GLOBAL_SRAM
                            ? coordinator_.cycles_to_ps(ceil_div(q, coordinator_.sram_bytes_per_cycle))
                            : dram_.occupancy(q).value() * channels_;
  return std::max(compute, q_ps);
}

namespace {

// Per-tile bytes and energies (see attention_engine.h); identical for run() and plan().
TileAccount account(const PlannedTile& tile, uint64_t row_heads, uint64_t q_bytes, uint32_t page_bytes,
                    uint64_t tile_bytes, Organization organization, Reduction reduction, const IspConfig& isp,
                    const CoordinatorConfig& coordinator, const LseReduction& lse, uint32_t head_dim,
                    uint32_t act_bits) {
  TileAccount a;
  a.compute_pj = tile.cost.energy_pj;
  if (tile.in_flash) a.compute_pj += double(page_bytes) * isp.scratchpad_pj_per_byte;  // page into the scratchpad
  const bool computed = tile.filter.kept > 0;
  const ReductionCost partial = lse.partial_cost(computed ? row_heads : 0, head_dim, act_bits);
  if (organization == Organization::PER_CHANNEL) {
    a.partial = computed;
    if (computed) a.reduction_cycles = partial.occupancy_cycles;
    if (reduction == Reduction::GLOBAL_SRAM) {
      a.reduction_pj = partial.energy_pj + double(q_bytes) * coordinator.sram_pj_per_byte;
    } else {
      a.dram_bytes = q_bytes + 2 * partial.partial_bytes;  // Q in; partial written and read back
      a.reduction_pj = double(computed ? row_heads : 0) * head_dim * coordinator.lse_pj_per_element;
    }
  } else {
    // The page crosses the bus, is written to DRAM and read back; the running
    // (O, m, l) of its row-heads is read and written back with its Q rows.
    if (tile.in_flash) {
      a.bus_bytes = page_bytes;
      a.dram_bytes = 2 * uint64_t(page_bytes);
    } else {
      a.dram_bytes = tile_bytes;  // came by DMA into controller DRAM
    }
    if (reduction == Reduction::GLOBAL_SRAM) {
      a.reduction_pj = double(q_bytes + 2 * partial.partial_bytes) * coordinator.sram_pj_per_byte;
    } else {
      a.dram_bytes += q_bytes + 2 * partial.partial_bytes;
    }
  }
  return a;
}

}  // namespace

AttentionPlan AttentionEngine::plan(const CheckedAttention& op) const {
  const AttentionWork& work = op.work();
  const Shape& shape = op.shape();
  AttentionPlan p;
  p.passes = shape.passes;
  p.rows_per_pass = shape.rows_per_pass;
  p.mode = shape.mode;
  for (uint64_t pass = 0; pass < shape.passes; ++pass) {
    const PassTiles tiles = tiles_of(work, shape, *op.filter_, pass, false);
    for (const PlannedTile& tile : tiles.tiles) {
      if (tile.in_flash) ++p.pages_read;
      if (pass == 0) (tile.in_flash ? p.pages_per_pass : p.supplied_tiles) += 1;
      p.tokens_kept += tile.filter.kept;
      p.tokens_substituted += tile.filter.substituted;
      p.tokens_dropped += tile.filter.dropped;
      p.macs += tile.cost.macs;
      p.simd_cycles += tile.cost.cycles;
      p.sram_io_cycles += tile.cost.sram_io_cycles;
      const uint64_t q = q_bytes(tile, tiles.row_heads_per_tile, shape.act_bits);
      const TileAccount a =
          account(tile, tiles.row_heads_per_tile, q, page_bytes_, tile.entries * kv_bytes_per_token_head(work.shape),
                  organization_, reduction_, isp_, coordinator_, lse_, shape.head_dim, shape.act_bits);
      p.partials += a.partial ? 1 : 0;
      p.reduction_cycles += a.reduction_cycles;
      p.dram_bytes += a.dram_bytes;
      p.bus_bytes += a.bus_bytes;
      p.energy_pj += a.compute_pj + a.reduction_pj;
    }
  }
  return p;
}

void AttentionEngine::take_work(Op& op, CheckedAttention checked) {
  op.work = checked.work_;
  op.mask = std::move(checked.mask_);  // keeps work.hkvd_mask valid
  op.shape = std::move(checked.shape_);
  op.filter = std::move(checked.filter_);
}

bool AttentionEngine::prefetched() const { return op_ != nullptr && op_->prefetched; }

void AttentionEngine::prefetch(CheckedAttention checked) {
  if (active_) throw std::logic_error(std::string(name()) + ": prefetch() while an attention op is under way");
  auto op = std::make_unique<Op>();
  take_work(*op, std::move(checked));
  op_ = std::move(op);
  op_->start_ps = now_ps();
  op_->channel_pj.assign(channels_, 0.0);
  op_->compute_ps.assign(channels_, 0);
  op_->sram_io_ps.assign(channels_, 0);
  op_->prefetched = true;
  active_ = true;
  const bool aggregate = may_aggregate();
  op_->tiles = tiles_of(op_->work, op_->shape, *op_->filter, 0, false, /*listed=*/!aggregate);
  if (aggregate) {
    op_->aggregated_stream_ps = now_ps();  // run() schedules the stream from here
    claim_dies(now_ps());
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

// Whether two ops have the same tiles: every field tiles_of() reads is equal.
bool same_tiling(const AttentionWork& a, const AttentionWork& b) {
  const bool same_mask = a.hkvd_mask == nullptr
                             ? b.hkvd_mask == nullptr
                             : b.hkvd_mask != nullptr && a.hkvd_mask->bit_length() == b.hkvd_mask->bit_length() &&
                                   a.hkvd_mask->bits() == b.hkvd_mask->bits();
  return same_mask && a.layer == b.layer && a.query_rows == b.query_rows && a.context_tokens == b.context_tokens &&
         a.appended_tokens_in_flash == b.appended_tokens_in_flash &&
         a.appended_tokens_supplied == b.appended_tokens_supplied && a.causal == b.causal &&
         a.shape.SerializeAsString() == b.shape.SerializeAsString();
}

}  // namespace

void AttentionEngine::run(CheckedAttention checked, std::function<void(const AttentionTraffic&)> done) {
  const AttentionWork& work = checked.work();
  if (op_ && op_->prefetched) {
    Op& op = *op_;
    if (work.layer != op.work.layer || work.context_tokens != op.work.context_tokens ||
        work.appended_tokens_in_flash != op.work.appended_tokens_in_flash)
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
      recycle(op.tiles);
      op.tiles = tiles_of(op.work, op.shape, *op.filter, 0, false, listed);
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
  op_->channel_pj.assign(channels_, 0.0);
  op_->compute_ps.assign(channels_, 0);
  op_->sram_io_ps.assign(channels_, 0);
  ++ops_;
  active_ = true;
  start_pass();
}

void AttentionEngine::start_pass() {
  recycle(op_->tiles);
  // Aggregated: only while nothing else uses the flash (no program under way);
  // otherwise the page events arbitrate with it.
  const bool aggregate = may_aggregate();
  op_->tiles = tiles_of(op_->work, op_->shape, *op_->filter, op_->pass, false, /*listed=*/!aggregate);
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
  for (const PassTiles::Run& run : op.tiles.runs) {  // the NAND pages' runs come first
    const PlannedTile& first = op.tiles.tiles[run.first];
    if (!first.in_flash) break;
    op.nand_tiles += run.count;
    on_channels(first.channel, run.count, channels_, [&](unsigned c, uint64_t n) { op.channel_pages_left[c] += n; });
  }
  op.pages_left = op.nand_tiles;
  op.supplied_pending = 0;
  op.supplied_waiting.assign(channels_, 0);
  op.first_page_seen.assign(channels_, 0);
  op.nand_stream_ps +=
      nand_stream_time(*std::max_element(op.channel_pages_left.begin(), op.channel_pages_left.end())).value();
}

// Aggregated passes: the dies the op's stream reads are claimed: a program under way on one is
// suspended (or waited for) as a read request would (nand::Die::suspend_for_stream()).
void AttentionEngine::claim_dies(uint64_t now_ps) {
  Op& op = *op_;
  const unsigned dies = flash_.config().dies_per_channel;
  op.die_ready.assign(size_t(channels_) * dies, kNoStream);
  size_t unclaimed = op.die_ready.size();
  for (const PassTiles::Run& run : op.tiles.runs) {  // a run's pages follow each other in the layout
    const PlannedTile& first = op.tiles.tiles[run.first];
    if (!first.in_flash) break;
    nand::PageAddress page = first.address;
    for (uint64_t k = 0; k < run.count && unclaimed > 0; ++k, placement_.layout().next(page)) {
      uint64_t& ready = op.die_ready[size_t(page.channel) * dies + page.die];
      if (ready == kNoStream) {
        ready = flash_.claim_for_stream(page.channel, page.die, now_ps);
        --unclaimed;
      }
    }
  }
  for (uint64_t& ready : op.die_ready)
    if (ready == kNoStream) ready = now_ps;
}

// What an aggregated pass's outcome depends on. A pass's arithmetic is max and
// +, so its outcome relative to its stream's start follows from its tiles and
// from the state it starts in, each time relative to that start (a clock free
// before the start is as good as free at it: nothing is submitted earlier).
struct AttentionEngine::PassKey {
  // The tiles, as far as the schedule reads them: their timing fields in runs
  // of equal tiles (a pass is mostly full pages of one cost), the rows, and
  // where the layer's regions begin in the layout's channel/die/plane cycle
  // (nothing in the schedule depends on the block or page).
  struct Run {
    bool in_flash = true;
    trace::KvRegion region = trace::KV_REGION_UNSPECIFIED;
    unsigned channel = 0;  // supplied tiles only
    uint32_t entries = 0;
    uint64_t cycles = 0;
    bool computed = false;
    uint64_t count = 0;
    auto timing() const { return std::tie(in_flash, region, channel, entries, cycles, computed); }
    // Runs of NAND pages alike in timing merge (a supplied run's channel is
    // its first tile's, so those stay apart).
    bool merges_with(const Run& o) const { return in_flash && timing() == o.timing(); }
    bool operator==(const Run& o) const { return timing() == o.timing() && count == o.count; }
  };
  std::vector<Run> runs;
  uint64_t row_heads = 0;
  uint64_t precomputed_phase = 0, appended_phase = 0;
  // The state: the command, the dies, the channels' queued data-ins, the clocks.
  uint64_t command_ps = 0;
  std::vector<uint64_t> die_ready_ps;
  std::vector<uint64_t> channel_free_ps;
  uint64_t dram_free_ps = 0, bus_free_ps = 0, central_free_ps = 0, reduction_free_ps = 0;

  auto fields() const {
    return std::tie(runs, row_heads, precomputed_phase, appended_phase, command_ps, die_ready_ps, channel_free_ps,
                    dram_free_ps, bus_free_ps, central_free_ps, reduction_free_ps);
  }
  bool operator==(const PassKey& o) const { return fields() == o.fields(); }
};

// What an aggregated pass does to the engine and the models around it; times
// relative to its stream's start.
struct AttentionEngine::PassOutcome {
  uint64_t end_ps = 0;
  std::vector<uint64_t> channel_last_page_ps;  // kNoStream: the channel had no page
  std::vector<uint64_t> supplied_end_ps;
  std::vector<uint8_t> mode_set;               // simd_mode signals set at the command
  std::vector<uint64_t> die_pages, die_senses;  // by channel x die
  std::vector<uint64_t> die_last_out_ps;       // of the dies with pages
  uint64_t dram_bytes = 0, bus_bytes = 0;
  core::ClockUse dram, bus, central, reduction;  // requests = 0: not booked
};

// Recent passes' outcomes by key. Within a decode step every layer runs an op
// of the same counts on pages of the same channel/die/plane pattern, most of
// them from the same state, so most passes are looked up, not scheduled.
class AttentionEngine::PassMemo : public RecentOutcomes<PassKey, PassOutcome> {};

AttentionEngine::PassKey AttentionEngine::pass_key(uint64_t stream_start_ps, uint64_t start_ps,
                                                   const std::vector<uint64_t>& die_ready) const {
  const Op& op = *op_;
  const AttentionWork& work = op.work;
  auto relative = [&](uint64_t t) { return t > stream_start_ps ? t - stream_start_ps : 0; };
  PassKey key;
  for (const PassTiles::Run& r : op.tiles.runs) {  // merged where only charges differ
    const PlannedTile& tile = op.tiles.tiles[r.first];
    PassKey::Run run{tile.in_flash, tile.region, tile.in_flash ? 0 : tile.channel, tile.entries, tile.cost.cycles,
                     tile.filter.kept > 0, 0};
    if (!key.runs.empty() && key.runs.back().merges_with(run)) {
      key.runs.back().count += r.count;
    } else {
      run.count = r.count;
      key.runs.push_back(run);
    }
  }
  key.row_heads = op.tiles.row_heads_per_tile;
  const nand::FlashConfig& flash = flash_.config();
  const uint64_t cycle = uint64_t(flash.channels) * flash.dies_per_channel * flash.planes_per_die;
  auto phase = [&](trace::KvRegion region) {
    return placement_.tiles_per_layer(region) == 0 ? 0 : placement_.tile_index(work.layer, region, 0, 0) % cycle;
  };
  key.precomputed_phase = phase(trace::KV_REGION_PRECOMPUTED);
  key.appended_phase = phase(trace::KV_REGION_APPENDED);
  key.command_ps = start_ps - stream_start_ps;
  key.die_ready_ps.reserve(die_ready.size());
  for (uint64_t t : die_ready) key.die_ready_ps.push_back(relative(t));
  for (unsigned c = 0; c < channels_; ++c)
    key.channel_free_ps.push_back(relative(flash_.channel(c).data_ins_end_ps(stream_start_ps)));
  key.dram_free_ps = relative(core::FcfsClock(dram_).free_ps());
  key.bus_free_ps = relative(core::FcfsClock(bus_).free_ps());
  key.central_free_ps = relative(core::FcfsClock(*central_simd_).free_ps());
  key.reduction_free_ps = relative(core::FcfsClock(*reduction_engine_).free_ps());
  return key;
}

// The aggregated pass: the bookkeeping of a pass, then its outcome, looked up
// (a first pass with the key of a recent one) or scheduled, applied.
void AttentionEngine::run_pass_aggregated(uint64_t stream_start_ps) {
  prepare_pass();
  if (op_->die_ready.empty()) claim_dies(stream_start_ps);
  Op& op = *op_;
  op.aggregated_stream_ps = kNoStream;
  op.pass_start_ps = stream_start_ps;
  std::vector<uint64_t> die_ready = std::move(op.die_ready);  // this pass's; the next one claims anew
  op.die_ready.clear();
  const uint64_t start = now_ps();  // the command: supplied tiles and the consumers start here
  ++aggregated_passes_;
  PassKey key = pass_key(stream_start_ps, start, die_ready);
  if (const PassOutcome* kept = pass_memo_->find(key)) {
    ++reused_passes_;
    return apply_pass(*kept, stream_start_ps, start);
  }
  apply_pass(pass_memo_->insert(std::move(key), schedule_pass(stream_start_ps, start, die_ready)), stream_start_ps,
             start);
}

// The NAND stream of every channel from the event-free pipeline schedule,
// then the partials, transfers and merges through local FCFS clocks of the
// reduction engine, DRAM, bus and central SIMD (the same arithmetic as
// core::Server). Changes nothing but scratch buffers.
AttentionEngine::PassOutcome AttentionEngine::schedule_pass(uint64_t stream_start_ps, uint64_t start,
                                                            const std::vector<uint64_t>& die_ready) {
  const Op& op = *op_;
  const PassTiles& pass = op.tiles;
  const uint64_t row_heads = pass.row_heads_per_tile;
  const uint32_t act_bits = op.shape.act_bits;
  const bool per_channel = organization_ == Organization::PER_CHANNEL;
  PassOutcome out;

  // A tile's time depends on its cycles and whether it is computed (its Q rows).
  LastValue<std::pair<uint64_t, bool>, uint64_t> tile_times;
  auto tile_time = [&](const PlannedTile& tile) {
    return tile_times.get({tile.cost.cycles, tile.filter.kept > 0},
                          [&] { return page_time_ps(tile, row_heads, act_bits); });
  };
  // The tiles come from the pass's runs (it need not be listed): the NAND
  // pages' runs, then from `supplied_run` on the supplied tiles'.
  size_t supplied_run = 0;
  while (supplied_run < pass.runs.size() && pass.tiles[pass.runs[supplied_run].first].in_flash) ++supplied_run;
  const size_t all_runs = pass.runs.size();
  // Supplied tiles: each channel computes its own first (PER_CHANNEL).
  std::vector<uint64_t> supplied_end(channels_, start);
  out.mode_set.assign(mode_signals_.size(), 0);
  if (per_channel) {
    for_each_tile(pass, supplied_run, all_runs, op.nand_tiles,
                  [&](const PlannedTile& tile, uint64_t, const nand::PageAddress&, unsigned channel) {
                    supplied_end[channel] += tile_time(tile);
                    out.mode_set[channel] = 1;
                  });
    for (unsigned c = 0; c < channels_; ++c)
      if (op.channel_pages_left[c] > 0) out.mode_set[c] = 1;
  } else {
    out.mode_set[0] = 1;
  }

  StepQueue& steps = *steps_;
  steps.clear();
  // PER_CHANNEL + GLOBAL_SRAM: every partial is one merge of the same cost, so
  // only their times matter (sorted, then FCFS), no step queue. Each channel's
  // come in order (its consumer finishes pages in arrival order): sorted runs.
  const bool sram_merges = per_channel && reduction_ == Reduction::GLOBAL_SRAM;
  std::vector<uint64_t>& merge_times = merge_times_;
  merge_times.clear();
  std::vector<size_t> merge_runs{0};  // where each sorted run of merge_times begins
  // What the schedule and the steps ask of each page, read from the tiles in
  // one sweep: a channel's pages are far apart in the tile list.
  // (Sized first and written by index: an address passed to push_back would
  // leave the registers for the stack on every page.)
  stream_pages_.resize(op.nand_tiles);
  stream_page_ps_.resize(per_channel ? op.nand_tiles : 0);
  stream_page_computed_.resize(op.nand_tiles);
  for_each_tile(pass, 0, supplied_run, 0,
                [&](const PlannedTile& tile, uint64_t i, const nand::PageAddress& address, unsigned) {
                  stream_pages_[i] = address;
                  stream_page_computed_[i] = tile.filter.kept > 0;
                  if (per_channel) stream_page_ps_[i] = tile_time(tile);
                });
  schedule_->assign(stream_pages_);
  const unsigned dies = flash_.config().dies_per_channel;
  out.channel_last_page_ps.assign(channels_, 0);
  out.die_pages.assign(size_t(channels_) * dies, 0);
  out.die_senses.assign(size_t(channels_) * dies, 0);
  out.die_last_out_ps.assign(size_t(channels_) * dies, 0);
  for (unsigned c = 0; c < channels_; ++c) {
    if (op.channel_pages_left[c] == 0) continue;
    // A prefetched stream started earlier; its consumers were held until the
    // command, and each computes its channel's supplied tiles first.
    schedule_->run(c, stream_start_ps, isp_.precomputed_page_buffers, per_channel ? stream_page_ps_.data() : nullptr,
                   supplied_end[c], &die_ready[size_t(c) * dies], flash_.channel(c).data_ins_end_ps(stream_start_ps));
    for (unsigned d = 0; d < dies; ++d) {
      const size_t die = size_t(c) * dies + d;
      out.die_pages[die] = schedule_->pages_by_die()[d];
      out.die_senses[die] = schedule_->senses_by_die()[d];
      out.die_last_out_ps[die] = schedule_->last_out_by_die()[d];
    }
    for (const nand::PipelineSchedule::Page& page : schedule_->pages_in_arrival_order()) {
      out.channel_last_page_ps[c] = std::max(out.channel_last_page_ps[c], page.done_ps);
      if (!per_channel) {
        steps.push(page.done_ps, StepQueue::kPage, page.index);
      } else if (stream_page_computed_[page.index]) {
        if (sram_merges) {
          merge_times.push_back(page.done_ps);
        } else {
          steps.push(page.done_ps, StepQueue::kPartial, page.index);
        }
      }
    }
    merge_runs.push_back(merge_times.size());
  }
  uint64_t tile_count = op.nand_tiles;
  for_each_tile(pass, supplied_run, all_runs, op.nand_tiles,
                [&](const PlannedTile& tile, uint64_t i, const nand::PageAddress&, unsigned channel) {
                  ++tile_count;
                  if (!per_channel) {
                    steps.push(start, StepQueue::kPageReadBack, uint32_t(i));  // in controller DRAM already
                  } else if (tile.filter.kept > 0) {
                    if (sram_merges) {
                      merge_times.push_back(supplied_end[channel]);
                    } else {
                      steps.push(supplied_end[channel], StepQueue::kPartial, uint32_t(i));
                    }
                  }
                });

  core::FcfsClock dram(dram_), bus(bus_), central(*central_simd_), reduction(*reduction_engine_);
  const ReductionCost partial = lse_.partial_cost(row_heads, op.shape.head_dim, act_bits);
  const uint64_t merge_ps = coordinator_.cycles_to_ps(partial.occupancy_cycles);
  uint64_t end = start;
  std::sort(merge_times.begin() + merge_runs.back(), merge_times.end());  // the supplied tiles'
  merge_runs.push_back(merge_times.size());
  merge_sorted_runs(merge_times, merge_runs);
  for (uint64_t at : merge_times) end = std::max(end, reduction.submit(at, merge_ps, partial.partial_bytes));
  // CENTRALIZED: a tile's bytes depend on where it is, whether it is computed
  // and its size; its compute time on its cycles.
  LastValue<std::tuple<bool, bool, uint32_t>, TileAccount> tile_bytes;
  auto central_bytes = [&](const PlannedTile& tile) -> const TileAccount& {
    return tile_bytes.get({tile.in_flash, tile.filter.kept > 0, tile.entries}, [&] {
      return account(tile, row_heads, q_bytes(tile, row_heads, act_bits), page_bytes_,
                     tile.in_flash ? page_bytes_ : tile.entries * kv_bytes_per_token_head(op.work.shape),
                     organization_, reduction_, isp_, coordinator_, lse_, op.shape.head_dim, act_bits);
    });
  };
  LastValue<uint64_t, uint64_t> compute_times;
  auto central_compute_ps = [&](const PlannedTile& tile) {
    return compute_times.get(tile.cost.cycles, [&] { return compute_ps(tile); });
  };
  // What each tile's steps need, read from the tiles in one sweep (the steps
  // visit them in arrival order, far apart in the list); the byte counters are
  // integers, so they are added here, in any order.
  const size_t step_tiles = sram_merges ? 0 : tile_count;
  step_bytes_.assign(step_tiles, 0);
  step_compute_ps_.assign(per_channel ? 0 : step_tiles, 0);
  if (step_tiles > 0) {
    for_each_tile(pass, 0, all_runs, 0, [&](const PlannedTile& tile, uint64_t i, const nand::PageAddress&, unsigned) {
      if (per_channel) {  // a computed tile's Q comes from DRAM; its partial goes there and back
        if (tile.filter.kept == 0) return;
        step_bytes_[i] = q_bytes(tile, row_heads, act_bits);
        out.dram_bytes += step_bytes_[i] + 2 * partial.partial_bytes;
        return;
      }
      // CENTRALIZED: a NAND page crosses the bus into DRAM, then all but the page
      // written is read back with Q and the state; a supplied tile is read whole.
      const TileAccount& a = central_bytes(tile);
      out.dram_bytes += a.dram_bytes;
      if (tile.in_flash) out.bus_bytes += a.bus_bytes;
      step_bytes_[i] = tile.in_flash ? a.dram_bytes - page_bytes_ : a.dram_bytes;
      step_compute_ps_[i] = central_compute_ps(tile);
    });
  }
  // Each step submits to the clock of its stage. The last stage (a merge on
  // the reduction engine, a compute on the central SIMD) is submitted at once,
  // not queued: it is its clock's only user, and its steps would be popped in
  // the order they were queued, so the clock sees the same requests in the
  // same order.
  while (!steps.empty()) {
    const StepQueue::Step step = steps.pop();
    switch (step.kind) {
      case StepQueue::kPartial:  // CONTROLLER_DRAM (GLOBAL_SRAM merges are merge_times)
        end = std::max(end, dram.transfer(step.at_ps, step_bytes_[step.tile]));  // Q
        steps.push(dram.transfer(step.at_ps, partial.partial_bytes), StepQueue::kPartialRead, step.tile);
        break;
      case StepQueue::kPartialRead:
        end = std::max(end, reduction.submit(dram.transfer(step.at_ps, partial.partial_bytes), merge_ps,
                                             partial.partial_bytes));
        break;
      case StepQueue::kPage:  // CENTRALIZED
        steps.push(bus.transfer(step.at_ps, page_bytes_), StepQueue::kPageToDram, step.tile);
        break;
      case StepQueue::kPageToDram:
        steps.push(dram.transfer(step.at_ps, page_bytes_), StepQueue::kPageReadBack, step.tile);
        break;
      case StepQueue::kPageReadBack:
        end = std::max(end, central.submit(dram.transfer(step.at_ps, step_bytes_[step.tile]),
                                           step_compute_ps_[step.tile], 0));
        break;
    }
  }
  for (unsigned c = 0; c < channels_; ++c) end = std::max(end, out.channel_last_page_ps[c]);
  for (unsigned c = 0; c < channels_; ++c) end = std::max(end, supplied_end[c]);

  // Relative to the stream's start.
  const uint64_t base = stream_start_ps;
  out.end_ps = end - base;
  for (uint64_t& t : out.channel_last_page_ps) t = t == 0 ? kNoStream : t - base;
  for (uint64_t t : supplied_end) out.supplied_end_ps.push_back(t - base);
  for (size_t die = 0; die < out.die_pages.size(); ++die)
    if (out.die_pages[die] > 0) out.die_last_out_ps[die] -= base;
  auto use_of = [&](const core::FcfsClock& clock) {
    core::ClockUse use = clock.use();
    use.free_ps = use.requests > 0 ? use.free_ps - base : 0;
    return use;
  };
  out.dram = use_of(dram);
  out.bus = use_of(bus);
  out.central = use_of(central);
  out.reduction = use_of(reduction);
  return out;
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
    op.channel_last_page_ps[c] = out.channel_last_page_ps[c] == kNoStream ? 0 : base + out.channel_last_page_ps[c];
  }
  flash_.end_aggregated_stream(out.die_pages, out.die_senses, out.die_last_out_ps, base);
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

// The end of an aggregated pass: its tiles are counted as computed (the page
// callbacks' bookkeeping), then the pass completes as a page-accurate one.
void AttentionEngine::on_aggregated_pass_done() {
  Op& op = *op_;
  for (const PassTiles::Run& run : op.tiles.runs) {
    const PlannedTile& first = op.tiles.tiles[run.first];
    tiles_computed(first, run.count, charges_of(first));
  }
  count_pages(op.nand_tiles);
  op.pages_left = 0;
  check_pass_done();
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
      op.supplied_end_ps[tile.channel] += page_time_ps(tile, op.tiles.row_heads_per_tile, op.shape.act_bits);
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
      const uint64_t q = q_bytes(*tile, op.tiles.row_heads_per_tile, op.shape.act_bits);
      const TileAccount a = account(*tile, op.tiles.row_heads_per_tile, q, page_bytes_,
                                    tile->entries * kv_bytes_per_token_head(op.work.shape), organization_, reduction_,
                                    isp_, coordinator_, lse_, op.shape.head_dim, op.shape.act_bits);
      ++op.outstanding;
      count_dram(a.dram_bytes);
      dram_.transfer(a.dram_bytes, [this, tile] {
        central_simd_->submit(sc_time::from_value(compute_ps(*tile)), 0, [this, tile] {
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
  uint64_t t = page_time_ps(op.tiles.tiles[index], op.tiles.row_heads_per_tile, op.shape.act_bits);
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
    const uint64_t q = q_bytes(*tile, op.tiles.row_heads_per_tile, op.shape.act_bits);
    const TileAccount a = account(*tile, op.tiles.row_heads_per_tile, q, page_bytes_, page_bytes_, organization_,
                                  reduction_, isp_, coordinator_, lse_, op.shape.head_dim, op.shape.act_bits);
    count_bus(a.bus_bytes);
    count_dram(a.dram_bytes);
    const uint64_t read_back = a.dram_bytes - page_bytes_;  // page + Q + state RMW
    ++op.outstanding;
    bus_.transfer(page_bytes_, [this, tile, read_back] {
      dram_.transfer(page_bytes_, [this, tile, read_back] {
        dram_.transfer(read_back, [this, tile] {
          central_simd_->submit(sc_time::from_value(compute_ps(*tile)), 0, [this, tile] {
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

AttentionEngine::TileCharges AttentionEngine::charges_of(const PlannedTile& tile) const {
  const Op& op = *op_;
  TileCharges c;
  c.compute_ps = compute_ps(tile);
  c.sram_io_ps = compute_->cycles_to_ps(tile.cost.sram_io_cycles);
  const uint64_t q = q_bytes(tile, op.tiles.row_heads_per_tile, op.shape.act_bits);
  c.account = account(tile, op.tiles.row_heads_per_tile, q, page_bytes_,
                      tile.entries * kv_bytes_per_token_head(op.work.shape), organization_, reduction_, isp_,
                      coordinator_, lse_, op.shape.head_dim, op.shape.act_bits);
  return c;
}

void AttentionEngine::tile_computed(const PlannedTile& tile) { tiles_computed(tile, 1, charges_of(tile)); }

// The energies are added tile by tile, in tile order per sum: floating-point
// sums that do not depend on how the tiles are grouped.
void AttentionEngine::tiles_computed(const PlannedTile& first, uint64_t count, const TileCharges& charges) {
  Op& op = *op_;
  if (first.in_flash) pages_computed_ += count;
  tokens_kept_ += uint64_t(first.filter.kept) * count;
  tokens_dropped_ += uint64_t(first.filter.dropped) * count;
  tokens_substituted_ += uint64_t(first.filter.substituted) * count;
  macs_ += first.cost.macs * count;
  sram_io_cycles_ += first.cost.sram_io_cycles * count;
  simd_busy_ps_[op.shape.mode] += charges.compute_ps * count;
  const TileAccount& a = charges.account;
  auto add = [](double& sum, double x, uint64_t times) {
    for (uint64_t i = 0; i < times; ++i) sum += x;
  };
  if (organization_ == Organization::PER_CHANNEL) {
    on_channels(first.channel, count, channels_, [&](unsigned c, uint64_t n) {
      op.compute_ps[c] += charges.compute_ps * n;
      op.sram_io_ps[c] += charges.sram_io_ps * n;
      add(op.channel_pj[c], a.compute_pj, n);
    });
  } else {
    op.compute_ps[0] += charges.compute_ps * count;
    op.sram_io_ps[0] += charges.sram_io_ps * count;
    add(op.central_pj, a.compute_pj, count);
  }
  add(op.reduction_pj, a.reduction_pj, count);
}

void AttentionEngine::emit_partial(const PlannedTile& tile) {
  if (tile.filter.kept == 0) return;  // nothing computed, nothing to merge
  Op& op = *op_;
  const uint64_t n = op.tiles.row_heads_per_tile;
  const ReductionCost cost = lse_.partial_cost(n, op.shape.head_dim, op.shape.act_bits);
  const sc_time occupancy = sc_time::from_value(coordinator_.cycles_to_ps(cost.occupancy_cycles));
  if (reduction_ == Reduction::GLOBAL_SRAM) {
    ++op.outstanding;
    reduction_engine_->submit(occupancy, cost.partial_bytes, [this] { piece_done(); });
    return;
  }
  // Q came from DRAM; the partial goes to DRAM and is read back to be merged.
  const uint64_t q = q_bytes(tile, n, op.shape.act_bits);
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
      if (op.channel_pj[c] > 0) ledger_->add(path + ".ch" + std::to_string(c), op.channel_pj[c] * 1e-12, op.start_ps, end);
    }
    if (op.central_pj > 0) ledger_->add(path + ".central", op.central_pj * 1e-12, op.start_ps, end);
    if (op.reduction_pj > 0) ledger_->add(path + ".reduction", op.reduction_pj * 1e-12, op.start_ps, end);
    ledger_->close(op.energy_ticket);
  }
  std::function<void(const AttentionTraffic&)> done = std::move(op.done);
  const AttentionTraffic traffic = op.traffic;
  recycle(op.tiles);
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
