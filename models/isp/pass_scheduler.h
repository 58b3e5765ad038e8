// The event-free ("aggregated") timing of an attention pass, the engine's
// second timing model beside its page events (ssd.stream_model = AGGREGATED;
// the SSD gives the engine one at construction, else every pass runs on page
// events). A pass that starts while the gate says the flash is free is
// scheduled here without kernel events: the NAND stream of every channel from
// nand::PipelineSchedule (the dies' programs suspended as reads would), then
// the partials, transfers and merges through local FCFS clocks of the
// reduction engine, controller DRAM, internal bus and central SIMD (the same
// arithmetic as core::Server). The engine applies the outcome and completes the
// pass with one kernel event.
//
// A pass's arithmetic is max and +, so its outcome relative to its stream's
// start follows from its tiles and from the state it starts in, each time
// relative to that start: recent outcomes are kept by that key (within a decode
// step every layer runs an op of the same counts on pages of the same
// channel/die/plane pattern), and most passes are looked up, not scheduled.
// A CENTRALIZED pass of the next decode step differs from its layer's last
// only in its last NAND run (the partly filled token tile): its drain goes on
// from where the last one's stood before that run's first read-back.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "models/core/server.h"
#include "models/isp/attention_planner.h"
#include "models/isp/attention_work.h"
#include "models/nand/aggregated_stream.h"
#include "models/nand/flash_array.h"

namespace ispsim::isp {

// The pass the engine asks for: its tiles, their counts per channel, and when
// its stream started (earlier than the command when prefetched) and its command came.
struct PassRequest {
  const AttentionWork& work;
  const AttentionShape& shape;
  const PassTiles& tiles;
  uint64_t nand_tiles = 0;                          // the first nand_tiles of the listing are the stream
  const std::vector<uint64_t>& channel_pages_left;  // by channel
  uint64_t stream_start_ps = 0;
  uint64_t command_ps = 0;
  const std::vector<uint64_t>& die_ready;  // by channel x die, from claim_dies()
};

// What a pass does to the engine and the models around it; times relative to
// its stream's start.
struct PassOutcome {
  static constexpr uint64_t kNone = UINT64_MAX;
  uint64_t end_ps = 0;
  std::vector<uint64_t> channel_last_page_ps;  // kNone: the channel had no page
  std::vector<uint64_t> supplied_end_ps;       // by channel
  std::vector<uint8_t> mode_set;               // simd_mode signals set at the command
  nand::DieUse dies;
  uint64_t dram_bytes = 0, bus_bytes = 0;
  core::ClockUse dram, bus, central, reduction;  // requests = 0: not booked
};

// The servers a pass uses besides the flash.
struct PassServers {
  core::Server& dram;
  core::Server& bus;
  core::Server& central_simd;
  core::Server& reduction_engine;
};

class AggregatedPasses {
 public:
  // `gate`: whether the flash is free for an event-free stream now. The
  // references must outlive this object; `mode_signals` is the engine's count
  // of simd_mode signals (channels, or 1 when centralized).
  AggregatedPasses(nand::FlashArray& flash, const KvPlacement& placement, const AttentionPlanner& planner,
                   PassServers servers, size_t mode_signals, std::function<bool()> gate);
  ~AggregatedPasses();

  bool flash_free() const { return gate_(); }
  // Claims the dies the pass's stream reads, from `now_ps`: a program under way
  // on one is suspended (or waited for) as a read request would
  // (nand::FlashArray::claim_for_stream). When each die (channel x die) may sense.
  std::vector<uint64_t> claim_dies(const PassTiles& tiles, uint64_t now_ps);
  // The pass's outcome, looked up (`*reused` true) or scheduled; valid until the next call.
  const PassOutcome& outcome(const PassRequest& request, bool* reused);
  // Of the passes scheduled: those whose channels were alike (channel 0 scheduled for all).
  uint64_t scheduled_on_one_channel() const { return scheduled_on_one_channel_; }
  // Of the passes scheduled: those resumed from a kept drain.
  uint64_t resumed() const { return resumed_; }

 private:
  struct Key;
  class Memo;
  class InputSteps;
  // A step between two servers: when it reaches the next, when its cause
  // reached the previous one (the order of ties), its tile.
  struct Hop {
    uint64_t at_ps, cause_ps;
    uint32_t tile;
  };
  struct Pass;
  struct DrainQueues;
  struct Checkpoint;
  class Checkpoints;
  struct KeyPrefixes;
  // The request's key, the last `tail_pages` tiles of run `tail_run` (the
  // whole run when fewer) in it only as far as its NAND stream goes (their
  // count and place: not their sizes and cycles).
  void key_of(const PassRequest& request, size_t tail_run, uint64_t tail_pages, Key& key) const;
  PassOutcome schedule(const PassRequest& request);
  uint64_t tile_time(Pass& pass, const PlannedTile& tile) const;
  void schedule_supplied(Pass& pass);
  void schedule_stream(Pass& pass);
  bool channels_alike(const Pass& pass) const;
  void schedule_alike_channels(Pass& pass);
  void take_channel_pages(Pass& pass, unsigned channel, uint32_t shift, const std::vector<uint32_t>* places);
  void queue_supplied_steps(Pass& pass);
  void merge_partials(Pass& pass);
  void merge_alike_partials(Pass& pass);
  void cost_steps(Pass& pass, uint64_t from_tile);
  void drain_steps(Pass& pass, Checkpoint* keep);
  void drain_partials(Pass& pass);
  void drain_pages(Pass& pass, Checkpoint* keep);
  bool drain_queues(Pass& pass, uint32_t stop_first, uint32_t stop_count);
  void keep_drain(const Pass& pass, Checkpoint& keep) const;
  void resume_drain(Pass& pass, const Checkpoint& kept);
  static void add_hop(std::vector<Hop>& hops, uint64_t at_ps, uint64_t cause_ps, uint32_t tile);
  static std::vector<Hop> shifted(const std::vector<Hop>& hops, size_t first, size_t last, uint64_t minus,
                                  uint64_t plus);
  void make_relative(Pass& pass);

  nand::FlashArray& flash_;
  const KvPlacement& placement_;
  const AttentionPlanner& planner_;
  const PassServers servers_;
  const size_t mode_signals_;
  const std::function<bool()> gate_;
  const unsigned channels_;
  const uint32_t page_bytes_;

  nand::PipelineSchedule schedule_;
  std::unique_ptr<Memo> memo_;
  std::unique_ptr<Checkpoints> checkpoints_;
  std::unique_ptr<KeyPrefixes> key_prefixes_;
  std::unique_ptr<Key> key_;  // the last key made (its vectors keep their storage)
  uint64_t scheduled_on_one_channel_ = 0, resumed_ = 0;
  // Scratch buffers kept across passes (reused, not reallocated).
  std::unique_ptr<InputSteps> steps_;
  std::vector<core::Spaced> partials_written_;  // CONTROLLER_DRAM: when the partials are in DRAM, in runs
  std::unique_ptr<DrainQueues> drain_;
  std::vector<nand::PageAddress> stream_pages_;
  std::vector<uint64_t> stream_page_ps_;       // PER_CHANNEL: each page's accelerator time
  std::vector<uint8_t> stream_page_computed_;  // whether the page has a kept token
  std::vector<uint32_t> stream_page_place_;    // alike channels: channel 0's pages' places in the listing
  std::vector<uint64_t> merge_times_;
  std::vector<uint64_t> step_bytes_;       // by tile: DRAM bytes of its Q (PER_CHANNEL) or read-back
  std::vector<uint64_t> step_compute_ps_;  // by tile: central SIMD time (CENTRALIZED)
  std::vector<uint64_t> step_dram_ps_;     // by tile: DRAM time of its read-back (CENTRALIZED)
};

}  // namespace ispsim::isp
