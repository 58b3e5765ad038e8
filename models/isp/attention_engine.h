// Runs one attention op on the flash (MemLLM Sec. IV-V): reads the op's KV pages
// from NAND, filters and computes them on the Elastic-SIMD(s), reduces the
// partial outputs, and calls `done` when O_final is ready in the controller.
// PCIe (the command, Q, mask and O transfers) is the caller's business.
//
// Which KV an op sees (AttentionWork):
//   - precomputed positions [0, context_tokens) of `layer` (read from flash), with
//     the HKVD mask's substitutes (recomputed entries) in place of the set bits;
//   - the layer's appended entries (append order, see stream_filter.h):
//     indices [0, appended_tokens_in_flash) are read from the appended region,
//     the next appended_tokens_supplied came with the command (already on chip).
// The query rows are the LAST `query_rows` entries of the appended sequence
// (HKVD rows at the mask's positions, then own tokens at C, C+1, ...): the
// recomputation pass (rows = H), the query prefill (rows = Qn), the fused
// prefill (rows = H + Qn), a decode step (rows = 1) and a full prefill
// (context 0, rows = P) all follow this rule. With `causal`, a row sees the
// positions <= its own.
//
// The accelerator is a PageCompute (page_compute.h: the Elastic-SIMD or a
// plug-in, chosen by modules.isp_accelerator): it costs each tile (cycles,
// MACs, scratchpad traffic, energy) and picks the op's mode; the engine never
// asks which accelerator it has.
//
// PER_CHANNEL (MemLLM-PerCh, MemLLM): a nand::StreamReader (PIPELINED, the
// precomputed-KV buffers of the scratchpad) per engine; each channel's consumer
// time for a page = the accelerator's cycles for the tile (elastic_simd.h:
// Stream Filter + Elastic-SIMD),
// at least the time to bring the page's Q rows (GLOBAL_SRAM: from the Q
// broadcast buffer at sram_bytes_per_cycle; CONTROLLER_DRAM: from controller
// DRAM at 1/channels of its bandwidth, a fair-share approximation; the bytes go
// through the DRAM server when the page is done). Supplied tiles (own tokens that
// came with the command; tile k -> channel k mod C) are computed first, while the
// first pages are sensed. Every page emits a partial (lse_reduction.h):
//   GLOBAL_SRAM: merged by the LSE engine (a core::Server: occupancy
//     n*ceil(d/lanes) cycles, latency lse_pipeline_cycles) as the page finishes;
//   CONTROLLER_DRAM: written to controller DRAM, read back, then merged.
// CENTRALIZED (MemLLM-Base, MemLLM-Fused): one accelerator in the controller.
// Each page, once out of its channel, crosses the internal bus, is written to
// controller DRAM, and read back with its Q rows and the running (O, m, l) of its
// row-heads (read and written back) before the central SIMD (a core::Server)
// computes it; the channels' page buffers free as soon as the page is on the bus
// queue (controller DRAM absorbs the backlog).
// GLOBAL_SRAM row chunks (Q_fused or O_final larger than its buffer): one full
// pass over the pages per chunk (lse_reduction.h).
//
// Where the time goes (per op, summed in the statistics): ISP compute time =
// the accelerator time (PageCompute cycles of its tiles) of the busiest
// channel's tiles (PER_CHANNEL) or of all tiles (CENTRALIZED), over all passes;
// NAND stream time = the time the flash alone needs to deliver the op's pages
// with infinitely fast accelerators, per pass tR + tPage1 + (n - 1) x
// max(tPage, t_sense / (dies_per_channel x planes_per_die)) for the channel with
// the most pages n (tPage1: the bus time of a sense's first page, tPage: a
// page's averaged over the planes of a multi-plane sense; t_sense = tR with
// cache read, tR + tPage without), summed
// over passes; op time = the command's start to O_final ready (a prefetched
// op's early reads are not counted).
// An op is compute-bound when its ISP compute time exceeds its NAND stream
// time. With a timeline, one span per op on "<name>.ops" names both.
//
// Energy (per op, to the ledger): per channel "<name>.ch<c>" (PER_CHANNEL) or
// "<name>.central" (CENTRALIZED) = the accelerator's energy of its tiles (MACs,
// exps, vector ops, scratchpad traffic) + NAND pages written into the scratchpad;
// "<name>.reduction" = LSE merges (+ global SRAM: Q broadcast reads, O buffer
// read/write, with GLOBAL_SRAM). Static power is declared at
// construction: channels x the accelerator's static power (1 for CENTRALIZED) and,
// with GLOBAL_SRAM, FlashCoordinatorParams.static_power_w.
// NAND, DRAM and bus energies belong to their own models.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <systemc>
#include <vector>

#include "models/core/energy_ledger.h"
#include "models/core/server.h"
#include "models/core/stats.h"
#include "models/core/timeline.h"
#include "models/core/vcd.h"
#include "models/isp/attention_planner.h"
#include "models/isp/attention_work.h"
#include "models/isp/isp_config.h"
#include "models/isp/lse_reduction.h"
#include "models/isp/pass_scheduler.h"
#include "models/isp/page_compute.h"
#include "models/isp/stream_filter.h"
#include "models/isp/tiling.h"
#include "models/nand/flash_array.h"
#include "models/nand/stream_reader.h"
#include "traces/trace.pb.h"

namespace ispsim::isp {

class AttentionEngine : public sc_core::sc_module {
 public:
  // `placement`, `flash`, the servers and the ledger must outlive the engine.
  // `ledger` may be null (no energy recorded). `isp` holds the scratchpad's and
  // the Stream Filter's parameters; `compute` is the accelerator (one per
  // channel, or the central one: all alike).
  AttentionEngine(sc_core::sc_module_name name, nand::FlashArray& flash, const KvPlacement& placement,
                  const IspConfig& isp, std::unique_ptr<const PageCompute> compute,
                  const CoordinatorConfig& coordinator,
                  Organization organization, Reduction reduction, core::Server& controller_dram,
                  core::Server& internal_bus, core::EnergyLedger* ledger);
  ~AttentionEngine() override;

  // Starts one op at the current simulated time; `done` runs when O_final is in
  // the controller. One op at a time (std::logic_error otherwise). Throws
  // BadInput("attention layer <l>", ...) for an inconsistent op (mask length,
  // rows beyond the appended entries, tokens beyond the placement's regions,
  // a shape other than the placement's).
  // `done` receives the op's traffic.
  void run(CheckedAttention op, std::function<void(const AttentionTraffic&)> done);
  void run(const AttentionWork& work, std::function<void()> done) {
    run(check(work), [done = std::move(done)](const AttentionTraffic&) {
      if (done) done();
    });
  }
  // Inter-layer prefetch: starts reading the pages of `work`'s first pass now,
  // into the scratchpad buffers only (the accelerators are held: nothing is
  // computed, the channels stop when the buffers are full), before its command
  // has arrived. run() with the same layer, context and appended entries in
  // flash then continues that stream instead of starting one; any other run()
  // is a programming error (std::logic_error), as is a prefetch while an op is
  // under way. Supplied tiles and page times are scheduled from run()'s time.
  void prefetch(CheckedAttention op);
  void prefetch(const AttentionWork& work) { prefetch(check(work)); }
  bool prefetched() const;
  // The op's checks (BadInput as described at run()), made once: the result is
  // what run(), prefetch(), plan() and pass_tiles() take.
  CheckedAttention check(const AttentionWork& work) const { return planner_.check(work); }
  // The counts run() will make, without simulating.
  AttentionPlan plan(const CheckedAttention& op) const { return planner_.plan(op); }
  AttentionPlan plan(const AttentionWork& work) const { return plan(check(work)); }
  // The tiles of pass `pass` (0 .. plan().passes - 1); `with_tokens` lists the
  // filtered tokens of every tile (functional use).
  PassTiles pass_tiles(const CheckedAttention& op, uint64_t pass, bool with_tokens = false) const {
    return planner_.pass_tiles(op, pass, with_tokens);
  }
  PassTiles pass_tiles(const AttentionWork& work, uint64_t pass, bool with_tokens = false) const {
    return pass_tiles(check(work), pass, with_tokens);
  }

  // Aggregated streaming mode (ssd.stream_model = AGGREGATED, chosen once by
  // the SSD): a pass (or a prefetch) that starts while `gate` says the flash is
  // free is scheduled without page events (pass_scheduler.h) and completes with
  // one kernel event; other passes stay page-accurate. Without it, every pass
  // runs on page events.
  void use_aggregated_passes(std::function<bool()> gate);
  bool aggregated() const { return aggregated_ != nullptr; }
  uint64_t aggregated_passes() const { return aggregated_passes_.value(); }
  // Of aggregated_passes(): passes whose tiles (as far as timing goes) and
  // starting state (relative to their stream's start) equal those of a recent
  // one, so that they take its outcome shifted in time, not a new schedule.
  uint64_t reused_passes() const { return reused_passes_.value(); }
  // Of the scheduled ones: passes whose channels were alike, scheduled on channel 0 for all (not a statistic).
  uint64_t passes_scheduled_on_one_channel() const;
  // Of the scheduled ones: passes resumed from the kept drain of one alike before its tail (not a statistic).
  uint64_t passes_resumed() const;

  const AttentionPlanner& planner() const { return planner_; }


  bool busy() const { return active_; }
  Organization organization() const { return organization_; }
  Reduction reduction() const { return reduction_; }
  const KvPlacement& placement() const { return placement_; }
  nand::StreamReader& reader() { return *reader_; }
  core::Server& reduction_engine() { return *reduction_engine_; }
  core::Server& central_simd() { return *central_simd_; }

  // Totals over all ops (also registered as statistics under <name>).
  uint64_t ops() const { return ops_.value(); }
  uint64_t pages_read() const { return pages_read_.value(); }
  uint64_t bytes_read() const { return pages_read_.value() * page_bytes_; }
  uint64_t pages_computed() const { return pages_computed_.value(); }  // NAND pages through a SIMD
  uint64_t bytes_consumed() const { return pages_computed_.value() * page_bytes_; }
  uint64_t tokens_kept() const { return tokens_kept_.value(); }
  uint64_t tokens_dropped() const { return tokens_dropped_.value(); }
  uint64_t tokens_substituted() const { return tokens_substituted_.value(); }
  uint64_t macs() const { return macs_.value(); }
  uint64_t dram_bytes() const { return dram_bytes_.value(); }
  uint64_t bus_bytes() const { return bus_bytes_.value(); }
  // Where the time goes, summed over ops (see above).
  sc_core::sc_time isp_compute_time() const { return sc_core::sc_time::from_value(isp_compute_ps_); }
  sc_core::sc_time nand_stream_time() const { return sc_core::sc_time::from_value(nand_stream_ps_); }
  // Of isp_compute_time(): the same accelerator's exposed SRAM I/O (TileCost::sram_io_cycles).
  sc_core::sc_time isp_sram_io_time() const { return sc_core::sc_time::from_value(isp_sram_io_ps_); }
  sc_core::sc_time op_time() const { return sc_core::sc_time::from_value(op_time_ps_); }
  uint64_t compute_bound_ops() const { return compute_bound_ops_.value(); }
  // The NAND stream time of a pass whose busiest channel reads `pages` pages.
  sc_core::sc_time nand_stream_time(uint64_t pages) const;
  sc_core::sc_time simd_busy(ComputeMode mode) const;
  uint64_t sram_io_cycles() const { return sram_io_cycles_; }  // summed over tiles computed
  const PageCompute& compute() const { return *compute_; }

  // Waveforms: <name>.ch<c>.simd_mode (0 idle, 1 + the accelerator's mode index;
  // e.g. 1 broadside, 2 cascaded) per channel (PER_CHANNEL) or
  // <name>.central.simd_mode; the reader's scratchpad occupancy
  // (<name>.reader.consumerN.occupancy); <name>.reduction.outstanding.
  void trace(vcd::Writer& writer);
  // The names of simd_mode values of an accelerator, for the waveform (GTKWave
  // filter "simd_mode"), the README and the simd_busy_<name> statistics;
  // simd_mode_value() encodes.
  static vcd::Encoding simd_mode_encoding(const PageCompute& compute);
  static uint64_t simd_mode_value(ComputeMode mode) { return uint64_t(mode) + 1; }
  // Records, per pass of every op, one span per channel on track "<name>.ch<c>":
  // from the start of the pass to the channel's last page done. Null: none.
  void set_timeline(core::Timeline* timeline) { timeline_ = timeline; }

 private:
  struct Op;
  using Shape = AttentionShape;
  // Makes the checked op `op`'s.
  static void take_work(Op& op, CheckedAttention checked);
  // The current op's pass `op.pass`, listed unless aggregated.
  PassTiles current_tiles(bool listed) const;
  // Bytes moved by the current op: its traffic and the engine's totals.
  void count_pages(uint64_t pages);
  void count_dram(uint64_t bytes);
  void count_bus(uint64_t bytes);
  void start_pass();
  void prepare_pass();
  struct ChargedPrefix;
  ChargedPrefix charged_so_far(const PlannedTile* pending, uint64_t pending_count) const;
  void start_stream(bool held);
  void run_pass_aggregated(uint64_t stream_start_ps);
  void apply_pass(const PassOutcome& outcome, uint64_t stream_start_ps, uint64_t start_ps);
  void on_aggregated_pass_done();
  void schedule_supplied();
  void on_page_done(const nand::PageAddress& page, uint32_t index, const sc_core::sc_time& done_at);
  void on_supplied_done();
  void on_step();
  // What computing a tile of the current pass charges (identical tiles, the same).
  struct TileCharges;
  TileCharges charges_of(const PlannedTile& tile) const;
  void tile_computed(const PlannedTile& tile);
  // `count` tiles like `first` on the channels after its own: their counts,
  // then their charges.
  void count_tiles(const PlannedTile& first, uint64_t count);
  void charge_tiles(const PlannedTile& first, uint64_t count, const TileCharges& charges);
  void emit_partial(const PlannedTile& tile);
  void piece_done();
  void check_pass_done();
  sc_core::sc_time page_time(const nand::PageAddress& page, uint32_t index);

  nand::FlashArray& flash_;
  const KvPlacement& placement_;
  const Organization organization_;
  const Reduction reduction_;
  core::Server& dram_;
  core::Server& bus_;
  core::EnergyLedger* ledger_;
  core::Timeline* timeline_ = nullptr;
  const std::unique_ptr<const PageCompute> compute_;
  const vcd::Encoding mode_encoding_;
  const uint32_t page_bytes_;
  const unsigned channels_;
  const AttentionPlanner planner_;

  std::unique_ptr<nand::StreamReader> reader_;
  std::unique_ptr<core::Server> reduction_engine_;
  std::unique_ptr<core::Server> central_simd_;
  std::unique_ptr<Op> op_;
  bool active_ = false;
  sc_core::sc_event supplied_event_;
  sc_core::sc_event step_event_;  // delta: next pass or op completion, outside reader callbacks
  std::unique_ptr<AggregatedPasses> aggregated_;  // null: every pass on page events
  // On any placement: a pass's runs of pages follow each other in the layout
  // (an FTL's fragments start runs of their own, AttentionPlanner::tiles_of()).
  bool may_aggregate() const { return aggregated_ && aggregated_->flash_free(); }
  sc_core::sc_event aggregated_event_;  // the end of an aggregated pass

  // By layer: what prepare_pass() counts of a borrowed listing's runs but its
  // last (PassTiles::borrowed_runs), kept while passes borrow it alike.
  struct StreamPrefix {
    uint64_t nand_tiles = 0, rounds = 0;
    std::vector<uint64_t> channel_pages;  // of runs that are not whole rounds of the channels
  };
  BorrowedPrefixes<StreamPrefix> stream_prefixes_;
  // By layer: what on_aggregated_pass_done() counts and charges of those runs
  // in an op's first pass (whose sums start at zero).
  BorrowedPrefixes<std::shared_ptr<const ChargedPrefix>> charged_prefixes_;

  std::vector<uint64_t> simd_busy_ps_;  // by mode
  uint64_t sram_io_cycles_ = 0;
  uint64_t isp_compute_ps_ = 0, isp_sram_io_ps_ = 0, nand_stream_ps_ = 0, op_time_ps_ = 0;
  std::vector<vcd::Signal> mode_signals_;  // per channel, or one (CENTRALIZED)

  // Statistics under <name>: each counter is declared once, here, and counted
  // where the event happens; formulas (attention_engine.cc) only for derived values.
  stats::Group stats_;
  stats::Counter& ops_ = stats_.counter("ops", "count", "attention ops run");
  stats::Counter& pages_read_ = stats_.counter("pages_read", "count", "KV pages read from NAND");
  stats::Counter& pages_computed_ = stats_.counter("pages_computed", "count", "NAND pages processed by an Elastic-SIMD");
  stats::Counter& tokens_kept_ =
      stats_.counter("tokens_kept", "count", "KV entries (token x KV head) computed, substitutes included");
  stats::Counter& tokens_dropped_ =
      stats_.counter("tokens_dropped", "count", "KV entries no query row can see (Stream Filter)");
  stats::Counter& tokens_substituted_ =
      stats_.counter("tokens_substituted", "count", "precomputed entries replaced by their recomputed entry");
  stats::Counter& macs_ = stats_.counter("macs", "count", "FP16 multiply-accumulates");
  stats::Counter& compute_bound_ops_ =
      stats_.counter("compute_bound_ops", "count", "ops whose ISP compute time exceeds their NAND stream time");
  stats::Counter& aggregated_passes_ = stats_.counter(
      "aggregated_passes", "count", "passes scheduled without page events (ssd.stream_model = AGGREGATED, flash quiet)");
  stats::Counter& reused_passes_ = stats_.counter(
      "aggregated_passes_reused", "count",
      "of aggregated_passes: passes whose outcome was that of a recent pass with the same tiles and start");
  stats::Counter& dram_bytes_ =
      stats_.counter("dram_bytes", "bytes", "controller DRAM bytes moved by attention, both directions");
  stats::Counter& bus_bytes_ =
      stats_.counter("bus_bytes", "bytes", "internal bus bytes moved by attention (centralized)");
};

}  // namespace ispsim::isp
