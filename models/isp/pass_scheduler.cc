#include "models/isp/pass_scheduler.h"

#include <algorithm>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "common/last_value.h"
#include "common/recent_outcomes.h"
#include "common/sorted_runs.h"

namespace ispsim::isp {

// The steps a pass queues before its servers run: each page's (in the order
// its channel finished them, channel after channel) and each supplied tile's.
// They reach the servers in time order, ties in the order queued (as the
// kernel would have submitted them); the runs already in order are merged
// once, not sorted.
class AggregatedPasses::InputSteps {
 public:
  enum Kind : uint8_t { kPartial, kPage, kPageReadBack };
  struct Step {
    uint64_t at_ps;
    uint32_t tile;
    Kind kind;
    uint8_t copies;  // > 1: a page of channel 0 for every channel's (alike channels)
  };
  void push(uint64_t at_ps, Kind kind, uint32_t tile, uint8_t copies = 1) {
    if (!steps_.empty() && at_ps < steps_.back().at_ps) runs_.push_back(steps_.size());
    steps_.push_back({at_ps, tile, kind, copies});
  }
  void clear() {
    steps_.clear();
    runs_.assign(1, 0);
  }
  // Calls fn(step, tile) for every step in time order, a step with copies
  // expanded to a step per channel: the steps of equal times, channel 0's
  // first, then channel 1's (its tiles the next), and so on.
  template <typename Fn>
  void for_each_in_time_order(Fn fn) {
    runs_.push_back(steps_.size());
    merge_sorted_runs(steps_, std::move(runs_), [](const Step& a, const Step& b) { return a.at_ps < b.at_ps; });
    runs_.assign(1, 0);
    for (size_t i = 0; i < steps_.size();) {
      const Step& first = steps_[i];
      size_t end = i + 1;
      while (first.copies > 1 && end < steps_.size() && steps_[end].copies == first.copies &&
             steps_[end].at_ps == first.at_ps)
        ++end;
      for (uint32_t c = 0; c < first.copies; ++c)
        for (size_t k = i; k < end; ++k) fn(steps_[k], steps_[k].tile + c);
      i = end;
    }
  }

 private:
  std::vector<Step> steps_;
  std::vector<size_t> runs_{0};  // where each run of steps_ in order begins
};

// What a pass's outcome depends on: its tiles as far as the schedule reads
// them (their timing fields in runs of equal tiles, the rows, where each run
// of NAND pages begins in the layout's channel/die/plane cycle: nothing in the
// schedule depends on the block or page), and the state it starts in
// relative to its stream's start (a clock free before the start is as good as
// free at it: nothing is submitted earlier).
struct AggregatedPasses::Key {
  struct Run {
    bool in_flash = true;
    trace::KvRegion region = trace::KV_REGION_UNSPECIFIED;
    unsigned channel = 0;  // supplied tiles only
    uint32_t entries = 0;
    uint64_t cycles = 0;
    bool computed = false;
    uint64_t unit = 0;  // NAND pages: the first page's place in the channel/die/plane cycle
    uint64_t count = 0;
    auto timing() const { return std::tie(in_flash, region, channel, entries, cycles, computed); }
    // Runs of NAND pages alike in timing merge where the second continues the
    // first's cycle (a supplied run's channel is its first tile's, so those stay apart).
    bool merges_with(const Run& o, uint64_t cycle) const {
      return in_flash && timing() == o.timing() && (unit + count) % cycle == o.unit;
    }
    bool operator==(const Run& o) const { return timing() == o.timing() && unit == o.unit && count == o.count; }
  };
  std::vector<Run> runs;
  uint64_t row_heads = 0;
  uint64_t command_ps = 0;
  nand::FlashStart flash;
  uint64_t dram_free_ps = 0, bus_free_ps = 0, central_free_ps = 0, reduction_free_ps = 0;

  auto fields() const {
    return std::tie(runs, row_heads, command_ps, flash, dram_free_ps, bus_free_ps, central_free_ps,
                    reduction_free_ps);
  }
  bool operator==(const Key& o) const { return fields() == o.fields(); }
};

class AggregatedPasses::Memo : public RecentOutcomes<Key, PassOutcome> {};

// The CENTRALIZED drain's queues and how far it went through them: pages off
// the bus, to be written to DRAM; pages written, to be read back (the two end
// in a hop at the end of time); supplied tiles, to be read back.
struct AggregatedPasses::DrainQueues {
  std::vector<Hop> on_bus, written, supplied;
  size_t b = 0, w = 0, filled = 0, s = 0;
};

// Where a CENTRALIZED pass's drain stood before its first read-back of a page
// of its last NAND run, and what its stream gave; times relative to its
// stream's start. A pass alike but for that run's tiles goes on from here.
struct AggregatedPasses::Checkpoint {
  uint32_t tail_first = 0, tail_count = 0;  // the last NAND run's tiles
  bool taken = false;
  bool on_one_channel = false;
  uint64_t tile_count = 0;
  uint64_t first_tile = 0;  // the queues' first
  uint64_t end_ps = 0;
  DrainQueues queues;
  core::ClockUse dram, bus, central;
  std::vector<uint64_t> channel_last_page_ps;  // 0: none
  nand::DieUse dies;
};

// A decode step's layers start their passes from a few states (its first
// layers' differ from the rest's), and each layer group's key changes as its
// last token tile fills: enough are kept for every group and state of a step.
class AggregatedPasses::Checkpoints : public RecentOutcomes<Key, Checkpoint, 16> {};

// The key runs of a borrowed precomputed listing's runs but its last.
struct AggregatedPasses::KeyPrefixes : BorrowedPrefixes<std::vector<Key::Run>> {};

// One schedule() call's state.
struct AggregatedPasses::Pass {
  Pass(const PassRequest& request, const PassServers& servers, const AttentionPlanner& planner)
      : r(request),
        per_channel(planner.organization() == Organization::PER_CHANNEL),
        // PER_CHANNEL + GLOBAL_SRAM: every partial is one merge of the same
        // cost, so only their times matter (sorted, then FCFS), no step queue.
        sram_merges(per_channel && planner.reduction() == Reduction::GLOBAL_SRAM),
        row_heads(request.tiles.row_heads_per_tile),
        act_bits(request.shape.act_bits),
        dram(servers.dram),
        bus(servers.bus),
        central(servers.central_simd),
        reduction(servers.reduction_engine),
        partial(planner.lse().partial_cost(row_heads, request.shape.head_dim, act_bits)),
        merge_ps(planner.coordinator().cycles_to_ps(partial.occupancy_cycles)),
        end(request.command_ps) {
    const PassTiles& tiles = request.tiles;
    while (supplied_run < tiles.runs.size() && tiles.tiles[tiles.runs[supplied_run].first].in_flash) ++supplied_run;
  }
  const PassRequest& r;
  const bool per_channel, sram_merges;
  const uint64_t row_heads;
  const uint32_t act_bits;
  // The tiles come from the pass's runs (it need not be listed): the NAND
  // pages' runs, then from `supplied_run` on the supplied tiles'.
  size_t supplied_run = 0;
  uint64_t tile_count = 0;
  std::vector<uint64_t> supplied_end;  // by channel: each computes its supplied tiles first
  std::vector<size_t> merge_runs{0};   // where each sorted run of merge_times begins
  uint64_t channel_weight = 1;         // alike channels: channel 0's merges stand for this many
  uint8_t page_copies = 1;             // alike channels: channel 0's page steps stand for this many
  // A tile's time depends on its cycles and whether it is computed (its Q rows).
  LastValue<std::pair<uint64_t, bool>, uint64_t> tile_times;
  core::FcfsClock dram, bus, central, reduction;
  const ReductionCost partial;
  const uint64_t merge_ps;
  uint64_t end;
  PassOutcome out;
};

AggregatedPasses::AggregatedPasses(nand::FlashArray& flash, const KvPlacement& placement,
                                   const AttentionPlanner& planner, PassServers servers, size_t mode_signals,
                                   std::function<bool()> gate)
    : flash_(flash),
      placement_(placement),
      planner_(planner),
      servers_(servers),
      mode_signals_(mode_signals),
      gate_(std::move(gate)),
      channels_(flash.config().channels),
      page_bytes_(flash.config().page_bytes),
      schedule_(flash.config()),
      memo_(std::make_unique<Memo>()),
      checkpoints_(std::make_unique<Checkpoints>()),
      key_prefixes_(std::make_unique<KeyPrefixes>()),
      key_(std::make_unique<Key>()),
      steps_(std::make_unique<InputSteps>()),
      drain_(std::make_unique<DrainQueues>()) {}

AggregatedPasses::~AggregatedPasses() = default;

std::vector<uint64_t> AggregatedPasses::claim_dies(const PassTiles& tiles, uint64_t now_ps) {
  const unsigned dies = flash_.config().dies_per_channel;
  std::vector<uint64_t> die_ready(size_t(channels_) * dies, PassOutcome::kNone);
  size_t unclaimed = die_ready.size();
  for (const PassTiles::Run& run : tiles.runs) {  // a run's pages follow each other in the layout
    const PlannedTile& first = tiles.tiles[run.first];
    if (!first.in_flash || unclaimed == 0) break;
    nand::PageAddress page = first.address;
    for (uint64_t k = 0; k < run.count && unclaimed > 0; ++k, placement_.layout().next(page)) {
      uint64_t& ready = die_ready[size_t(page.channel) * dies + page.die];
      if (ready == PassOutcome::kNone) {
        ready = flash_.claim_for_stream(page.channel, page.die, now_ps);
        --unclaimed;
      }
    }
  }
  for (uint64_t& ready : die_ready)
    if (ready == PassOutcome::kNone) ready = now_ps;
  return die_ready;
}

void AggregatedPasses::key_of(const PassRequest& r, size_t tail_run, uint64_t tail_pages, Key& key) const {
  const nand::FlashConfig& flash = flash_.config();
  const uint64_t cycle = uint64_t(flash.channels) * flash.dies_per_channel * flash.planes_per_die;
  key.runs.clear();
  bool after_tail = false;  // the run after the tail starts a key run of its own
  auto add = [&](Key::Run k, uint64_t count, bool may_merge) {
    if (may_merge && !key.runs.empty() && key.runs.back().merges_with(k, cycle)) {
      key.runs.back().count += count;
    } else {
      k.count = count;
      key.runs.push_back(k);
    }
  };
  // A borrowed listing's runs but its last give the key runs they gave before.
  const PassTiles& t = r.tiles;
  const size_t prefix = tail_run >= KeyPrefixes::runs(t) ? KeyPrefixes::runs(t) : 0;
  const std::vector<Key::Run>* kept = prefix > 0 ? key_prefixes_->find(t) : nullptr;
  if (kept != nullptr) key.runs = *kept;
  for (size_t i = kept != nullptr ? prefix : 0; i < t.runs.size(); ++i) {  // merged where only charges differ
    if (prefix > 0 && kept == nullptr && i == prefix) key_prefixes_->keep(t, key.runs);
    const PassTiles::Run& run = t.runs[i];
    const PlannedTile& tile = r.tiles.tiles[run.first];
    const nand::PageAddress& a = tile.address;
    const uint64_t unit = a.channel + uint64_t(flash.channels) * (a.die + flash.dies_per_channel * a.plane);
    Key::Run k{tile.in_flash, tile.region, tile.in_flash ? 0 : tile.channel, tile.entries, tile.cost.cycles,
               tile.filter.kept > 0, tile.in_flash ? unit : 0, 0};
    if (i != tail_run) {
      add(k, run.count, !after_tail);
      after_tail = false;
      continue;
    }
    const uint64_t tail = std::min(tail_pages, run.count);
    if (tail < run.count) add(k, run.count - tail, true);  // the run's pages before the tail
    k.unit = tile.in_flash ? (unit + run.count - tail) % cycle : 0;
    k.entries = 0, k.cycles = 0, k.computed = false;
    add(k, tail, false);
    after_tail = true;
  }
  const uint64_t base = r.stream_start_ps;
  auto relative = [&](uint64_t t) { return t > base ? t - base : 0; };
  key.row_heads = r.tiles.row_heads_per_tile;
  key.command_ps = r.command_ps - base;
  key.flash.set_relative(flash_, r.die_ready, base);
  key.dram_free_ps = relative(core::FcfsClock(servers_.dram).free_ps());
  key.bus_free_ps = relative(core::FcfsClock(servers_.bus).free_ps());
  key.central_free_ps = relative(core::FcfsClock(servers_.central_simd).free_ps());
  key.reduction_free_ps = relative(core::FcfsClock(servers_.reduction_engine).free_ps());
}

const PassOutcome& AggregatedPasses::outcome(const PassRequest& request, bool* reused) {
  key_of(request, request.tiles.runs.size(), 0, *key_);
  if (const PassOutcome* kept = memo_->find(*key_)) {
    *reused = true;
    return *kept;
  }
  *reused = false;
  Key key = *key_;  // kept: schedule() uses the scratch key
  return memo_->insert(std::move(key), schedule(request));
}

// Changes nothing but scratch buffers and kept drains. A CENTRALIZED pass
// with NAND runs before its last resumes a kept drain or keeps its own.
PassOutcome AggregatedPasses::schedule(const PassRequest& request) {
  Pass pass(request, servers_, planner_);
  schedule_supplied(pass);
  const bool resumable = !pass.per_channel && pass.supplied_run >= 2;
  Checkpoint keep;
  if (resumable) {
    // The tail: the last token tile's pages (its KV heads), the one a decode
    // step fills; when it fills up it joins the run of full tiles before it.
    const size_t tail_run = pass.supplied_run - 1;
    const uint64_t tail_pages = std::min<uint64_t>(placement_.kv_heads(), request.tiles.runs[tail_run].count);
    key_of(request, tail_run, tail_pages, *key_);
    if (const Checkpoint* kept = checkpoints_->find(*key_)) {
      resume_drain(pass, *kept);
      make_relative(pass);
      return std::move(pass.out);
    }
    for (size_t k = 0; k <= tail_run; ++k) keep.tail_first += uint32_t(request.tiles.runs[k].count);
    keep.tail_first -= uint32_t(tail_pages);
    keep.tail_count = uint32_t(tail_pages);
  }
  steps_->clear();
  merge_times_.clear();
  const uint64_t on_one_channel = scheduled_on_one_channel_;
  schedule_stream(pass);
  keep.on_one_channel = scheduled_on_one_channel_ > on_one_channel;
  queue_supplied_steps(pass);
  merge_partials(pass);
  cost_steps(pass, 0);
  drain_steps(pass, resumable ? &keep : nullptr);
  if (keep.taken) checkpoints_->insert(*key_, std::move(keep));
  make_relative(pass);
  return std::move(pass.out);
}

// A tile's time on its channel, kept while its cycles and whether it is computed repeat.
uint64_t AggregatedPasses::tile_time(Pass& pass, const PlannedTile& tile) const {
  return pass.tile_times.get({tile.cost.cycles, tile.filter.kept > 0},
                             [&] { return planner_.page_time_ps(tile, pass.row_heads, pass.act_bits); });
}

// Supplied tiles: each channel computes its own first (PER_CHANNEL); the mode
// signals set at the command.
void AggregatedPasses::schedule_supplied(Pass& pass) {
  const PassRequest& r = pass.r;
  pass.supplied_end.assign(channels_, r.command_ps);
  pass.out.mode_set.assign(mode_signals_, 0);
  if (!pass.per_channel) {
    pass.out.mode_set[0] = 1;
    return;
  }
  planner_.for_each_tile(r.tiles, pass.supplied_run, r.tiles.runs.size(), r.nand_tiles,
                         [&](const PlannedTile& tile, uint64_t, const nand::PageAddress&, unsigned channel) {
                           pass.supplied_end[channel] += tile_time(pass, tile);
                           pass.out.mode_set[channel] = 1;
                         });
  for (unsigned c = 0; c < channels_; ++c)
    if (r.channel_pages_left[c] > 0) pass.out.mode_set[c] = 1;
}

// The NAND stream of every channel from the event-free pipeline schedule; each
// page, when done, queues its partial (PER_CHANNEL) or its trip over the bus
// (CENTRALIZED). A prefetched stream started before the command; its consumers
// were held until then, and each computes its channel's supplied tiles first.
void AggregatedPasses::schedule_stream(Pass& pass) {
  const PassRequest& r = pass.r;
  if (channels_alike(pass)) return schedule_alike_channels(pass);
  // What the schedule and the steps ask of each page, read from the tiles in
  // one sweep: a channel's pages are far apart in the tile list.
  // (Sized first and written by index: an address passed to push_back would
  // leave the registers for the stack on every page.)
  stream_pages_.resize(r.nand_tiles);
  stream_page_ps_.resize(pass.per_channel ? r.nand_tiles : 0);
  stream_page_computed_.resize(r.nand_tiles);
  planner_.for_each_tile(r.tiles, 0, pass.supplied_run, 0,
                         [&](const PlannedTile& tile, uint64_t i, const nand::PageAddress& address, unsigned) {
                           stream_pages_[i] = address;
                           stream_page_computed_[i] = tile.filter.kept > 0;
                           if (pass.per_channel)
                             stream_page_ps_[i] = tile_time(pass, tile);
                         });
  schedule_.assign(stream_pages_);
  const unsigned dies = flash_.config().dies_per_channel;
  pass.out.channel_last_page_ps.assign(channels_, 0);
  pass.out.dies.assign(size_t(channels_) * dies);
  for (unsigned c = 0; c < channels_; ++c) {
    if (r.channel_pages_left[c] == 0) continue;
    schedule_.run(c, r.stream_start_ps, planner_.isp().precomputed_page_buffers,
                  pass.per_channel ? stream_page_ps_.data() : nullptr, pass.supplied_end[c],
                  &r.die_ready[size_t(c) * dies], flash_.channel(c).data_ins_end_ps(r.stream_start_ps));
    take_channel_pages(pass, c, 0, nullptr);
  }
}

// The last run's pages as channel `channel`'s: its dies, its last page, and
// each page's step or merge. A page's place in the listing is its index
// (`places` null) or places[index], plus `shift`.
void AggregatedPasses::take_channel_pages(Pass& pass, unsigned channel, uint32_t shift,
                                          const std::vector<uint32_t>* places) {
  pass.out.dies.take(schedule_, channel, pass.r.stream_start_ps);
  uint64_t& last = pass.out.channel_last_page_ps[channel];
  for (const nand::PipelineSchedule::Page& page : schedule_.pages_in_arrival_order()) {
    last = std::max(last, page.done_ps);
    const uint32_t place = (places ? (*places)[page.index] : page.index) + shift;
    if (!pass.per_channel) {
      steps_->push(page.done_ps, InputSteps::kPage, place, pass.page_copies);
    } else if (stream_page_computed_[page.index]) {
      if (!pass.sram_merges) {
        steps_->push(page.done_ps, InputSteps::kPartial, place, pass.page_copies);
      } else if (channel == 0 || pass.channel_weight == 1) {  // alike channels: channel 0's stand for all
        merge_times_.push_back(page.done_ps);
      }
    }
  }
  if (pass.channel_weight == 1 || channel == 0) pass.merge_runs.push_back(merge_times_.size());
}

// Whether every channel's stream is channel 0's with its pages' places shifted
// by the channel: each NAND run starts on channel 0 and spans whole rounds of
// the channels (a token tile's KV heads, C of them or a multiple, alike on
// every channel), and every channel starts alike (its dies, its data-ins, its
// supplied tiles). Checked on the runs and the start, not page by page.
bool AggregatedPasses::channels_alike(const Pass& pass) const {
  const PassRequest& r = pass.r;
  if (channels_ < 2 || r.nand_tiles == 0) return false;
  for (size_t k = 0; k < pass.supplied_run; ++k) {
    const PassTiles::Run& run = r.tiles.runs[k];
    if (r.tiles.tiles[run.first].address.channel != 0 || run.count % channels_ != 0) return false;
  }
  const unsigned dies = flash_.config().dies_per_channel;
  const uint64_t channel_free = flash_.channel(0).data_ins_end_ps(r.stream_start_ps);
  for (unsigned c = 1; c < channels_; ++c) {
    if (pass.supplied_end[c] != pass.supplied_end[0] ||
        flash_.channel(c).data_ins_end_ps(r.stream_start_ps) != channel_free)
      return false;
    for (unsigned d = 0; d < dies; ++d)
      if (r.die_ready[size_t(c) * dies + d] != r.die_ready[d]) return false;
  }
  return true;
}

// Alike channels: channel 0's pages alone are listed and scheduled; channel
// c's are the same with their places shifted by c (what PipelineSchedule's
// repeated runs give, without listing them).
void AggregatedPasses::schedule_alike_channels(Pass& pass) {
  const PassRequest& r = pass.r;
  ++scheduled_on_one_channel_;
  const uint64_t pages = r.nand_tiles / channels_;
  stream_pages_.resize(pages);
  stream_page_ps_.resize(pass.per_channel ? pages : 0);
  stream_page_computed_.resize(pages);
  stream_page_place_.resize(pages);
  uint64_t j = 0, place = 0;
  for (size_t k = 0; k < pass.supplied_run; ++k) {
    const PassTiles::Run& run = r.tiles.runs[k];
    const PlannedTile& tile = r.tiles.tiles[run.first];
    const uint64_t page_ps = pass.per_channel ? tile_time(pass, tile) : 0;
    nand::PageAddress address = tile.address;
    for (uint64_t n = 0; n < run.count / channels_; ++n, ++j, place += channels_) {
      stream_pages_[j] = address;
      stream_page_computed_[j] = tile.filter.kept > 0;
      if (pass.per_channel) stream_page_ps_[j] = page_ps;
      stream_page_place_[j] = uint32_t(place);
      address.channel = channels_ - 1;  // one round of the channels on: the next die (or plane, page)
      placement_.layout().next(address);
    }
  }
  schedule_.assign(stream_pages_);
  const unsigned dies = flash_.config().dies_per_channel;
  pass.out.channel_last_page_ps.assign(channels_, 0);
  pass.out.dies.assign(size_t(channels_) * dies);
  schedule_.run(0, r.stream_start_ps, planner_.isp().precomputed_page_buffers,
                pass.per_channel ? stream_page_ps_.data() : nullptr, pass.supplied_end[0], &r.die_ready[0],
                flash_.channel(0).data_ins_end_ps(r.stream_start_ps));
  const bool copies = !pass.sram_merges && channels_ <= UINT8_MAX;  // channel 0's steps stand for all
  pass.channel_weight = pass.sram_merges ? channels_ : 1;
  pass.page_copies = copies ? uint8_t(channels_) : 1;
  take_channel_pages(pass, 0, 0, &stream_page_place_);
  for (unsigned c = 1; c < channels_; ++c) {
    if (!pass.sram_merges && !copies) {  // each page's steps, in the order the channels would have queued them
      take_channel_pages(pass, c, c, &stream_page_place_);
      continue;
    }
    pass.out.dies.take(schedule_, c, r.stream_start_ps);
    pass.out.channel_last_page_ps[c] = pass.out.channel_last_page_ps[0];
  }
}

// The supplied tiles' steps: a partial when computed (PER_CHANNEL), or a read
// back from controller DRAM, where they came by DMA (CENTRALIZED).
void AggregatedPasses::queue_supplied_steps(Pass& pass) {
  const PassRequest& r = pass.r;
  pass.tile_count = r.nand_tiles;
  planner_.for_each_tile(r.tiles, pass.supplied_run, r.tiles.runs.size(), r.nand_tiles,
                         [&](const PlannedTile& tile, uint64_t i, const nand::PageAddress&, unsigned channel) {
                           ++pass.tile_count;
                           if (!pass.per_channel) {
                             steps_->push(r.command_ps, InputSteps::kPageReadBack, uint32_t(i));
                           } else if (tile.filter.kept > 0) {
                             if (pass.sram_merges) {
                               merge_times_.push_back(pass.supplied_end[channel]);
                             } else {
                               steps_->push(pass.supplied_end[channel], InputSteps::kPartial, uint32_t(i));
                             }
                           }
                         });
}

// GLOBAL_SRAM merges of PER_CHANNEL partials, FCFS by time: each channel's
// come in order (its consumer finishes pages in arrival order), the supplied
// tiles' are sorted.
void AggregatedPasses::merge_partials(Pass& pass) {
  std::sort(merge_times_.begin() + std::ptrdiff_t(pass.merge_runs.back()), merge_times_.end());
  if (pass.channel_weight > 1) return merge_alike_partials(pass);
  pass.merge_runs.push_back(merge_times_.size());
  merge_sorted_runs(merge_times_, pass.merge_runs);
  for (uint64_t at : merge_times_)
    pass.end = std::max(pass.end, pass.reduction.submit(at, pass.merge_ps, pass.partial.partial_bytes));
}

// Alike channels: channel 0's merge times (each for every channel: FCFS
// merges of one cost, whose order among equal times changes nothing), then the
// supplied tiles', merged as they are submitted.
void AggregatedPasses::merge_alike_partials(Pass& pass) {
  const size_t channel_end = pass.merge_runs.back();
  size_t i = 0, j = channel_end;
  const uint64_t bytes = pass.partial.partial_bytes;
  while (i < channel_end || j < merge_times_.size()) {
    const bool from_channels = j == merge_times_.size() || (i < channel_end && merge_times_[i] <= merge_times_[j]);
    const uint64_t end = from_channels
                             ? pass.reduction.submit_repeated(merge_times_[i++], pass.merge_ps, bytes, pass.channel_weight)
                             : pass.reduction.submit(merge_times_[j++], pass.merge_ps, bytes);
    pass.end = std::max(pass.end, end);
  }
}

// What each tile's steps need, by tile (the steps visit them in arrival
// order, far apart in the list), set run by run: a run's tiles are alike and
// next to each other in the listing. The byte counters are integers, so they
// are added here, in any order. Tiles before `from_tile` are not set (a
// resumed drain reads none of them).
void AggregatedPasses::cost_steps(Pass& pass, uint64_t from_tile) {
  const PassRequest& r = pass.r;
  const size_t step_tiles = pass.sram_merges ? 0 : pass.tile_count;
  step_bytes_.resize(step_tiles);
  step_compute_ps_.resize(pass.per_channel ? 0 : step_tiles);
  step_dram_ps_.resize(pass.per_channel ? 0 : step_tiles);
  if (step_tiles == 0) return;
  // CENTRALIZED: a tile's bytes depend on where it is, whether it is computed
  // and its size; its compute time on its cycles.
  LastValue<std::tuple<bool, bool, uint32_t>, TileAccount> accounts;
  LastValue<uint64_t, uint64_t> compute_times;
  uint64_t first = 0;
  for (const PassTiles::Run& run : r.tiles.runs) {
    const PlannedTile& tile = r.tiles.tiles[run.first];
    auto fill = [&](std::vector<uint64_t>& v, uint64_t value) {
      const uint64_t begin = std::max(first, std::min(from_tile, first + run.count));
      std::fill(v.begin() + std::ptrdiff_t(begin), v.begin() + std::ptrdiff_t(first + run.count), value);
    };
    if (pass.per_channel) {  // a computed tile's Q comes from DRAM; its partial goes there and back
      const uint64_t q = tile.filter.kept > 0 ? planner_.q_bytes(tile, pass.row_heads, pass.act_bits) : 0;
      fill(step_bytes_, q);
      if (tile.filter.kept > 0) pass.out.dram_bytes += run.count * (q + 2 * pass.partial.partial_bytes);
    } else {
      // A NAND page crosses the bus into DRAM, then all but the page written is
      // read back with Q and the state; a supplied tile is read whole.
      const TileAccount& a = accounts.get({tile.in_flash, tile.filter.kept > 0, tile.entries},
                                          [&] { return planner_.account(tile, pass.row_heads, r.shape, r.work.shape); });
      pass.out.dram_bytes += run.count * a.dram_bytes;
      if (tile.in_flash) pass.out.bus_bytes += run.count * a.bus_bytes;
      const uint64_t read_back = tile.in_flash ? a.dram_bytes - page_bytes_ : a.dram_bytes;
      fill(step_bytes_, read_back);
      fill(step_compute_ps_, compute_times.get(tile.cost.cycles, [&] { return planner_.compute_ps(tile); }));
      fill(step_dram_ps_, pass.dram.occupancy_ps(read_back));
    }
    first += run.count;
  }
}

// The steps' trips through the servers, in the order the kernel would have
// submitted them: by time; of equal times, a queued step's before one a server
// completed, and of two completions, the one whose cause was submitted first.
// The last stage (a merge on the reduction engine, a compute on the central
// SIMD) is its clock's only user and is submitted as its step completes.
void AggregatedPasses::drain_steps(Pass& pass, Checkpoint* keep) {
  if (pass.per_channel) {
    drain_partials(pass);
  } else {
    drain_pages(pass, keep);
  }
}

// CONTROLLER_DRAM: a partial's Q is read from DRAM and the partial written
// there; when written, it is read back for its merge. The read-backs complete
// in DRAM order, so they wait in a FIFO. Steps of one time and Q size go to
// DRAM as one run (each its Q, then its partial), and the read-backs due
// before a step as runs: the same FCFS arithmetic (core::FcfsClock::submit_runs).
void AggregatedPasses::drain_partials(Pass& pass) {
  const uint64_t partial_bytes = pass.partial.partial_bytes;
  const uint64_t partial_ps = pass.dram.occupancy_ps(partial_bytes);
  std::vector<core::Spaced>& written = partials_written_;  // to be read back, from `next` on
  written.clear();
  size_t next = 0;
  auto merge = [&](const core::Spaced& at) {
    for (const core::Spaced& read : pass.dram.submit_runs(at, partial_ps, partial_bytes)) {
      if (read.count == 0) continue;
      const uint64_t merged =
          pass.reduction.submit_spaced(read.first_ps, read.spacing_ps, pass.merge_ps, partial_bytes, read.count);
      pass.end = std::max(pass.end, merged);
    }
  };
  auto merge_before = [&](uint64_t t) {
    for (; next < written.size(); ++next) {
      const uint64_t n = written[next].before(t);
      if (n > 0) merge(written[next].head(n));
      if (n < written[next].count) {
        written[next] = written[next].tail(n);
        return;
      }
    }
  };
  uint64_t at = 0, q_bytes = 0, steps = 0;  // the run of steps being gathered
  auto submit = [&] {
    if (steps == 0) return;
    merge_before(at);
    const uint64_t pair_ps = pass.dram.occupancy_ps(q_bytes) + partial_ps;
    const core::Spaced ends = pass.dram.submit_runs({at, 0, steps}, pair_ps, q_bytes + partial_bytes, 2)[0];
    pass.end = std::max(pass.end, ends.last() - partial_ps);  // the last Q's
    written.push_back(ends);
  };
  steps_->for_each_in_time_order([&](const InputSteps::Step& step, uint32_t tile) {
    if (steps > 0 && step.at_ps == at && step_bytes_[tile] == q_bytes) {
      ++steps;
      return;
    }
    submit();
    at = step.at_ps;
    q_bytes = step_bytes_[tile];
    steps = 1;
  });
  submit();
  merge_before(UINT64_MAX);
}

// Field by field: a Hop built whole on the stack and copied in is read back
// across its separate stores, which stalls every page.
void AggregatedPasses::add_hop(std::vector<Hop>& hops, uint64_t at_ps, uint64_t cause_ps, uint32_t tile) {
  Hop& hop = hops.emplace_back();
  hop.at_ps = at_ps;
  hop.cause_ps = cause_ps;
  hop.tile = tile;
}

// CENTRALIZED: a page crosses the bus (in the order the pages came), is
// written to DRAM, then read back with its Q and state for the central SIMD; a
// supplied tile is read back at the command. The bus is the pages' alone, so
// its transfers come first; DRAM then takes the pages' writes and the
// read-backs. `keep`: where the drain stood before its last NAND run's first read-back, kept.
void AggregatedPasses::drain_pages(Pass& pass, Checkpoint* keep) {
  DrainQueues& q = *drain_;
  q.on_bus.clear();
  q.supplied.clear();
  steps_->for_each_in_time_order([&](const InputSteps::Step& step, uint32_t tile) {
    if (step.kind == InputSteps::kPage) {
      add_hop(q.on_bus, pass.bus.transfer(step.at_ps, page_bytes_), step.at_ps, tile);
    } else {
      add_hop(q.supplied, step.at_ps, step.at_ps, tile);
    }
  });
  const size_t pages = q.on_bus.size();
  add_hop(q.on_bus, UINT64_MAX, UINT64_MAX, 0);
  q.written.assign(pages + 1, Hop{UINT64_MAX, UINT64_MAX, 0});
  q.b = q.w = q.filled = q.s = 0;
  if (!drain_queues(pass, keep ? keep->tail_first : 0, keep ? keep->tail_count : 0)) {
    keep_drain(pass, *keep);
    drain_queues(pass, 0, 0);
  }
}

// The drain from where its queues stand, to its end (true) or to the first
// read-back of one of the `stop_count` pages from `stop_first`, not made. The
// pages' writes and read-backs, which alternate as their times say, take one path.
bool AggregatedPasses::drain_queues(Pass& pass, uint32_t stop_first, uint32_t stop_count) {
  DrainQueues& q = *drain_;
  const std::vector<Hop>& on_bus = q.on_bus;
  const std::vector<Hop>& supplied = q.supplied;
  std::vector<Hop>& written = q.written;
  auto read_back = [&](uint64_t at, uint32_t tile) {
    const uint64_t read = pass.dram.transfer(at, step_bytes_[tile]);
    pass.end = std::max(pass.end, pass.central.submit(read, step_compute_ps_[tile], 0));
  };
  const size_t pages = on_bus.size() - 1;
  const uint64_t page_ps = pass.dram.occupancy_ps(page_bytes_);
  Hop discarded{};
  size_t s = q.s, b = q.b, w = q.w, filled = q.filled;
  bool done = true;
  while (s < supplied.size() || b < pages || w < filled) {
    const Hop& bus = on_bus[b];
    const Hop& dram = written[w];
    // A write is submitted before a read-back of the same time when its page
    // left the flash no later than the read-back's page left the bus.
    const bool write = bus.at_ps < dram.at_ps || (bus.at_ps == dram.at_ps && bus.cause_ps <= dram.cause_ps);
    const uint64_t next = write ? bus.at_ps : dram.at_ps;
    if (s < supplied.size() && supplied[s].at_ps <= next) {
      read_back(supplied[s].at_ps, supplied[s].tile);
      ++s;
      continue;
    }
    const uint32_t tile = write ? bus.tile : dram.tile;
    if (!write && tile - stop_first < stop_count) {
      done = false;
      break;
    }
    const uint64_t done_ps =
        pass.dram.submit(next, write ? page_ps : step_dram_ps_[tile], write ? page_bytes_ : step_bytes_[tile]);
    Hop& out = write ? written[filled] : discarded;
    out.at_ps = done_ps;
    out.cause_ps = next;
    out.tile = tile;
    pass.end = std::max(pass.end, pass.central.submit_if(!write, done_ps, step_compute_ps_[tile], 0));
    filled += write;
    b += write;
    w += !write;
  }
  q.s = s;
  q.b = b;
  q.w = w;
  q.filled = filled;
  return done;
}

// hops[first, last) moved by -minus + plus (those at the end of time stay there).
std::vector<AggregatedPasses::Hop> AggregatedPasses::shifted(const std::vector<Hop>& hops, size_t first, size_t last,
                                                             uint64_t minus, uint64_t plus) {
  std::vector<Hop> out(hops.begin() + std::ptrdiff_t(first), hops.begin() + std::ptrdiff_t(last));
  for (Hop& hop : out) {
    if (hop.at_ps == UINT64_MAX) continue;
    hop.at_ps = hop.at_ps - minus + plus;
    hop.cause_ps = hop.cause_ps - minus + plus;
  }
  return out;
}

// The drain's state and the stream's outcome into `keep`, relative to the stream's start.
void AggregatedPasses::keep_drain(const Pass& pass, Checkpoint& keep) const {
  const uint64_t base = pass.r.stream_start_ps;
  const DrainQueues& q = *drain_;
  keep.taken = true;
  keep.tile_count = pass.tile_count;
  keep.end_ps = pass.end - base;
  keep.queues.on_bus = shifted(q.on_bus, q.b, q.on_bus.size(), base, 0);
  keep.queues.written = shifted(q.written, q.w, q.filled, base, 0);
  keep.queues.supplied = shifted(q.supplied, q.s, q.supplied.size(), base, 0);
  keep.first_tile = keep.tile_count;
  for (const std::vector<Hop>* hops : {&keep.queues.on_bus, &keep.queues.written, &keep.queues.supplied})
    for (const Hop& hop : *hops)
      if (hop.at_ps != UINT64_MAX) keep.first_tile = std::min<uint64_t>(keep.first_tile, hop.tile);
  keep.dram = pass.dram.use().relative_to(base);
  keep.bus = pass.bus.use().relative_to(base);
  keep.central = pass.central.use().relative_to(base);
  keep.channel_last_page_ps = pass.out.channel_last_page_ps;
  for (uint64_t& t : keep.channel_last_page_ps) t = t == 0 ? 0 : t - base;
  keep.dies = pass.out.dies;
}

// The pass from a kept drain: the stream's outcome and the drain's state
// moved to this pass's start, the tiles' costs its own.
void AggregatedPasses::resume_drain(Pass& pass, const Checkpoint& kept) {
  const uint64_t base = pass.r.stream_start_ps;
  ++resumed_;
  scheduled_on_one_channel_ += kept.on_one_channel;
  pass.tile_count = kept.tile_count;
  pass.out.channel_last_page_ps = kept.channel_last_page_ps;
  for (uint64_t& t : pass.out.channel_last_page_ps) t = t == 0 ? 0 : t + base;
  pass.out.dies = kept.dies;
  cost_steps(pass, kept.first_tile);
  pass.dram.continue_from(kept.dram.moved(base));
  pass.bus.continue_from(kept.bus.moved(base));
  pass.central.continue_from(kept.central.moved(base));
  pass.end = kept.end_ps + base;
  DrainQueues& q = *drain_;
  const DrainQueues& from = kept.queues;
  q.on_bus = shifted(from.on_bus, 0, from.on_bus.size(), 0, base);
  q.written = shifted(from.written, 0, from.written.size(), 0, base);
  q.written.resize(q.written.size() + q.on_bus.size(), Hop{UINT64_MAX, UINT64_MAX, 0});
  q.supplied = shifted(from.supplied, 0, from.supplied.size(), 0, base);
  q.b = q.w = q.s = 0;
  q.filled = from.written.size();
  drain_queues(pass, 0, 0);
}

// The pass's end, and every time relative to its stream's start.
void AggregatedPasses::make_relative(Pass& pass) {
  PassOutcome& out = pass.out;
  for (unsigned c = 0; c < channels_; ++c) pass.end = std::max(pass.end, out.channel_last_page_ps[c]);
  for (unsigned c = 0; c < channels_; ++c) pass.end = std::max(pass.end, pass.supplied_end[c]);
  const uint64_t base = pass.r.stream_start_ps;
  out.end_ps = pass.end - base;
  for (uint64_t& t : out.channel_last_page_ps) t = t == 0 ? PassOutcome::kNone : t - base;
  for (uint64_t t : pass.supplied_end) out.supplied_end_ps.push_back(t - base);
  auto use_of = [&](const core::FcfsClock& clock) {
    core::ClockUse use = clock.use();
    use.free_ps = use.requests > 0 ? use.free_ps - base : 0;
    return use;
  };
  out.dram = use_of(pass.dram);
  out.bus = use_of(pass.bus);
  out.central = use_of(pass.central);
  out.reduction = use_of(pass.reduction);
}

}  // namespace ispsim::isp
