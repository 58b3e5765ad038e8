// The SSD as the runtime sees it: the flash, the
// controller's DRAM and internal bus, the NVMe firmware, out-of-place KV
// appends and the ISP attention engine, behind five calls.
//
// All flash work goes through the flash job queue (flash_job_queue.h): a
// conventional read, an in-flash GEMV or an attention pass holds the flash
// until it is done. Program batches either queue with them (one lane:
// NandParams.program_suspend = false, a read waits for a batch) or run in a lane
// of their own beside them, the dies giving reads priority by suspending
// programs (program_suspend = true, nand::Die).
//
// Paths (closed forms in models/ssd/README.md):
// - host_read: n = ceil(bytes / MDTS) NVMe read commands; their doorbells and
//   SQEs cross PCIe host->device (NVME_COMMAND), the firmware processes the first
//   command (later ones overlap the flash work), then a flash job reads every
//   page of the range (isp::KvPlacement, die-level pipeline). Each page, when its
//   data-out ends, crosses the internal bus (whole page), [with
//   stage_host_reads_in_dram: is written to controller DRAM (whole page) and
//   its useful bytes read back,] and its useful bytes (entries on the page x K+V
//   bytes of one head) cross PCIe device->host (KV_READ). After the last page's
//   data the n CQEs follow (NVME_COMPLETION), then the host's
//   interrupt_and_completion; then `done`.
// - host_write: doorbells + SQEs host->device, firmware, data host->device
//   (KV_WRITE), internal bus, DRAM write (the controller's write buffer), the n
//   CQEs device->host; then the entries join the layer's appended region.
// - append: the KV came with a fused command (already in the controller): bus,
//   DRAM write; then the entries join the layer's appended region.
// - Appended entries are packed in append order (isp::KvPlacement: entry index,
//   not token position). A tile (T entries x kv_heads pages) is programmed once
//   it is full: one program job per call that fills tiles (DRAM read + bus of
//   those pages, then nand::Appender). Entries of a partial tile wait in the
//   write buffer; drain() programs the partial tiles. A later append into a
//   flushed tile programs the tile again when it fills. Every program batch
//   writes its pages through the FTL (flash_translation.h), out of place, and
//   programs them where it put them; GC work the write causes runs first, as a
//   flash job of its own (run_gc). `done` of host_write/append runs when the
//   call's data is in the write buffer and every tile it completed is programmed.
// - attention: isp::AttentionEngine::run() as one flash job; the engine moves
//   its own bytes through the DRAM and bus servers given to it.
// - prefetch_attention: the inter-layer prefetch. The attention job of a
//   command that has not arrived yet is queued now; when it starts, the engine
//   reads the op's pages into the scratchpad buffers (isp::AttentionEngine::
//   prefetch). The matching attention() call joins that job instead of queuing
//   its own. One prefetch at a time; a prefetch must be followed by its command.
// - gemv_in_flash: AiF's in-flash GEMV (in_flash_gemv.h), one flash job that
//   holds every die for its closed-form time.
// - drain: programs partial tiles, then runs `done` when no call is outstanding.
//
// Energy (to the ledger, one record per call or job, spread over the time the
// work takes): "<name>.controller"
// (firmware: commands x firmware time x controller_active_w), "<name>.dram",
// "<name>.bus" (bytes x pJ/bit, including the attention engine's traffic),
// "<name>.nand" (nand::NandEnergy: pages sensed, pages programmed, channel
// bytes). Static power: controller, DRAM, NAND dies. The attention engine
// records its own accelerator energy under "<name>.attention...".
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <systemc>
#include <utility>
#include <vector>

#include "models/core/energy_ledger.h"
#include "models/core/server.h"
#include "models/core/stats.h"
#include "models/core/timeline.h"
#include "models/core/vcd.h"
#include "models/isp/attention_engine.h"
#include "models/isp/isp_config.h"
#include "models/isp/tiling.h"
#include "models/link/nvme.h"
#include "models/nand/aggregated_stream.h"
#include "models/nand/appender.h"
#include "models/nand/eraser.h"
#include "models/nand/flash_array.h"
#include "models/nand/nand_energy.h"
#include "models/nand/pipeline_schedule.h"
#include "models/ssd/flash_job_queue.h"
#include "models/ssd/flash_translation.h"
#include "models/ssd/host_reader.h"
#include "models/ssd/in_flash_gemv.h"
#include "models/ssd/ssd_config.h"
#include "schema/flash_coordinator.pb.h"
#include "schema/ftl.pb.h"
#include "schema/isp.pb.h"
#include "schema/module_selection.pb.h"
#include "schema/nand.pb.h"
#include "schema/resolve.h"
#include "schema/ssd.pb.h"
#include "traces/trace.pb.h"

namespace ispsim::ssd {

// The KV space of one request, which sizes the placement (isp::KvPlacement).
struct KvSpace {
  trace::ModelShape shape;
  uint64_t precomputed_tokens = 0;  // C: precomputed entries per layer
  uint64_t appended_capacity = 0;   // appended entries per layer (HKVD + query + answer)
  // Requests whose appended KV the drive holds at once, each in a slot of
  // appended_capacity entries per layer (a request stream's: those served and
  // those whose writes still drain; isp::KvPlacement places the slots so that
  // a request's pages use the same dies whatever its slot).
  uint32_t appended_slots = 1;
  // Logical pages after the KV space for documents written while the drive
  // serves (store_write(): a request stream's ingested documents).
  uint64_t store_pages = 0;
};

class Ssd : public sc_core::sc_module {
 public:
  using Done = std::function<void()>;

  // The parameter messages are resolved (schema/resolve.h: the platform
  // loader's, or schema::resolved()); the KV space is checked here (BadInput
  // naming "kv placement"). `nvme` (and its
  // link) and `ledger` (nullable) must outlive the SSD. A drive that is not
  // `computational` is a conventional SSD (the GPU baselines'): it has no ISP
  // accelerators or Flash-Coordinator, so their static power is not charged,
  // and attention() on it is a programming error (std::logic_error).
  // `modules.isp_accelerator` names the accelerator (isp::accelerators(),
  // BadInput for an unknown name); by default, the schema's default. `ftl`
  // configures the flash translation layer (BadInput naming "ftl" when the KV
  // space exceeds the drive's logical capacity).
  Ssd(sc_core::sc_module_name name, const schema::NandParams& nand, const schema::SsdParams& ssd,
      const schema::IspParams& isp, const schema::FlashCoordinatorParams& coordinator,
      const KvSpace& kv, link::Nvme& nvme, core::EnergyLedger* ledger = nullptr, bool computational = true,
      const schema::ModuleSelection& modules = schema::resolved(schema::ModuleSelection(), "modules"),
      const schema::FtlParams& ftl = schema::resolved(schema::FtlParams(), "ftl"));
  ~Ssd() override;

  // Conventional NVMe read of entries [token_begin, token_end) of `layer`'s
  // `region` (appended: of the region's slot `slot`) to the host; `done` when
  // the last byte (and completion) reached it.
  // BadInput for a range outside the placement or an empty range.
  void host_read(uint32_t layer, trace::KvRegion region, uint64_t token_begin, uint64_t token_end,
                 Done done, uint32_t slot = 0);
  // KV write-back from the host into slot `slot` of the appended region:
  // `bytes` = entries x kv_bytes_per_token, the entries being tokens of
  // [token_begin, token_end) (all, or the masked ones). BadInput when bytes is
  // not a whole number of entries, the entries exceed the range, or the slot
  // would overflow.
  void host_write(uint32_t layer, uint64_t token_begin, uint64_t token_end, uint64_t bytes, Done done,
                  uint32_t slot = 0);
  // KV that came with a fused command: `tokens` entries of `bytes`, into slot `slot`.
  void append(uint32_t layer, uint64_t tokens, uint64_t bytes, Done done, uint32_t slot = 0);
  // A document written to the store (KvSpace::store_pages, logical pages from
  // placement().total_pages() on): `bytes` from the host as host_write's are
  // (NVMe write commands, PCIe KV_WRITE, bus, write buffer), then logical pages
  // [lpn, lpn + pages) programmed through the FTL; `done` when programmed.
  // BadInput outside the store.
  void store_write(uint64_t lpn, uint64_t pages, uint64_t bytes, Done done);
  // TRIMs logical pages [lpn, lpn + pages) of the store (a mapping update, no flash time).
  void store_trim(uint64_t lpn, uint64_t pages);
  // One attention pass of the ISP, queued on the flash FIFO (or joining its prefetch).
  void attention(const isp::AttentionWork& work, Done done);
  // Starts reading `work`'s pages ahead of its attention() call (see above).
  void prefetch_attention(const isp::AttentionWork& work);
  // A weight GEMV of `rows` rows computed in the flash (AiF): `weight_bytes` of
  // weights holding `weight_elements` elements, `input_bytes` in and
  // `output_bytes` out over the channels. PCIe is the caller's business.
  void gemv_in_flash(uint64_t weight_bytes, uint64_t weight_elements, uint64_t rows, uint64_t input_bytes,
                     uint64_t output_bytes, Done done);
  uint64_t gemv_ops() const { return gemv_ops_.value(); }
  // Runs `done` at the first moment no call is outstanding and every layer's
  // partial tile has been programmed (it programs them when the other calls are
  // done); a delta later when there is nothing to do.
  void drain(Done done);

  const SsdConfig& config() const { return config_; }
  const isp::KvPlacement& placement() const { return *placement_; }
  const FlashTranslation& translation() const { return *translation_; }
  // Before the simulation starts: the drive is `start` (fresh by default), with
  // the precomputed KV stored on it; writes and reads go through its FTL.
  void start_from(const DriveStart& start);
  // The request is over: its appended and written-back KV is freed (TRIM).
  void finish_request();
  // The appended region's slots (KvSpace::appended_slots): entry e of slot s is
  // entry appended_base(s) + e of a layer's region.
  uint32_t appended_slots() const { return placement_->appended_slots(); }
  uint64_t appended_base(uint32_t slot) const;
  // The request of slot `slot` is over and its calls are done: the logical
  // pages of its appended and written-back KV are TRIMmed through the FTL (a
  // mapping update, no flash time) and the slot takes the next request's
  // (entries of its partial tiles still in the write buffer are dropped).
  void release_slot(uint32_t slot);
  nand::FlashArray& flash() { return flash_; }
  core::Server& dram() { return dram_; }
  core::Server& bus() { return bus_; }
  isp::AttentionEngine& engine() { return *engine_; }
  FlashJobQueue& jobs() { return jobs_; }

  // Totals (also statistics under <name>).
  uint64_t nand_pages_read() const;        // host reads + attention
  uint64_t nand_bytes_read() const;        // pages x page bytes
  uint64_t nand_pages_programmed() const { return pages_programmed_.value(); }
  uint64_t nand_bytes_programmed() const;  // pages x page bytes
  uint64_t host_read_pages() const { return host_read_pages_.value(); }
  uint64_t kv_read_bytes() const { return kv_read_bytes_.value(); }        // useful bytes sent to the host
  uint64_t kv_written_bytes() const { return kv_written_bytes_.value(); }  // host_write + append bytes accepted
  uint64_t dram_read_bytes() const { return dram_read_bytes_.value(); }    // host I/O and appends
  uint64_t dram_write_bytes() const { return dram_write_bytes_.value(); }  // host I/O and appends
  uint64_t dram_bytes() const { return dram_.bytes(); }            // everything, incl. attention
  uint64_t bus_bytes() const { return bus_.bytes(); }              // everything, incl. attention
  uint64_t nvme_commands() const { return nvme_commands_.value(); }
  uint64_t aggregated_reads() const { return aggregated_reads_.value(); }  // host reads without page events
  uint64_t reused_reads() const { return reused_reads_.value(); }  // of which looked up (read_pages_aggregated())
  // Of the aggregated reads scheduled: those whose channels were alike (channel 0 scheduled for all).
  uint64_t reads_scheduled_on_one_channel() const { return reads_on_one_channel_; }
  // Of the scheduled ones: reads resumed from a kept read alike but for its last run (not a statistic).
  uint64_t reads_resumed() const { return reads_resumed_; }
  uint64_t outstanding() const { return outstanding_; }
  uint64_t appended_entries(uint32_t layer, uint32_t slot = 0) const { return appends(slot, layer).entries; }
  uint64_t gc_block_erases() const { return gc_block_erases_.value(); }
  uint64_t gc_background_lines() const { return gc_background_lines_.value(); }
  uint64_t gc_background_yields() const { return gc_yields_.value(); }
  double gc_joules() const { return gc_joules_.value(); }

  // Waveforms: flash (dies, channels), <name>.dram/.bus/.firmware outstanding,
  // the attention engine's SIMD modes, scratchpads and reduction engine.
  void trace(vcd::Writer& writer);
  // The GC job under way, on the `<ssd>.gc` waveform (filter gc_state).
  // idle also while a background GC job waits behind the programs it yielded to.
  enum GcState : uint8_t { kGcIdle = 0, kGcRead = 1, kGcProgram = 2, kGcErase = 3 };
  static const vcd::Encoding& gc_encoding();
  // GC jobs as spans on the track "ssd gc" (their reads, programs and erases); nullable.
  void set_timeline(core::Timeline* timeline) { timeline_ = timeline; }

 private:
  struct LayerAppends {
    uint64_t reserved = 0;          // entries of calls made so far (capacity check)
    uint64_t entries = 0;           // entries accepted into the appended region
    uint64_t programmed_tiles = 0;  // full tiles programmed (or queued)
    bool partial_flushed = false;   // the partial tile was programmed by drain()
  };
  uint64_t stored_pages() const;  // the precomputed KV's logical pages, [0, this)
  void check_slot(uint32_t slot) const;  // std::logic_error past the slots
  LayerAppends& appends(uint32_t slot, uint32_t layer);
  const LayerAppends& appends(uint32_t slot, uint32_t layer) const;
  void begin_call();
  void end_call(const Done& done);
  void check_drain();
  void on_program_batch_done();
  void on_erase_batch_done();
  void register_wear_stats();
  void reserve_entries(uint32_t slot, uint32_t layer, uint64_t entries, const std::string& where);
  void fetch_commands(uint64_t data_bytes, Done then);
  // `bytes` cross the internal bus into the DRAM write buffer; then `then`.
  void to_write_buffer(uint64_t bytes, Done then);
  void accept_entries(uint32_t slot, uint32_t layer, uint64_t entries, uint64_t bytes, Done done);
  void check_store(uint64_t lpn, uint64_t pages, const std::string& where) const;
  // Entries [first_entry, end_entry) of slot `slot` of `layer`'s appended region.
  void program_tiles(uint32_t slot, uint32_t layer, uint64_t first_entry, uint64_t end_entry, Done done);
  std::vector<nand::PageAddress> translated_pages(uint32_t layer, uint64_t first_entry, uint64_t end_entry);
  // Logical pages [lpn, lpn + count) written through the FTL: where it put
  // them (the GC work it needed first runs now).
  std::vector<nand::PageAddress> written_pages(uint64_t lpn, uint64_t count);
  void program_pages(std::vector<nand::PageAddress> pages, Done done);
  // GC's flash operations of one write (FlashTranslation::write, without the
  // host programs) as one job in the program lane: its page reads, then its
  // programs, then its erases on the dies (nand::Eraser: each die erases its
  // blocks of a reclaimed line at once, for tBERS; a read suspends it).
  // A background job copies in chunks of one page per plane (a read, then a
  // program, of each) and yields the lane to programs queued behind it
  // between chunks; its erases come after its last chunk.
  void run_gc(std::vector<ftl::FlashOp> ops, bool background = false);
  class GcPages;
  struct GcJob;
  void gc_hold(const std::shared_ptr<GcJob>& job, FlashJobQueue::Done release);
  void gc_read(const std::shared_ptr<GcJob>& job);
  void gc_program(const std::shared_ptr<GcJob>& job);
  void gc_copied(const std::shared_ptr<GcJob>& job);
  void gc_erase(const std::shared_ptr<GcJob>& job);
  void gc_done(const GcJob& job);
  void record_gc_spans(const GcJob& job, uint64_t end);
  // No host command under way and no flash job queued or running.
  bool idle() const { return outstanding_ == 0 && jobs_.idle(); }
  // Background GC: when the drive has been idle for ftl.gc_idle_us with fewer
  // than the background threshold of lines free, and the run still has work
  // to come, GC reclaims lines one after another until the drive is busy
  // again or enough lines are free.
  void await_idle_gc();
  void start_background_gc();
  // The cached mapping's timing (ssd_mapping.cc; nothing with the whole table
  // in DRAM). A command's lookups run as a flash job queued just before its
  // data job: the DRAM accesses of its hits, then its translation-page reads on
  // their dies; evicted dirty translation pages are programmed in the program lane.
  struct LogicalRange {
    uint64_t lpn = 0, count = 0;
  };
  struct MappingWork;
  void set_up_cached_mapping();
  // Queues the lookup of `ranges` (done when the job starts) in the foreground lane.
  void look_up_mappings(std::vector<LogicalRange> ranges);
  // The logical pages of entries [begin, end) of `layer`'s `region`: its tiles, KV heads minor.
  std::vector<LogicalRange> read_ranges(uint32_t layer, trace::KvRegion region, uint64_t begin, uint64_t end) const;
  // An attention op's pages, once per pass (a pass's misses are read before the op starts).
  std::vector<LogicalRange> attention_ranges(const isp::CheckedAttention& op) const;
  // Takes the kMapping operations out of `ops` (a write's, or GC's) and queues
  // them in the program lane, ahead of the work they came with; run_gc() takes
  // the rest, so any FTL call's operations pass through here first.
  void run_mapping_updates(std::vector<ftl::FlashOp>& ops, uint64_t hits);
  uint64_t mapping_hits() const { return translation_->ftl().residency().traffic().hits; }
  MappingWork mapping_work(const std::vector<ftl::FlashOp>& ops, uint64_t hits) const;
  void run_translation_reads(std::shared_ptr<MappingWork> work, HostReader& reader, FlashJobQueue::Done release);
  void program_translation_pages(std::vector<nand::PageAddress> pages);
  using PageRuns = std::vector<isp::KvPlacement::PageRun>;
  void read_pages(PageRuns runs, uint64_t useful_bytes, Done done);
  // ssd.stream_model = AGGREGATED, flash quiet: the read's pages, bus and PCIe
  // transfers scheduled without page events (see README, "Stream models").
  // A read whose pages and starting state (relative to its start) equal those
  // of a recent one has its outcome, shifted in time: it is looked up, not
  // scheduled (the layers of a decode step read alike).
  // Its bookkeeping goes by the pages' runs, not page by page (a long
  // context's read is tens of thousands of pages in a few runs).
  void read_pages_aggregated(const PageRuns& runs, uint64_t useful_bytes, Done done, FlashJobQueue::Done release);
  struct ReadKey;
  struct ReadOutcome;
  class ReadMemo;
  struct PcieStart;
  struct ReadProgress;
  struct ReadCheckpoint;
  class ReadCheckpoints;
  // The bus under the latest aggregated host read, relative to its start: when
  // each page reached the bus (in order) and when the bus was free after it.
  // Pages that reach it at once (alike channels') are one step: the bus free
  // after the last of them.
  struct BusSteps {
    uint64_t prior_free_ps = 0;  // before the read's first page
    std::vector<uint64_t> arrival_ps, free_ps;
  };
  std::shared_ptr<const BusSteps> booked_bus_;
  uint64_t booked_bus_start_ps_ = 0, booked_bus_end_ps_ = 0;
  // When a transfer submitted now would start on the bus with page events:
  // behind the pages of a booked aggregated read that reached it by now, not
  // behind the whole read. UINT64_MAX when the bus is not held by such a read.
  uint64_t bus_start_between_pages(uint64_t now) const;
  // `bytes` over the bus, then `then` (may be empty): between a booked
  // aggregated read's pages when one holds the bus (bus_start_between_pages).
  void bus_transfer(uint64_t bytes, Done then);
  // Into `key` (its storage reused): the read's runs before `tail_run` whole, the rest without their entries.
  void read_key(const PageRuns& runs, uint64_t useful_bytes, uint64_t start, const std::vector<uint64_t>& die_ready,
                size_t tail_run, ReadKey& key);
  // A program under way on a die the read needs is suspended for it (or
  // waited for), die by die in the order the read first reaches them.
  std::vector<uint64_t> claim_dies_for_read(const PageRuns& runs, uint64_t start);
  // A read whose runs before its last are those of a recent one, from the same
  // start, goes on from where that one stood before its last run's first page
  // (the layers of the next decode step read one more token).
  ReadOutcome schedule_read(const PageRuns& runs, uint64_t useful_bytes, uint64_t start,
                            const std::vector<uint64_t>& die_ready);
  // Whether every channel's pages are channel 0's shifted by the channel (each
  // run starts on channel 0 and spans whole rounds of the channels) and every
  // channel starts alike (its dies, its data-ins): then they arrive when
  // channel 0's do. Checked on the runs and the start, not page by page.
  bool read_channels_alike(const PageRuns& runs, uint64_t start, const std::vector<uint64_t>& die_ready);
  // The read's pages at the controller, into read_arrivals_ in the order the
  // bus takes them (by time; at equal times, channel order), and the dies'
  // use into `dies`: every channel scheduled, or channel 0 alone for all.
  void schedule_every_channel(const PageRuns& runs, uint64_t start, const std::vector<uint64_t>& die_ready,
                              nand::DieUse& dies);
  void schedule_alike_channels(const PageRuns& runs, uint64_t start, const std::vector<uint64_t>& die_ready,
                               nand::DieUse& dies);
  // An aggregated stream (host read or attention pass) may start: nothing
  // under way on the flash but programs whose pages are all issued (the stream
  // suspends them), and no GC job started and not done.
  bool flash_free_for_aggregation() const;
  // Runs `what` at simulated time `when_ps` (>= now), in time order.
  void at(uint64_t when_ps, Done what);
  void on_timer();
  void check_layer(uint32_t layer, const std::string& where) const;
  void record(int component, double joules, uint64_t start_ps);
  // Energy charged when work ends is spread back to its start: the ledger holds
  // that start open meanwhile (EnergyLedger::open), so it never folds past it.
  uint64_t hold_energy(uint64_t start_ps) { return ledger_ ? ledger_->open(start_ps) : 0; }
  void release_energy(uint64_t ticket) {
    if (ledger_) ledger_->close(ticket);
  }
  void record_nand(uint64_t pages_read, uint64_t pages_programmed, uint64_t channel_bytes, uint64_t start_ps);
  // The engine runs the checked `op` (joining its prefetched stream if there is one),
  // records the energies, releases the flash and ends the call.
  void run_attention(isp::CheckedAttention op, FlashJobQueue::Done release, Done done);

  struct Prefetch {  // an attention job queued ahead of its command
    explicit Prefetch(isp::CheckedAttention predicted) : op(std::move(predicted)) {}
    isp::CheckedAttention op;  // the prefetched op, replaced by the command's when it arrives
    bool started = false;    // the job holds the flash (the engine streams)
    bool commanded = false;  // attention() arrived
    FlashJobQueue::Done release;
    Done done;
  };
  std::shared_ptr<Prefetch> prefetch_;

  const SsdConfig config_;
  const bool computational_;
  nand::FlashArray flash_;
  const nand::NandEnergy nand_energy_;  // from flash_'s timing
  std::unique_ptr<isp::KvPlacement> placement_;
  std::unique_ptr<ftl::FtlConfig> ftl_config_;
  std::unique_ptr<FlashTranslation> translation_;  // the placement's page map
  link::Nvme& nvme_;
  core::EnergyLedger* ledger_;
  core::Server dram_;
  core::Server bus_;
  core::Server firmware_;
  core::Server host_completion_;  // host interrupt + completion handling: a pure delay
  FlashJobQueue jobs_;
  HostReader reader_;
  HostReader gc_reader_;  // GC's page reads (the program lane's, beside host reads)
  nand::Appender appender_;
  nand::Eraser eraser_;  // GC's erases, on the dies
  std::unique_ptr<isp::AttentionEngine> engine_;
  const uint64_t store_pages_;        // KvSpace::store_pages
  std::vector<LayerAppends> layers_;  // slot-major: appended slots x layers
  std::vector<Done> drain_waiters_;
  Done program_batch_done_;  // completion of the program batch under way
  Done erase_batch_done_;    // completion of the erase batch under way
  vcd::Signal gc_signal_;
  core::Timeline* timeline_ = nullptr;
  sc_core::sc_event drain_check_;
  std::multimap<uint64_t, Done> timers_;  // at(): pending callbacks by time
  sc_core::sc_event timer_event_;
  std::unique_ptr<nand::PipelineSchedule> schedule_;  // aggregated host reads
  std::unique_ptr<ReadMemo> read_memo_;               // their recent outcomes
  std::unique_ptr<ReadCheckpoints> read_checkpoints_;  // where recent ones stood before their last run
  std::unique_ptr<ReadKey> read_key_;                 // the last key made (its vectors keep their storage)
  // Pages of a scheduled read at the controller: `copies` pages (of as many
  // channels, in channel order) arriving at `ps`, each holding `entries`
  // entries; `last_run`: pages of the read's last run.
  struct Arrival {
    uint64_t ps;
    uint32_t entries;
    uint32_t copies : 31;
    uint32_t last_run : 1;
  };
  // An arrival's pages over the bus and PCIe (`entries` each); the read's end.
  void take_arrival(ReadProgress& p, const Arrival& a, uint32_t entries) const;
  ReadOutcome finish_read(ReadProgress& p, nand::DieUse dies, uint64_t useful_bytes) const;
  // schedule_read()'s scratch, kept across reads (reused, not reallocated).
  std::vector<nand::PageAddress> read_addresses_;
  std::vector<uint32_t> read_entries_;  // by page of read_addresses_
  std::vector<Arrival> read_arrivals_;
  uint64_t reads_on_one_channel_ = 0;  // scheduled reads whose channels were alike
  uint64_t reads_resumed_ = 0;

  uint64_t outstanding_ = 0;
  uint64_t gc_jobs_open_ = 0;            // GC jobs started and not done (yielded ones included)
  uint64_t activity_epoch_ = 0;          // host commands begun so far (idleness ends with each)
  uint64_t idle_gc_epoch_ = UINT64_MAX;  // the epoch an idle-GC timer is pending for
  uint64_t gemv_ps_ = 0;
  std::unique_ptr<InFlashGemv> gemv_;
  core::Server in_flash_;  // the dies busy with an in-flash GEMV (a pure delay per job)

  // Statistics under <name>: each counter is declared once, here, and counted
  // where the event happens; formulas (ssd.cc) only for derived values.
  stats::Group stats_;
  stats::Counter& host_reads_ = stats_.counter("host_reads", "count", "conventional NVMe reads (host_read calls)");
  stats::Counter& host_writes_ =
      stats_.counter("host_writes", "count", "KV write-backs from the host (host_write calls)");
  stats::Counter& appends_ = stats_.counter("appends", "count", "KV appends that came with fused commands");
  stats::Counter& attention_ops_ = stats_.counter("attention_ops", "count", "attention passes run by the ISP");
  stats::Counter& nvme_commands_ =
      stats_.counter("nvme_commands", "count", "conventional NVMe commands (reads and writes)");
  stats::Counter& drains_ = stats_.counter("drains", "count", "drain() completions");
  stats::Counter& program_jobs_ =
      stats_.counter("program_jobs", "count", "program batches (full tiles, or partial tiles at drain)");
  stats::Counter& prefetches_ = stats_.counter("attention_prefetches", "count",
                                               "attention ops whose pages were read ahead of their command");
  stats::Counter& gemv_ops_ = stats_.counter("gemv_ops", "count", "weight GEMVs computed in the flash (AiF)");
  stats::Counter& gemv_pages_ = stats_.counter("gemv_pages_sensed", "count", "weight pages sensed by in-flash GEMVs");
  stats::Scalar& gemv_joules_ =
      stats_.scalar("gemv_energy", "J", "in-flash GEMV energy (weight sensing, channel transfers, PE MACs)");
  stats::Counter& host_read_pages_ = stats_.counter("host_read_pages", "count", "NAND pages sensed for host reads");
  stats::Counter& aggregated_reads_ = stats_.counter(
      "aggregated_reads", "count", "host reads scheduled without page events (stream_model = AGGREGATED, flash quiet)");
  stats::Counter& reused_reads_ = stats_.counter(
      "aggregated_reads_reused", "count",
      "of aggregated_reads: reads whose outcome was that of a recent read with the same pages and start "
      "(a link to the host free later, shifted, when that read's transfers all queued on it)");
  stats::Counter& pages_programmed_ =
      stats_.counter("nand_pages_programmed", "count", "NAND pages programmed (appended KV)");
  stats::Counter& kv_read_bytes_ =
      stats_.counter("kv_read_bytes", "bytes", "useful KV bytes sent to the host by host reads");
  stats::Counter& kv_written_bytes_ =
      stats_.counter("kv_written_bytes", "bytes", "KV bytes accepted by host writes and appends");
  stats::Counter& dram_read_bytes_ =
      stats_.counter("dram_read_bytes", "bytes", "controller DRAM bytes read by host I/O and program batches");
  stats::Counter& dram_write_bytes_ =
      stats_.counter("dram_write_bytes", "bytes", "controller DRAM bytes written by host I/O and appends");
  stats::Counter& gc_pages_read_ = stats_.counter("gc_pages_read", "count", "NAND pages garbage collection read");
  stats::Counter& gc_pages_programmed_ =
      stats_.counter("gc_pages_programmed", "count", "NAND pages garbage collection programmed (its copies)");
  stats::Counter& gc_block_erases_ = stats_.counter("gc_block_erases", "count", "blocks garbage collection erased");
  stats::Scalar& gc_joules_ =
      stats_.scalar("gc_energy", "J", "garbage-collection energy (page reads, programs, channel transfers, erases)");
  stats::Counter& gc_background_lines_ =
      stats_.counter("gc_background_lines", "count", "lines background GC reclaimed while the drive was idle");
  stats::Counter& gc_yields_ = stats_.counter(
      "gc_background_yields", "count", "times background GC gave the program lane to programs queued behind it");
  uint64_t gc_ps_ = 0;  // time GC jobs held the program lane ("gc_time")
  // The cached mapping (ssd_mapping.cc): its reader (the program lane's
  // translation reads) and counts, registered as statistics only when it is used.
  std::unique_ptr<HostReader> mapping_reader_;
  uint64_t mapping_hits_ = 0, mapping_misses_ = 0;
  uint64_t translation_reads_ = 0, translation_programs_ = 0;
  std::array<stats::Scalar*, 4> energy_j_{};  // controller, dram, bus, nand (dynamic): "<c>_energy"
};

}  // namespace ispsim::ssd
