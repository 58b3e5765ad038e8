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
// with infinitely fast accelerators, per pass tR + tOut + (n - 1) x
// max(tOut, t_sense / (dies_per_channel x planes_per_die)) for the channel with
// the most pages n (t_sense = tR with cache read, tR + tOut without), summed
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
#include "models/isp/isp_config.h"
#include "models/isp/lse_reduction.h"
#include "models/isp/page_compute.h"
#include "models/isp/stream_filter.h"
#include "models/isp/tiling.h"
#include "models/nand/flash_array.h"
#include "models/nand/pipeline_schedule.h"
#include "models/nand/stream_reader.h"
#include "traces/trace.pb.h"

namespace ispsim::isp {

// One attention op, the one type from the host runtime (platforms/systems/
// runtime.h) through the NVMe command to this engine. The engine reads the
// fields up to `causal`; the command's operand sizes are what crosses PCIe
// (link::Nvme::fused_attention) and do not change the engine's work.
struct AttentionWork {
  uint32_t layer = 0;
  uint64_t query_rows = 0;
  trace::ModelShape shape;
  uint64_t context_tokens = 0;                  // precomputed positions [0, C) read from flash
  const trace::BitVector* hkvd_mask = nullptr;  // nullable; bit_length == context_tokens
  uint64_t appended_tokens_in_flash = 0;        // read from the appended region (HKVD substitutes included)
  uint64_t appended_tokens_supplied = 0;        // came with the command, already on chip
  bool causal = true;

  // The fused command's operands, bytes (set by the runtime).
  uint64_t hkvd_tokens = 0;        // set bits of the mask: substitutes in the appended region
  uint64_t supplied_kv_bytes = 0;  // KV of the supplied entries
  uint64_t mask_bytes = 0, q_bytes = 0, output_bytes = 0;
};

enum class Organization { CENTRALIZED, PER_CHANNEL };
enum class Reduction { CONTROLLER_DRAM, GLOBAL_SRAM };
const char* to_string(Organization organization);
const char* to_string(Reduction reduction);

// What check() derives from an op: its shape, row chunks and mode.
struct AttentionShape {
  std::string where;             // "attention layer <l>", for errors
  uint32_t group = 1;            // g = heads / kv_heads
  uint32_t head_dim = 0;
  uint32_t kv_bits = 0;
  uint32_t act_bits = 0;
  uint64_t substitutes = 0;      // H
  uint64_t appended_total = 0;   // A = in flash + supplied
  uint64_t passes = 1;
  uint64_t rows_per_pass = 0;
  ComputeMode mode = 0;
};

// An op checked against the engine's placement, with its own copy of the HKVD
// mask (the caller's need not outlive it). Only AttentionEngine::check() makes
// one; run(), prefetch(), plan() and pass_tiles() take it, so an op is checked
// once however many of them see it.
class CheckedAttention {
 public:
  const AttentionWork& work() const { return work_; }
  const AttentionShape& shape() const { return shape_; }

 private:
  friend class AttentionEngine;
  CheckedAttention() = default;
  AttentionWork work_;  // hkvd_mask points into mask_ (or is null)
  std::shared_ptr<const trace::BitVector> mask_;
  AttentionShape shape_;
  std::shared_ptr<const StreamFilter> filter_;  // over mask_; each pass copies it with its rows
};

// The bytes one op moved (a prefetch's pages included), counted where they move
// (NAND pages delivered, controller DRAM and internal bus bytes): what the SSD
// charges the op's NAND, DRAM and bus energy from, instead of differencing the
// engine's totals around the op.
struct AttentionTraffic {
  uint64_t pages_read = 0;
  uint64_t dram_bytes = 0;
  uint64_t bus_bytes = 0;
};

// What one op costs, known before it runs (used by run() and by tests).
struct AttentionPlan {
  uint64_t passes = 1;           // row chunks (GLOBAL_SRAM buffers)
  uint64_t rows_per_pass = 0;
  ComputeMode mode = 0;          // index into the accelerator's modes()
  uint64_t pages_per_pass = 0;   // NAND pages the first pass reads (later passes' rows may see more)
  uint64_t pages_read = 0;       // NAND pages read over all passes
  uint64_t supplied_tiles = 0;   // on-chip tiles of supplied own tokens, per pass
  uint64_t tokens_kept = 0;      // over all passes
  uint64_t tokens_substituted = 0;
  uint64_t tokens_dropped = 0;
  uint64_t macs = 0;
  uint64_t simd_cycles = 0;      // accelerator cycles summed over pages and tiles
  uint64_t sram_io_cycles = 0;   // of which exposed scratchpad / SRAM traffic
  uint64_t partials = 0;         // partial outputs merged
  uint64_t reduction_cycles = 0; // LSE occupancy summed
  uint64_t dram_bytes = 0;       // controller DRAM bytes, both directions
  uint64_t bus_bytes = 0;        // internal bus bytes (CENTRALIZED)
  double energy_pj = 0;          // accelerator + coordinator dynamic energy
};

// One tile of a pass: a NAND page of the op's stream, or an on-chip tile of own
// tokens that came with the command. The timing model and the numerical check
// (tests/models/isp) walk the same list.
struct PlannedTile {
  bool in_flash = true;            // false: supplied with the command
  trace::KvRegion region = trace::KV_REGION_UNSPECIFIED;
  nand::PageAddress address;       // in_flash only
  unsigned channel = 0;            // channel whose accelerator computes it
  uint32_t kv_head = 0;
  uint64_t first_entry = 0;        // position (precomputed) or append index (appended)
  uint32_t entries = 0;
  FilterResult filter;             // counts (tokens listed when asked for)
  TileCost cost;                   // the accelerator's cost of the tile
};

// The rows and tiles of one pass (row chunk).
struct PassTiles {
  uint64_t first_row = 0;            // index among the op's query rows
  uint64_t rows = 0;
  std::vector<uint64_t> row_positions;  // token position of each row of the pass
  uint64_t row_heads_per_tile = 0;   // rows x heads / kv_heads
  std::vector<PlannedTile> tiles;    // NAND pages in stream order, then supplied tiles
  // Consecutive tiles alike in all but their place (KV head, address,
  // channel): a pass is mostly full pages of one cost. A run's tiles are on
  // consecutive channels (mod the channels; all on 0 when centralized and supplied).
  struct Run {
    size_t first = 0;  // index in tiles
    uint64_t count = 0;
  };
  std::vector<Run> runs;
  // False: `tiles` holds each run's first tile only (all an aggregated pass
  // needs, looked up or scheduled: see for_each_tile()).
  bool listed = true;
};

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
  CheckedAttention check(const AttentionWork& work) const;
  // The counts run() will make, without simulating.
  AttentionPlan plan(const CheckedAttention& op) const;
  AttentionPlan plan(const AttentionWork& work) const { return plan(check(work)); }
  // The tiles of pass `pass` (0 .. plan().passes - 1); `with_tokens` lists the
  // filtered tokens of every tile (functional use).
  PassTiles pass_tiles(const CheckedAttention& op, uint64_t pass, bool with_tokens = false) const;
  PassTiles pass_tiles(const AttentionWork& work, uint64_t pass, bool with_tokens = false) const {
    return pass_tiles(check(work), pass, with_tokens);
  }

  // Aggregated streaming mode (ssd.stream_model = AGGREGATED): a pass (or a
  // prefetch) that starts while the aggregation gate says the flash is free is
  // scheduled without page events (nand::PipelineSchedule for the NAND stream,
  // the dies' programs suspended as reads would; local FCFS clocks for the
  // partials, transfers and merges) and completes with one kernel event; other
  // passes stay page-accurate. Default off.
  void set_aggregated(bool aggregated) { aggregated_ = aggregated; }
  // Whether the flash is free for an aggregated stream now (default:
  // nand::FlashArray::quiet()); the SSD also lets one start over programs
  // whose pages are all issued (they are suspended for it).
  void set_aggregation_gate(std::function<bool()> gate) { aggregation_gate_ = std::move(gate); }
  bool aggregated() const { return aggregated_; }
  uint64_t aggregated_passes() const { return aggregated_passes_.value(); }
  // Of aggregated_passes(): passes whose tiles (as far as timing goes) and
  // starting state (relative to their stream's start) equal those of a recent
  // one, so that they take its outcome shifted in time, not a new schedule.
  uint64_t reused_passes() const { return reused_passes_.value(); }

  // The IspParams fields the engine itself reads (the scratchpad's page
  // buffers), whichever accelerator it has; see PageCompute::parameters().
  static const std::vector<std::string>& isp_parameters();

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
  PassTiles tiles_of(const AttentionWork& work, const Shape& shape, const StreamFilter& op_filter, uint64_t pass,
                     bool with_tokens, bool listed = true) const;
  // The tiles of `pass`'s runs [first_run, end_run), in list order, whether the
  // pass is listed or not: visit(tile, index, address, channel) with `tile` its
  // run's first (alike in all but place) and `index` its place in the listing.
  template <typename Visit>
  void for_each_tile(const PassTiles& pass, size_t first_run, size_t end_run, uint64_t first_index,
                     Visit visit) const;
  uint64_t q_bytes(const PlannedTile& tile, uint64_t row_heads, uint32_t act_bits) const;
  uint64_t compute_ps(const PlannedTile& tile) const;
  uint64_t page_time_ps(const PlannedTile& tile, uint64_t row_heads, uint32_t act_bits) const;
  // Bytes moved by the current op: its traffic and the engine's totals.
  void count_pages(uint64_t pages);
  void count_dram(uint64_t bytes);
  void count_bus(uint64_t bytes);
  void start_pass();
  void prepare_pass();
  void start_stream(bool held);
  void run_pass_aggregated(uint64_t stream_start_ps);
  struct PassKey;
  struct PassOutcome;
  PassKey pass_key(uint64_t stream_start_ps, uint64_t start_ps, const std::vector<uint64_t>& die_ready) const;
  PassOutcome schedule_pass(uint64_t stream_start_ps, uint64_t start_ps, const std::vector<uint64_t>& die_ready);
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
  // `count` tiles like `first` on the channels after its own.
  void tiles_computed(const PlannedTile& first, uint64_t count, const TileCharges& charges);
  void emit_partial(const PlannedTile& tile);
  void piece_done();
  void check_pass_done();
  sc_core::sc_time page_time(const nand::PageAddress& page, uint32_t index);

  nand::FlashArray& flash_;
  const KvPlacement& placement_;
  const IspConfig isp_;
  const CoordinatorConfig coordinator_;
  const Organization organization_;
  const Reduction reduction_;
  core::Server& dram_;
  core::Server& bus_;
  core::EnergyLedger* ledger_;
  core::Timeline* timeline_ = nullptr;
  const std::unique_ptr<const PageCompute> compute_;
  const vcd::Encoding mode_encoding_;
  const LseReduction lse_;
  const uint32_t page_bytes_;
  const unsigned channels_;

  std::unique_ptr<nand::StreamReader> reader_;
  std::unique_ptr<core::Server> reduction_engine_;
  std::unique_ptr<core::Server> central_simd_;
  std::unique_ptr<Op> op_;
  mutable PassTiles spare_;  // a finished pass's storage, see tiles_of()
  struct Checked {  // the last mask check() copied for a layer, and its filter
    std::shared_ptr<const trace::BitVector> mask;
    std::shared_ptr<const StreamFilter> filter;
    uint64_t context_tokens = 0;
    bool causal = true;
  };
  mutable std::vector<Checked> last_checked_;  // by layer
  void recycle(PassTiles& tiles);
  bool active_ = false;
  sc_core::sc_event supplied_event_;
  sc_core::sc_event step_event_;  // delta: next pass or op completion, outside reader callbacks
  bool aggregated_ = false;
  std::function<bool()> aggregation_gate_;
  bool may_aggregate() const { return aggregated_ && (aggregation_gate_ ? aggregation_gate_() : flash_.quiet()); }
  void claim_dies(uint64_t now_ps);
  std::unique_ptr<nand::PipelineSchedule> schedule_;
  class StepQueue;
  // The aggregated pass's step queue and per-page arrays, kept to reuse their buffers.
  std::unique_ptr<StepQueue> steps_;
  std::vector<nand::PageAddress> stream_pages_;
  std::vector<uint64_t> stream_page_ps_;       // PER_CHANNEL: each page's accelerator time
  std::vector<uint8_t> stream_page_computed_;  // whether the page has a kept token
  std::vector<uint64_t> merge_times_;
  std::vector<uint64_t> step_bytes_;       // by tile: DRAM bytes of its Q (PER_CHANNEL) or read-back
  std::vector<uint64_t> step_compute_ps_;  // by tile: central SIMD time (CENTRALIZED)
  class PassMemo;
  std::unique_ptr<PassMemo> pass_memo_;  // aggregated passes' outcomes, see schedule_pass()
  sc_core::sc_event aggregated_event_;  // the end of an aggregated pass

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
