#include "models/ssd/ssd.h"

#include <algorithm>
#include <stdexcept>
#include <tuple>

#include "common/error.h"
#include "common/last_value.h"
#include "common/recent_outcomes.h"
#include "common/sorted_runs.h"
#include "models/isp/register_all.h"
#include "models/nand/aggregated_stream.h"

namespace ispsim::ssd {

namespace {

constexpr int kController = 0, kDram = 1, kBus = 2, kNand = 3;
const char* const kComponents[4] = {"controller", "dram", "bus", "nand"};

uint64_t now_ps() { return sc_core::sc_time_stamp().value(); }

// The ISP accelerator that modules.isp_accelerator names (BadInput for an unknown one).
std::unique_ptr<const isp::PageCompute> accelerator(const schema::ModuleSelection& modules,
                                                    const isp::IspConfig& config, const schema::IspParams& isp) {
  schema::require_resolved(modules, "ssd: modules");
  isp::register_all();
  return isp::accelerators().create(modules.isp_accelerator(), config, isp, "isp");
}

}  // namespace

Ssd::Ssd(sc_core::sc_module_name name, const schema::NandParams& nand, const schema::SsdParams& ssd,
         const schema::IspParams& isp, const schema::FlashCoordinatorParams& coordinator, const KvSpace& kv,
         link::Nvme& nvme, core::EnergyLedger* ledger, bool computational,
         const schema::ModuleSelection& modules, const schema::FtlParams& ftl)
    : sc_core::sc_module(name),
      config_(SsdConfig::from_params(ssd, "ssd")),
      computational_(computational),
      flash_("flash", nand),
      nand_energy_(nand::NandEnergy::from_params(nand, flash_.config())),
      placement_(std::make_unique<isp::KvPlacement>(flash_.config(), kv.shape, kv.precomputed_tokens,
                                                    kv.appended_capacity, "kv placement", kv.appended_slots)),
      nvme_(nvme),
      ledger_(ledger),
      dram_("dram", config_.dram_bytes_per_ns, config_.dram_latency),
      bus_("bus", config_.bus_bytes_per_ns, config_.bus_latency),
      firmware_("firmware", 0, sc_core::SC_ZERO_TIME),
      host_completion_("host_completion", 0, nvme.link().config().interrupt_and_completion),
      jobs_("jobs", flash_.config().program_suspend),
      reader_("reader", flash_),
      gc_reader_("gc_reader", flash_),
      appender_("appender", flash_),
      eraser_("eraser", flash_),
      store_pages_(kv.store_pages),
      layers_(uint64_t(placement_->appended_slots()) * kv.shape.layers()),
      in_flash_("in_flash", 0, sc_core::SC_ZERO_TIME),
      stats_(this->name()) {
  ftl_config_ = std::make_unique<ftl::FtlConfig>(ftl::FtlConfig::from_params(nand, ftl, "ftl"));
  gc_reader_.set_garbage_collection(true);
  start_from(DriveStart());
  if (translation_->mapping_cached()) set_up_cached_mapping();
  const isp::IspConfig isp_config = isp::IspConfig::from_params(isp, "isp");
  gemv_ = std::make_unique<InFlashGemv>(flash_.config(), nand_energy_, config_.in_flash_read_speedup,
                                        isp_config.mac_pj);
  engine_ = std::make_unique<isp::AttentionEngine>(
      "attention", flash_, *placement_, isp_config, accelerator(modules, isp_config, isp),
      isp::CoordinatorConfig::from_params(coordinator, "flash_coordinator"), config_.organization,
      config_.reduction, dram_, bus_, computational ? ledger_ : nullptr);

  SC_HAS_PROCESS(Ssd);
  SC_METHOD(on_program_batch_done);
  sensitive << appender_.done_event();
  dont_initialize();
  SC_METHOD(on_erase_batch_done);
  sensitive << eraser_.done_event();
  dont_initialize();
  SC_METHOD(check_drain);
  sensitive << drain_check_;
  dont_initialize();
  SC_METHOD(on_timer);
  sensitive << timer_event_;
  dont_initialize();
  schedule_ = std::make_unique<nand::PipelineSchedule>(flash_.config());
  read_memo_ = std::make_unique<ReadMemo>();
  read_checkpoints_ = std::make_unique<ReadCheckpoints>();
  read_key_ = std::make_unique<ReadKey>();
  // The timing model of attention passes, chosen once: page events only, or
  // event-free passes while the flash is free for them.
  if (config_.aggregated_streams) engine_->use_aggregated_passes([this] { return flash_free_for_aggregation(); });

  if (ledger_) {
    const std::string path = this->name();
    ledger_->add_static_power(path + ".controller", config_.controller_static_w);
    ledger_->add_static_power(path + ".dram", config_.dram_static_w);
    ledger_->add_static_power(path + ".nand", nand_energy_.static_watts());
  }

  // Derived values; the counters are declared with the members (ssd.h).
  stats_.formula("gemv_time", "ns", "time the dies spent on in-flash GEMVs", [this] { return gemv_ps_ * 1e-3; });
  stats_.formula_integer("nand_pages_read", "count", "NAND pages sensed (host reads + attention)",
                         [this] { return nand_pages_read(); });
  stats_.formula_integer("nand_bytes_read", "bytes", "NAND bytes read, whole pages (host reads + attention)",
                         [this] { return nand_bytes_read(); });
  stats_.formula_integer("nand_bytes_programmed", "bytes", "NAND bytes programmed, whole pages",
                         [this] { return nand_bytes_programmed(); });
  stats_.formula_integer("attention_dram_bytes", "bytes",
                         "controller DRAM bytes moved by the attention engine (both directions)",
                         [this] { return engine_->dram_bytes(); });
  stats_.formula("gc_time", "ns", "time garbage-collection jobs held the flash's program lane",
                 [this] { return gc_ps_ * 1e-3; });
  register_wear_stats();
  stats_.formula("ftl_waf", "ratio", "write amplification: NAND pages the FTL programmed / host pages it was given",
                 [this] { return translation_->ftl().waf(); });
  stats_.formula_integer("ftl_mapping_table_bytes", "bytes",
                         "controller DRAM of the page-level mapping table (logical pages x mapping_entry_bytes)",
                         [this] { return translation_->ftl().mapping_table_bytes(); });
  for (int c = 0; c < 4; ++c) {
    energy_j_[c] = &stats_.scalar(std::string(kComponents[c]) + "_energy", "J",
                                  std::string("dynamic energy of the ") + kComponents[c] + " recorded by the SSD");
  }
}

Ssd::~Ssd() = default;

// GC's read wait (summed over the dies) and the P/E histogram of the FTL.
void Ssd::register_wear_stats() {
  stats_.formula("gc_read_wait", "ns",
                 "time host and ISP reads waited for garbage collection on the dies: its page reads, programs and "
                 "erases (a suspend latency, or the operation's end)",
                 [this] {
                   uint64_t ps = 0;
                   for (unsigned c = 0; c < flash_.config().channels; ++c)
                     for (unsigned d = 0; d < flash_.config().dies_per_channel; ++d)
                       ps += flash_.die(c, d).gc_read_wait_ps();
                   return ps * 1e-3;
                 });
  stats_.formula_integer("ftl_pe_max", "count", "P/E cycles of the most-erased block",
                         [this] { return translation_->ftl().max_erase_count(); });
  static const char* const kPeBuckets[ftl::Ftl::kEraseBuckets] = {"0", "1_9", "10_99", "100_999", "1000_9999",
                                                                   "10000_up"};
  for (size_t b = 0; b < ftl::Ftl::kEraseBuckets; ++b)
    stats_.formula_integer(std::string("ftl_blocks_pe_") + kPeBuckets[b], "count",
                           "blocks whose P/E count is in this decade (the P/E histogram)",
                           [this, b] { return translation_->ftl().erase_histogram()[b]; });
}

void Ssd::start_from(const DriveStart& start) {
  translation_ = std::make_unique<FlashTranslation>(*ftl_config_, flash_.config(),
                                                    placement_->total_pages() + store_pages_, "ftl", start);
  // The precomputed KV is on the drive before the run; it comes first in the KV space.
  translation_->store(0, stored_pages());
  placement_->set_page_map(translation_.get());
}

uint64_t Ssd::stored_pages() const {
  return placement_->tiles_per_layer(trace::KV_REGION_PRECOMPUTED) * placement_->kv_heads() * placement_->layers();
}

void Ssd::finish_request() { translation_->trim(stored_pages(), placement_->total_pages() - stored_pages()); }

void Ssd::check_slot(uint32_t slot) const {
  if (slot >= appended_slots())
    throw std::logic_error(std::string(name()) + ": appended slot " + std::to_string(slot) + " of " +
                           std::to_string(appended_slots()));
}

uint64_t Ssd::appended_base(uint32_t slot) const {
  check_slot(slot);
  return slot * placement_->slot_entries();
}

const Ssd::LayerAppends& Ssd::appends(uint32_t slot, uint32_t layer) const {
  check_slot(slot);
  return layers_.at(uint64_t(slot) * placement_->layers() + layer);
}

Ssd::LayerAppends& Ssd::appends(uint32_t slot, uint32_t layer) {
  return const_cast<LayerAppends&>(static_cast<const Ssd&>(*this).appends(slot, layer));
}

void Ssd::release_slot(uint32_t slot) {
  const uint64_t tile = placement_->tokens_per_tile(), first_tile = appended_base(slot) / tile;
  for (uint32_t layer = 0; layer < placement_->layers(); ++layer) {
    LayerAppends& l = appends(slot, layer);
    if (l.reserved != l.entries)
      throw std::logic_error(std::string(name()) + ": slot " + std::to_string(slot) + " released with " +
                             std::to_string(l.reserved - l.entries) + " entries of layer " + std::to_string(layer) +
                             " still on their way");
    const uint64_t tiles = (l.entries + tile - 1) / tile;
    if (tiles > 0)
      translation_->trim(placement_->tile_index(layer, trace::KV_REGION_APPENDED, first_tile, 0),
                         tiles * placement_->kv_heads());
    l = LayerAppends();
  }
}

uint64_t Ssd::nand_pages_read() const { return host_read_pages_.value() + engine_->pages_read(); }
uint64_t Ssd::nand_bytes_read() const { return nand_pages_read() * flash_.config().page_bytes; }
uint64_t Ssd::nand_bytes_programmed() const { return pages_programmed_.value() * flash_.config().page_bytes; }

void Ssd::check_layer(uint32_t layer, const std::string& where) const {
  if (layer >= placement_->layers()) {
    throw BadInput(where, "layer " + std::to_string(layer) + " is outside the model's " +
                              std::to_string(placement_->layers()) + " layers");
  }
}

void Ssd::record(int component, double joules, uint64_t start_ps) {
  *energy_j_[component] += joules;
  if (ledger_) {
    const uint64_t end = std::max(start_ps, now_ps());
    ledger_->add(std::string(name()) + "." + kComponents[component], joules, start_ps, end);
  }
}

void Ssd::record_nand(uint64_t pages_read, uint64_t pages_programmed, uint64_t channel_bytes,
                      uint64_t start_ps) {
  record(kNand,
         nand_energy_.read_joules(pages_read) + nand_energy_.program_joules(pages_programmed) +
             nand_energy_.transfer_joules(channel_bytes),
         start_ps);
}

void Ssd::begin_call() {
  ++outstanding_;
  ++activity_epoch_;
}

void Ssd::end_call(const Done& done) {
  --outstanding_;
  if (done) done();
  if (outstanding_ == 0 && !drain_waiters_.empty()) drain_check_.notify(sc_core::SC_ZERO_TIME);
  await_idle_gc();
}

void Ssd::check_drain() {
  if (outstanding_ != 0 || drain_waiters_.empty()) return;
  // Flush the partial tiles first; their completion brings us back here.
  const uint64_t tile = placement_->tokens_per_tile();
  bool flushing = false;
  for (uint32_t slot = 0; slot < appended_slots(); ++slot) {
    for (uint32_t layer = 0; layer < placement_->layers(); ++layer) {
      LayerAppends& l = appends(slot, layer);
      if (l.partial_flushed || l.entries % tile == 0) continue;
      l.partial_flushed = true;
      flushing = true;
      begin_call();
      program_tiles(slot, layer, (l.entries / tile) * tile, l.entries, nullptr);
    }
  }
  if (flushing) return;
  std::vector<Done> waiters;
  waiters.swap(drain_waiters_);
  ++drains_;
  for (Done& done : waiters) {
    if (done) done();
  }
}

// Doorbells + SQEs of the commands host->device, then the firmware's time for
// the first command (the others overlap the data movement). Energy: every
// command's firmware time at controller_active_w, spread over the first
// command's firmware time and the n - 1 command times after it (so no burst
// lands in one instant).
void Ssd::fetch_commands(uint64_t data_bytes, Done then) {
  const uint64_t commands = nvme_.io_command_count(data_bytes);
  nvme_commands_ += commands;
  nvme_.link().transfer(link::Direction::HOST_TO_DEVICE, nvme_.io_overhead_bytes_host_to_device(data_bytes),
                        link::Purpose::NVME_COMMAND, [this, commands, then = std::move(then)]() mutable {
                          const uint64_t fw_ps = config_.firmware_per_command.value();
                          const uint64_t start = now_ps();
                          const double joules = double(commands) * config_.firmware_per_command.to_seconds() *
                                                config_.controller_active_w;
                          *energy_j_[kController] += joules;
                          if (ledger_) {
                            ledger_->add(std::string(name()) + ".controller", joules, start,
                                         start + commands * fw_ps);
                          }
                          firmware_.submit(config_.firmware_per_command, 0, std::move(then));
                        });
}

void Ssd::host_read(uint32_t layer, trace::KvRegion region, uint64_t token_begin, uint64_t token_end,
                    Done done, uint32_t slot) {
  const std::string where = "ssd host read layer " + std::to_string(layer);
  check_layer(layer, where);
  if (token_end <= token_begin) {
    throw BadInput(where, "empty token range [" + std::to_string(token_begin) + ", " +
                              std::to_string(token_end) + ")");
  }
  uint64_t base = 0;
  if (region == trace::KV_REGION_APPENDED) {
    const uint64_t reserved = appends(slot, layer).reserved;
    if (token_end > reserved) {
      throw BadInput(where, "appended entries [" + std::to_string(token_begin) + ", " + std::to_string(token_end) +
                                ") read, but only " + std::to_string(reserved) + " were ever appended to this layer");
    }
    base = appended_base(slot);
  }
  PageRuns runs = placement_->page_runs(layer, region, base + token_begin, base + token_end);
  const uint64_t useful = (token_end - token_begin) * isp::kv_bytes_per_token(placement_->shape());
  ++host_reads_;
  begin_call();
  fetch_commands(useful, [this, runs = std::move(runs), layer, region, base, token_begin, token_end, useful,
                          done = std::move(done)]() mutable {
    look_up_mappings(read_ranges(layer, region, base + token_begin, base + token_end));
    read_pages(std::move(runs), useful, std::move(done));
  });
}

namespace {

uint64_t pages_in(const std::vector<isp::KvPlacement::PageRun>& runs) {
  uint64_t n = 0;
  for (const isp::KvPlacement::PageRun& run : runs) n += run.count;
  return n;
}

// A read's pages one by one, from their runs: each page's address and entries
// (sized first and written by index: no reallocation, no push per page).
void expand_runs(const std::vector<isp::KvPlacement::PageRun>& runs, const nand::Layout& layout,
                 std::vector<nand::PageAddress>& addresses, std::vector<uint32_t>& entries) {
  const size_t n = pages_in(runs);
  addresses.resize(n);
  entries.resize(n);
  size_t i = 0;
  for (const isp::KvPlacement::PageRun& run : runs) {
    nand::PageAddress a = run.first;
    std::fill_n(entries.begin() + std::ptrdiff_t(i), run.count, run.entries);
    for (uint64_t k = 0; k < run.count; ++k, layout.next(a)) addresses[i++] = a;
  }
}

}  // namespace

void Ssd::read_pages(PageRuns runs, uint64_t useful_bytes, Done done) {
  jobs_.push("read", [this, runs = std::move(runs), useful_bytes,
                      done = std::move(done)](FlashJobQueue::Done release) mutable {
    if (config_.aggregated_streams && !config_.stage_host_reads_in_dram && flash_free_for_aggregation() &&
        !reader_.active()) {
      read_pages_aggregated(runs, useful_bytes, std::move(done), std::move(release));
      return;
    }
    struct Read {
      std::vector<uint32_t> entries;  // by page
      uint64_t useful_bytes;
      uint64_t forwarded = 0;  // pages handed to PCIe
      uint64_t flash_start_ps;
      uint64_t energy_ticket;
      Done done;
    };
    auto read = std::make_shared<Read>();
    std::vector<nand::PageAddress> addresses;
    expand_runs(runs, placement_->layout(), addresses, read->entries);
    read->useful_bytes = useful_bytes;
    read->flash_start_ps = now_ps();
    read->energy_ticket = hold_energy(read->flash_start_ps);
    read->done = std::move(done);

    const uint64_t page_bytes = flash_.config().page_bytes;
    const uint64_t head_bytes = isp::kv_bytes_per_token_head(placement_->shape());
    const uint64_t n = addresses.size();
    host_read_pages_ += n;

    // The last hop of a page: its useful bytes device->host; after the last page
    // the CQEs, then the host's completion handling.
    auto to_host = [this, read, head_bytes, n](uint32_t index) {
      const uint64_t bytes = uint64_t(read->entries[index]) * head_bytes;
      kv_read_bytes_ += bytes;
      nvme_.link().transfer(link::Direction::DEVICE_TO_HOST, bytes, link::Purpose::KV_READ, nullptr);
      if (++read->forwarded < n) return;
      const uint64_t cqe = nvme_.io_overhead_bytes_device_to_host(read->useful_bytes);
      nvme_.link().transfer(link::Direction::DEVICE_TO_HOST, cqe, link::Purpose::NVME_COMPLETION, [this, read] {
        host_completion_.submit(sc_core::SC_ZERO_TIME, 0, [this, read] { end_call(read->done); });
      });
    };
    const bool staged = config_.stage_host_reads_in_dram;
    auto arrived = [this, read, page_bytes, head_bytes, staged, to_host](uint32_t index) {
      bus_.transfer(page_bytes, [this, read, index, page_bytes, head_bytes, staged, to_host] {
        if (!staged) return to_host(index);
        dram_write_bytes_ += page_bytes;
        const uint64_t useful = uint64_t(read->entries[index]) * head_bytes;
        dram_.transfer(page_bytes, [this, index, useful, to_host] {
          dram_read_bytes_ += useful;
          dram_.transfer(useful, [index, to_host] { to_host(index); });
        });
      });
    };
    auto all_arrived = [this, read, n, page_bytes, staged, release]() {
      // Energy of the flash part and of the bus/DRAM traffic, one record each.
      record_nand(n, 0, n * page_bytes, read->flash_start_ps);
      record(kBus, double(n * page_bytes) * config_.bus_joules_per_byte, read->flash_start_ps);
      if (staged) {
        record(kDram, double(n * page_bytes + read->useful_bytes) * config_.dram_joules_per_byte,
               read->flash_start_ps);
      }
      release_energy(read->energy_ticket);
      release();
    };
    reader_.start(std::move(addresses), arrived, all_arrived, "ssd host read");
  });
}

// What an aggregated host read's outcome depends on: its pages' places in the
// channel/die/plane cycle and sizes, in runs of consecutive pages (a layer's
// range of KV), and the state it starts in, relative to its start (its
// arithmetic is max and +, as an aggregated pass's).
struct Ssd::ReadKey {
  struct Run {
    unsigned channel = 0, die = 0, plane = 0;  // of its first page
    uint32_t entries = 0;
    uint64_t count = 0;
    bool operator==(const Run& o) const {
      return std::tie(channel, die, plane, entries, count) == std::tie(o.channel, o.die, o.plane, o.entries, o.count);
    }
  };
  std::vector<Run> runs;
  uint64_t useful_bytes = 0;
  nand::FlashStart flash;
  uint64_t bus_free_ps = 0;
  bool operator==(const ReadKey& o) const {
    return std::tie(runs, useful_bytes, flash, bus_free_ps) == std::tie(o.runs, o.useful_bytes, o.flash, o.bus_free_ps);
  }
};

// When PCIe (to the host) is free, relative to a read's start, and whether
// every one of the read's transfers on it queued behind the one before (or
// behind what was there at the start): then, from a later start of the link,
// the same transfers take the same times shifted by the difference.
struct Ssd::PcieStart {
  uint64_t free_ps = 0;
  bool backlogged = true;
  // How much later the link is free now than for `kept`, or UINT64_MAX when kept's times do not carry over.
  static uint64_t shift(const PcieStart& kept, uint64_t free_now_ps) {
    if (free_now_ps == kept.free_ps) return 0;
    return kept.backlogged && free_now_ps > kept.free_ps ? free_now_ps - kept.free_ps : UINT64_MAX;
  }
};

// What an aggregated host read does, its times relative to its start.
struct Ssd::ReadOutcome {
  PcieStart pcie_start;
  nand::DieUse dies;
  uint64_t last_arrival_ps = 0, completions_ps = 0, first_pcie_start_ps = 0;
  uint64_t kv_bytes = 0, cqe_bytes = 0;
  core::ClockUse bus, pcie;
  double pcie_pj = 0;
  std::shared_ptr<const BusSteps> bus_steps;
};

class Ssd::ReadMemo : public RecentOutcomes<ReadKey, ReadOutcome> {};

// A scheduled read's bus and PCIe, and what it has done, as its arrivals go.
struct Ssd::ReadProgress {
  ReadProgress(const core::Server& bus_server, const core::FcfsClock& pcie_clock, uint64_t start)
      : start_ps(start), bus(bus_server), pcie(pcie_clock), last_arrival(start), last_to_host(start),
        steps(std::make_shared<BusSteps>()) {
    pcie_start.free_ps = pcie.use().relative_to(start).free_ps;
  }
  const uint64_t start_ps;
  core::FcfsClock bus, pcie;
  uint64_t last_arrival, last_to_host, first_pcie_start = UINT64_MAX;
  uint64_t kv_bytes = 0;
  double pcie_pj = 0;
  std::shared_ptr<BusSteps> steps;
  // Pages of a read are mostly full: a size's PCIe time and energy are kept while it repeats.
  LastValue<uint64_t, std::pair<uint64_t, double>> pcie_cost;
  PcieStart pcie_start;
};

// Where a scheduled read stood before its last run's first page, times
// relative to its start, and the arrivals still to come.
struct Ssd::ReadCheckpoint {
  bool taken = false, on_one_channel = false;
  PcieStart pcie_start;  // to the checkpoint
  nand::DieUse dies;
  core::ClockUse bus, pcie;
  uint64_t last_arrival_ps = 0, last_to_host_ps = 0, first_pcie_start_ps = UINT64_MAX;
  uint64_t kv_bytes = 0;
  double pcie_pj = 0;
  BusSteps steps;
  std::vector<Arrival> rest;
};

class Ssd::ReadCheckpoints : public RecentOutcomes<ReadKey, ReadCheckpoint, 4> {};

void Ssd::read_key(const PageRuns& runs, uint64_t useful_bytes, uint64_t start,
                   const std::vector<uint64_t>& die_ready, size_t tail_run, ReadKey& key) {
  auto relative = [&](uint64_t t) { return t > start ? t - start : 0; };
  key.runs.clear();
  nand::PageAddress next;  // where the key's run's next page would be
  for (size_t i = 0; i < runs.size(); ++i) {
    const isp::KvPlacement::PageRun& run = runs[i];
    // Runs join where the next continues the channel/die/plane cycle (the
    // schedule does not depend on the block or page).
    const nand::PageAddress& a = run.first;
    const uint32_t entries = i < tail_run ? run.entries : 0;
    if (i != tail_run && !key.runs.empty() && entries == key.runs.back().entries && a.channel == next.channel &&
        a.die == next.die && a.plane == next.plane) {
      key.runs.back().count += run.count;
    } else {
      key.runs.push_back({a.channel, a.die, a.plane, entries, run.count});
    }
    next = placement_->layout().advanced(a, run.count);
  }
  key.useful_bytes = useful_bytes;
  key.flash.set_relative(flash_, die_ready, start);
  key.bus_free_ps = relative(core::FcfsClock(bus_).free_ps());
}

std::vector<uint64_t> Ssd::claim_dies_for_read(const PageRuns& runs, uint64_t start) {
  const unsigned dies = flash_.config().dies_per_channel;
  std::vector<uint64_t> die_ready(size_t(flash_.config().channels) * dies, UINT64_MAX);
  size_t unclaimed = die_ready.size();
  for (const isp::KvPlacement::PageRun& run : runs) {
    if (unclaimed == 0) break;
    nand::PageAddress a = run.first;
    for (uint64_t k = 0; k < run.count && unclaimed > 0; ++k, placement_->layout().next(a)) {
      uint64_t& ready = die_ready[size_t(a.channel) * dies + a.die];
      if (ready == UINT64_MAX) {
        ready = flash_.claim_for_stream(a.channel, a.die, start);
        --unclaimed;
      }
    }
  }
  return die_ready;
}

void Ssd::read_pages_aggregated(const PageRuns& runs, uint64_t useful_bytes, Done done,
                                FlashJobQueue::Done release) {
  const uint64_t start = now_ps();
  const uint64_t energy_ticket = hold_energy(start);
  const uint64_t page_bytes = flash_.config().page_bytes;
  const uint64_t n = pages_in(runs);
  // A run's pages walk the layout order from its first to its last: all exist when those two do.
  const std::string where = "ssd host read";
  uint64_t index = 0;
  for (const isp::KvPlacement::PageRun& run : runs) {
    flash_.check_address(run.first, where, index);
    flash_.check_address(placement_->layout().advanced(run.first, run.count - 1), where, index + run.count - 1);
    index += run.count;
  }
  host_read_pages_ += n;
  ++aggregated_reads_;

  const std::vector<uint64_t> die_ready = claim_dies_for_read(runs, start);
  read_key(runs, useful_bytes, start, die_ready, runs.size(), *read_key_);
  const uint64_t pcie_free = nvme_.link().clock(link::Direction::DEVICE_TO_HOST).use().relative_to(start).free_ps;
  // The link's times of a kept read carry over shifted when it was backlogged throughout.
  const ReadOutcome* outcome = read_memo_->find(
      *read_key_, [&](const ReadOutcome& o) { return PcieStart::shift(o.pcie_start, pcie_free) != UINT64_MAX; });
  uint64_t pcie_shift = 0;
  if (outcome != nullptr) {
    ++reused_reads_;
    pcie_shift = PcieStart::shift(outcome->pcie_start, pcie_free);
  } else {
    ReadKey key = *read_key_;  // kept: schedule_read() uses the scratch key
    outcome = &read_memo_->insert(std::move(key), schedule_read(runs, useful_bytes, start, die_ready));
  }
  const ReadOutcome& out = *outcome;

  out.dies.end_stream(flash_, start);
  kv_read_bytes_ += out.kv_bytes;
  // The bus is held until the read's last page has crossed it: behind a link
  // faster than the bus (the server's PCIe 5.0 x4), the next read queues there.
  core::ClockUse bus = out.bus;
  bus.free_ps += start;
  bus_.book(bus);
  booked_bus_ = out.bus_steps;
  booked_bus_start_ps_ = start;
  booked_bus_end_ps_ = bus.free_ps;
  core::ClockUse pcie = out.pcie;
  pcie.free_ps += start + pcie_shift;
  const uint64_t first_pcie_start =
      out.first_pcie_start_ps == UINT64_MAX ? UINT64_MAX : start + pcie_shift + out.first_pcie_start_ps;
  nvme_.link().book(link::Direction::DEVICE_TO_HOST, pcie, link::Purpose::KV_READ, pcie.bytes - out.cqe_bytes,
                    link::Purpose::NVME_COMPLETION, first_pcie_start, out.pcie_pj);

  // The flash is released when the last page is at the controller; the host's
  // completion handling follows the CQEs.
  at(start + out.last_arrival_ps, [this, n, page_bytes, start, energy_ticket, release = std::move(release)] {
    record_nand(n, 0, n * page_bytes, start);
    record(kBus, double(n * page_bytes) * config_.bus_joules_per_byte, start);
    release_energy(energy_ticket);
    release();
  });
  at(start + pcie_shift + out.completions_ps, [this, done = std::move(done)] {
    host_completion_.submit(sc_core::SC_ZERO_TIME, 0, [this, done] { end_call(done); });
  });
}

// The flash: when each page is at the controller (die-level pipeline, the
// controller's read buffer never full), channel after channel; then each page
// crosses the internal bus (whole page) and PCIe (its useful bytes), then the
// CQEs. Changes nothing but scratch buffers and kept reads.
Ssd::ReadOutcome Ssd::schedule_read(const PageRuns& runs, uint64_t useful_bytes, uint64_t start,
                                    const std::vector<uint64_t>& die_ready) {
  ReadProgress p(bus_, nvme_.link().clock(link::Direction::DEVICE_TO_HOST), start);
  const bool resumable = runs.size() >= 2;
  ReadCheckpoint keep;
  if (resumable) {
    read_key(runs, 0, start, die_ready, runs.size() - 1, *read_key_);
    const uint64_t pcie_free = p.pcie_start.free_ps;
    if (const ReadCheckpoint* kept = read_checkpoints_->find(*read_key_, [&](const ReadCheckpoint& c) {
          return PcieStart::shift(c.pcie_start, pcie_free) != UINT64_MAX;
        })) {
      const uint64_t shift = PcieStart::shift(kept->pcie_start, pcie_free);
      ++reads_resumed_;
      reads_on_one_channel_ += kept->on_one_channel;
      p.bus.continue_from(kept->bus.moved(start));
      p.pcie.continue_from(kept->pcie.moved(start + shift));
      p.pcie_start.backlogged = kept->pcie_start.backlogged;
      p.last_arrival = start + kept->last_arrival_ps;
      p.last_to_host = start + kept->last_to_host_ps;
      p.first_pcie_start =
          kept->first_pcie_start_ps == UINT64_MAX ? UINT64_MAX : start + shift + kept->first_pcie_start_ps;
      p.kv_bytes = kept->kv_bytes;
      p.pcie_pj = kept->pcie_pj;
      *p.steps = kept->steps;
      for (Arrival a : kept->rest) {
        a.ps += start;
        take_arrival(p, a, a.last_run ? runs.back().entries : a.entries);
      }
      return finish_read(p, kept->dies, useful_bytes);
    }
  }
  nand::DieUse dies;
  dies.assign(size_t(flash_.config().channels) * flash_.config().dies_per_channel);
  const uint64_t on_one_channel = reads_on_one_channel_;
  if (read_channels_alike(runs, start, die_ready)) {
    schedule_alike_channels(runs, start, die_ready, dies);
  } else {
    schedule_every_channel(runs, start, die_ready, dies);
  }
  p.steps->prior_free_ps = p.bus.free_ps() > start ? p.bus.free_ps() - start : 0;
  p.steps->arrival_ps.reserve(read_arrivals_.size());
  p.steps->free_ps.reserve(read_arrivals_.size());
  for (size_t i = 0; i < read_arrivals_.size(); ++i) {
    const Arrival& a = read_arrivals_[i];
    if (resumable && a.last_run && !keep.taken) {
      keep.taken = true;
      keep.on_one_channel = reads_on_one_channel_ > on_one_channel;
      keep.dies = dies;
      keep.bus = p.bus.use().relative_to(start);
      keep.pcie = p.pcie.use().relative_to(start);
      keep.last_arrival_ps = p.last_arrival - start;
      keep.last_to_host_ps = p.last_to_host - start;
      keep.first_pcie_start_ps = p.first_pcie_start == UINT64_MAX ? UINT64_MAX : p.first_pcie_start - start;
      keep.kv_bytes = p.kv_bytes;
      keep.pcie_pj = p.pcie_pj;
      keep.pcie_start = p.pcie_start;
      keep.steps = *p.steps;
      keep.rest.assign(read_arrivals_.begin() + std::ptrdiff_t(i), read_arrivals_.end());
      for (Arrival& r : keep.rest) r.ps -= start;
    }
    take_arrival(p, a, a.entries);
  }
  if (keep.taken) read_checkpoints_->insert(*read_key_, std::move(keep));
  return finish_read(p, std::move(dies), useful_bytes);
}

void Ssd::take_arrival(ReadProgress& p, const Arrival& a, uint32_t entries) const {
  const uint64_t page_bytes = flash_.config().page_bytes;
  link::PcieLink& link = nvme_.link();
  p.last_arrival = std::max(p.last_arrival, a.ps);
  const uint64_t bytes = uint64_t(entries) * isp::kv_bytes_per_token_head(placement_->shape());
  const auto& [pcie_ps, page_pj] =
      p.pcie_cost.get(bytes, [&] { return std::make_pair(link.occupancy_ps(bytes), link.energy_pj(bytes)); });
  // The copies cross the bus back to back, then PCIe (each an FCFS clock):
  // closed forms of `copies` transfers one by one.
  const uint64_t bus_ps = p.bus.occupancy_ps(page_bytes);
  const uint64_t last_on_bus = p.bus.submit_repeated(a.ps, bus_ps, page_bytes, a.copies);
  const uint64_t first_on_bus = last_on_bus - (a.copies - 1) * bus_ps;
  p.last_to_host = std::max(p.last_to_host, last_on_bus);
  const uint64_t pcie_free = p.pcie.free_ps();
  p.first_pcie_start = std::min(p.first_pcie_start, std::max(first_on_bus, pcie_free));
  p.pcie.submit_spaced(first_on_bus, bus_ps, pcie_ps, bytes, a.copies);
  p.pcie_start.backlogged &= first_on_bus <= pcie_free && p.pcie.free_ps() == pcie_free + a.copies * pcie_ps;
  p.kv_bytes += a.copies * bytes;
  for (uint32_t copy = 0; copy < a.copies; ++copy) p.pcie_pj += page_pj;  // the same additions, the same bits
  p.steps->arrival_ps.push_back(a.ps - p.start_ps);
  p.steps->free_ps.push_back(p.bus.free_ps() - p.start_ps);
}

// After the last page's hand-off to PCIe, the CQEs queue behind its data.
Ssd::ReadOutcome Ssd::finish_read(ReadProgress& p, nand::DieUse dies, uint64_t useful_bytes) const {
  link::PcieLink& link = nvme_.link();
  const uint64_t start = p.start_ps;
  ReadOutcome out;
  out.dies = std::move(dies);
  out.kv_bytes = p.kv_bytes;
  out.cqe_bytes = nvme_.io_overhead_bytes_device_to_host(useful_bytes);
  out.pcie_pj = p.pcie_pj + link.energy_pj(out.cqe_bytes);
  p.pcie_start.backlogged &= p.last_to_host <= p.pcie.free_ps();
  out.pcie_start = p.pcie_start;
  const uint64_t completions_at = p.pcie.submit(p.last_to_host, link.occupancy_ps(out.cqe_bytes), out.cqe_bytes);
  out.last_arrival_ps = p.last_arrival - start;
  out.completions_ps = completions_at - start;
  out.first_pcie_start_ps = p.first_pcie_start == UINT64_MAX ? UINT64_MAX : p.first_pcie_start - start;  // (no page)
  out.bus = p.bus.use();
  out.bus.free_ps = out.bus.requests > 0 ? out.bus.free_ps - start : 0;
  out.bus_steps = std::move(p.steps);
  out.pcie = p.pcie.use();
  out.pcie.free_ps -= start;
  return out;
}

bool Ssd::read_channels_alike(const PageRuns& runs, uint64_t start, const std::vector<uint64_t>& die_ready) {
  const unsigned channels = flash_.config().channels, dies = flash_.config().dies_per_channel;
  if (channels < 2) return false;
  for (const isp::KvPlacement::PageRun& run : runs)
    if (run.first.channel != 0 || run.count % channels != 0) return false;
  const uint64_t channel_free = flash_.channel(0).data_ins_end_ps(start);
  for (unsigned c = 1; c < channels; ++c) {
    if (flash_.channel(c).data_ins_end_ps(start) != channel_free) return false;
    for (unsigned d = 0; d < dies; ++d)
      if (die_ready[size_t(c) * dies + d] != die_ready[d]) return false;
  }
  return true;
}

void Ssd::schedule_every_channel(const PageRuns& runs, uint64_t start, const std::vector<uint64_t>& die_ready,
                                 nand::DieUse& dies) {
  const unsigned dies_per_channel = flash_.config().dies_per_channel;
  expand_runs(runs, placement_->layout(), read_addresses_, read_entries_);
  read_arrivals_.clear();
  std::vector<size_t> sorted{0};  // each channel's arrivals are in time order
  schedule_->assign(read_addresses_);
  const size_t last_run = read_addresses_.size() - (runs.empty() ? 0 : runs.back().count);  // its first page
  for (unsigned c = 0; c < flash_.config().channels; ++c) {
    schedule_->run(c, start, 0, nullptr, 0, &die_ready[size_t(c) * dies_per_channel],
                   flash_.channel(c).data_ins_end_ps(start));
    for (const nand::PipelineSchedule::Page& p : schedule_->pages_in_arrival_order())
      read_arrivals_.push_back({p.arrival_ps, read_entries_[p.index], 1, p.index >= last_run});
    dies.take(*schedule_, c, start);
    sorted.push_back(read_arrivals_.size());
  }
  merge_sorted_runs(read_arrivals_, std::move(sorted), [](const Arrival& a, const Arrival& b) { return a.ps < b.ps; });
}

// Channel 0's pages alone are listed and scheduled; channel c's arrive at the
// same times. The order is the stable merge's of the channels' equal
// sequences: each group of equal times once per channel, in channel order (a
// page alone at its time: one arrival of `channels` copies).
void Ssd::schedule_alike_channels(const PageRuns& runs, uint64_t start, const std::vector<uint64_t>& die_ready,
                                  nand::DieUse& dies) {
  const unsigned channels = flash_.config().channels;
  ++reads_on_one_channel_;
  read_addresses_.clear();
  read_entries_.clear();
  for (const isp::KvPlacement::PageRun& run : runs) {
    nand::PageAddress a = run.first;
    for (uint64_t k = 0; k < run.count / channels; ++k) {
      read_addresses_.push_back(a);
      read_entries_.push_back(run.entries);
      a.channel = channels - 1;  // one round of the channels on: the next die (or plane, page)
      placement_->layout().next(a);
    }
  }
  schedule_->assign(read_addresses_);
  schedule_->run(0, start, 0, nullptr, 0, &die_ready[0], flash_.channel(0).data_ins_end_ps(start));
  for (unsigned c = 0; c < channels; ++c) dies.take(*schedule_, c, start);

  const std::vector<nand::PipelineSchedule::Page>& pages = schedule_->pages_in_arrival_order();
  const size_t last_run = read_addresses_.size() - runs.back().count / channels;  // its first page
  auto arrival = [&](const nand::PipelineSchedule::Page& page, uint32_t copies) {
    read_arrivals_.push_back({page.arrival_ps, read_entries_[page.index], copies, page.index >= last_run});
  };
  read_arrivals_.clear();
  for (size_t group = 0; group < pages.size();) {
    size_t group_end = group + 1;
    while (group_end < pages.size() && pages[group_end].arrival_ps == pages[group].arrival_ps) ++group_end;
    if (group_end == group + 1) {
      arrival(pages[group], channels);
    } else {
      for (unsigned c = 0; c < channels; ++c) {
        for (size_t k = group; k < group_end; ++k) arrival(pages[k], 1);
      }
    }
    group = group_end;
  }
}

uint64_t Ssd::bus_start_between_pages(uint64_t now) const {
  if (!booked_bus_ || now >= booked_bus_end_ps_ || bus_.free_at().value() != booked_bus_end_ps_) return UINT64_MAX;
  const uint64_t rel = now - booked_bus_start_ps_;  // the booking was made at the read's start
  const BusSteps& b = *booked_bus_;
  const size_t arrived = size_t(std::upper_bound(b.arrival_ps.begin(), b.arrival_ps.end(), rel) - b.arrival_ps.begin());
  const uint64_t free = arrived == 0 ? b.prior_free_ps : b.free_ps[arrived - 1];
  return booked_bus_start_ps_ + std::max(rel, free);
}

// Page events would let the transfer in between the read's pages; the read's
// later pages are not pushed back by it (its occupancy, 1 us per 8 KB, is the error).
void Ssd::bus_transfer(uint64_t bytes, Done then) {
  const uint64_t start = bus_start_between_pages(now_ps());
  if (start == UINT64_MAX) {
    bus_.transfer(bytes, std::move(then));
    return;
  }
  const uint64_t occupancy = bus_.occupancy(bytes).value();
  bus_.book(core::ClockUse{0, occupancy, 1, bytes});
  if (then) at(start + occupancy + bus_.latency().value(), std::move(then));
}

bool Ssd::flash_free_for_aggregation() const {
  // Programs still to be issued would want the channels (data-in) during the
  // stream. Streams beside GC stay on page events: GC's batches are far longer
  // than an append's, and a stream that bars them (rather than suspending them
  // page by page) moved an aged drive's background writes by milliseconds and
  // the reads after it by more.
  return flash_.quiet_but_programs() && appender_.all_issued() && gc_jobs_open_ == 0;
}

void Ssd::at(uint64_t when_ps, Done what) {
  timers_.emplace(when_ps, std::move(what));
  timer_event_.notify(sc_core::sc_time::from_value(timers_.begin()->first - now_ps()));
}

void Ssd::on_timer() {
  const uint64_t now = now_ps();
  std::vector<Done> due;
  while (!timers_.empty() && timers_.begin()->first <= now) {
    due.push_back(std::move(timers_.begin()->second));
    timers_.erase(timers_.begin());
  }
  if (!timers_.empty()) timer_event_.notify(sc_core::sc_time::from_value(timers_.begin()->first - now));
  for (Done& d : due) d();
}

void Ssd::host_write(uint32_t layer, uint64_t token_begin, uint64_t token_end, uint64_t bytes, Done done,
                     uint32_t slot) {
  const std::string where = "ssd host write layer " + std::to_string(layer);
  check_layer(layer, where);
  const uint64_t per_entry = isp::kv_bytes_per_token(placement_->shape());
  if (bytes == 0 || bytes % per_entry != 0) {
    throw BadInput(where, std::to_string(bytes) + " bytes is not a positive whole number of " +
                              std::to_string(per_entry) + "-byte token KV entries");
  }
  const uint64_t entries = bytes / per_entry;
  if (token_end < token_begin || entries > token_end - token_begin) {
    throw BadInput(where, std::to_string(entries) + " token entries do not fit the token range [" +
                              std::to_string(token_begin) + ", " + std::to_string(token_end) + ")");
  }
  reserve_entries(slot, layer, entries, where);
  ++host_writes_;
  begin_call();
  fetch_commands(bytes, [this, slot, layer, entries, bytes, done = std::move(done)]() mutable {
    nvme_.link().transfer(
        link::Direction::HOST_TO_DEVICE, bytes, link::Purpose::KV_WRITE,
        [this, slot, layer, entries, bytes, done = std::move(done)]() mutable {
          nvme_.link().transfer(link::Direction::DEVICE_TO_HOST, nvme_.io_overhead_bytes_device_to_host(bytes),
                                link::Purpose::NVME_COMPLETION, nullptr);
          accept_entries(slot, layer, entries, bytes, std::move(done));
        });
  });
}

void Ssd::append(uint32_t layer, uint64_t tokens, uint64_t bytes, Done done, uint32_t slot) {
  const std::string where = "ssd append layer " + std::to_string(layer);
  check_layer(layer, where);
  const uint64_t per_entry = isp::kv_bytes_per_token(placement_->shape());
  if (tokens == 0 || bytes != tokens * per_entry) {
    throw BadInput(where, std::to_string(bytes) + " bytes for " + std::to_string(tokens) +
                              " tokens; expected tokens x " + std::to_string(per_entry) + " bytes (> 0)");
  }
  reserve_entries(slot, layer, tokens, where);
  ++appends_;
  begin_call();
  accept_entries(slot, layer, tokens, bytes, std::move(done));
}

void Ssd::reserve_entries(uint32_t slot, uint32_t layer, uint64_t entries, const std::string& where) {
  LayerAppends& l = appends(slot, layer);
  if (l.reserved + entries > placement_->slot_entries()) {
    throw BadInput(where, "appending " + std::to_string(entries) + " entries to " + std::to_string(l.reserved) +
                              " overflows the appended region of " + std::to_string(placement_->slot_entries()) +
                              " entries per layer");
  }
  l.reserved += entries;
}

void Ssd::to_write_buffer(uint64_t bytes, Done then) {
  const uint64_t buffer_start = now_ps();
  const uint64_t ticket = hold_energy(buffer_start);
  bus_transfer(bytes, [this, bytes, buffer_start, ticket, then = std::move(then)]() mutable {
    dram_write_bytes_ += bytes;
    dram_.transfer(bytes, [this, bytes, buffer_start, ticket, then = std::move(then)] {
      // Bus and DRAM energy over the time the data took to reach the write buffer.
      record(kBus, double(bytes) * config_.bus_joules_per_byte, buffer_start);
      record(kDram, double(bytes) * config_.dram_joules_per_byte, buffer_start);
      release_energy(ticket);
      then();
    });
  });
}

// The call's data goes to the write buffer; then the tiles it completes are programmed.
void Ssd::accept_entries(uint32_t slot, uint32_t layer, uint64_t entries, uint64_t bytes, Done done) {
  kv_written_bytes_ += bytes;
  to_write_buffer(bytes, [this, slot, layer, entries, done = std::move(done)]() mutable {
    LayerAppends& l = appends(slot, layer);
    l.entries += entries;
    const uint64_t tile = placement_->tokens_per_tile();
    const uint64_t full = l.entries / tile;
    if (full > l.programmed_tiles) {
      const uint64_t first = l.programmed_tiles * tile;
      l.programmed_tiles = full;
      l.partial_flushed = false;
      program_tiles(slot, layer, first, full * tile, std::move(done));
    } else {
      l.partial_flushed = false;  // the partial tile changed since any flush
      end_call(done);
    }
  });
}

void Ssd::store_write(uint64_t lpn, uint64_t pages, uint64_t bytes, Done done) {
  check_store(lpn, pages, "ssd store write");
  begin_call();
  fetch_commands(bytes, [this, lpn, pages, bytes, done = std::move(done)]() mutable {
    nvme_.link().transfer(
        link::Direction::HOST_TO_DEVICE, bytes, link::Purpose::KV_WRITE,
        [this, lpn, pages, bytes, done = std::move(done)]() mutable {
          nvme_.link().transfer(link::Direction::DEVICE_TO_HOST, nvme_.io_overhead_bytes_device_to_host(bytes),
                                link::Purpose::NVME_COMPLETION, nullptr);
          to_write_buffer(bytes, [this, lpn, pages, done = std::move(done)]() mutable {
            program_pages(written_pages(lpn, pages), std::move(done));
          });
        });
  });
}

void Ssd::store_trim(uint64_t lpn, uint64_t pages) {
  check_store(lpn, pages, "ssd store trim");
  translation_->trim(lpn, pages);
}

void Ssd::check_store(uint64_t lpn, uint64_t pages, const std::string& where) const {
  const uint64_t first = placement_->total_pages();
  if (pages == 0 || lpn < first || lpn + pages > first + store_pages_)
    throw BadInput(where, "pages [" + std::to_string(lpn) + ", " + std::to_string(lpn + pages) +
                              ") are outside the document store [" + std::to_string(first) + ", " +
                              std::to_string(first + store_pages_) + ")");
}

// One program batch. The batch's DRAM read and bus transfer are booked when it
// starts and overlap its programs (both are far faster than tIn + tPROG).
void Ssd::program_tiles(uint32_t slot, uint32_t layer, uint64_t first_entry, uint64_t end_entry, Done done) {
  const uint64_t base = appended_base(slot);  // whole tiles
  program_pages(translated_pages(layer, base + first_entry, base + end_entry), std::move(done));
}

// Where the FTL writes the batch's pages; the GC work it needed first runs now.
std::vector<nand::PageAddress> Ssd::translated_pages(uint32_t layer, uint64_t first_entry, uint64_t end_entry) {
  const uint64_t tile = placement_->tokens_per_tile();
  const uint64_t first_tile = first_entry / tile, end_tile = (end_entry + tile - 1) / tile;
  // A layer's appended tiles, KV heads minor, are consecutive logical pages.
  return written_pages(placement_->tile_index(layer, trace::KV_REGION_APPENDED, first_tile, 0),
                       (end_tile - first_tile) * placement_->kv_heads());
}

std::vector<nand::PageAddress> Ssd::written_pages(uint64_t lpn, uint64_t count) {
  const uint64_t hits_before = mapping_hits();
  std::vector<ftl::FlashOp> ops = translation_->write(lpn, count);
  run_mapping_updates(ops, mapping_hits() - hits_before);  // a cached mapping's reads before the programs
  std::vector<nand::PageAddress> pages;
  std::vector<ftl::FlashOp> gc;
  for (const ftl::FlashOp& op : ops) {
    if (op.cause != ftl::OpCause::kHost) {
      gc.push_back(op);
      continue;
    }
    for (uint64_t ppn = op.first; ppn < op.first + op.count; ++ppn) pages.push_back(translation_->address(ppn));
  }
  if (!gc.empty()) run_gc(std::move(gc));
  return pages;
}

void Ssd::program_pages(std::vector<nand::PageAddress> pages, Done done) {
  jobs_.push("program", [this, pages = std::move(pages),
                         done = std::move(done)](FlashJobQueue::Done release) mutable {
    const uint64_t bytes = uint64_t(pages.size()) * flash_.config().page_bytes;
    const uint64_t start = now_ps();
    const uint64_t ticket = hold_energy(start);
    ++program_jobs_;
    dram_read_bytes_ += bytes;
    dram_.transfer(bytes, nullptr);
    bus_transfer(bytes, nullptr);
    const uint64_t n = pages.size();
    program_batch_done_ = [this, n, bytes, start, ticket, release, done = std::move(done)] {
      pages_programmed_ += n;
      record(kDram, double(bytes) * config_.dram_joules_per_byte, start);
      record(kBus, double(bytes) * config_.bus_joules_per_byte, start);
      record_nand(0, n, bytes, start);
      release_energy(ticket);
      release();
      end_call(done);
    };
    appender_.start(std::move(pages), "ssd append");
  });
}

// Physical pages as the FTL listed them, in runs: a GC job can copy millions
// of pages, and only the chunk under way is expanded into addresses.
class Ssd::GcPages {
 public:
  void add(uint64_t first_ppn, uint64_t count) {
    if (count == 0) return;
    runs_.push_back({first_ppn, count});
    size_ += count;
  }
  uint64_t size() const { return size_; }
  // The next `n` pages' addresses (they are taken in order, chunk after chunk).
  std::vector<nand::PageAddress> take(uint64_t n, const FlashTranslation& translation) {
    std::vector<nand::PageAddress> pages;
    pages.reserve(n);
    for (; pages.size() < n; ++run_, offset_ = 0) {
      const Run& run = runs_[run_];
      for (; offset_ < run.count && pages.size() < n; ++offset_)
        pages.push_back(translation.address(run.first + offset_));
      if (offset_ < run.count) break;
    }
    return pages;
  }

 private:
  struct Run {
    uint64_t first, count;
  };
  std::vector<Run> runs_;
  uint64_t size_ = 0;
  size_t run_ = 0;       // the next page to take: runs_[run_], offset_ pages in
  uint64_t offset_ = 0;
};

// One GC job: its page reads, programs and erases, and when each stage ended.
struct Ssd::GcJob {
  GcPages reads, programs;  // the i-th page read is copied to the i-th programmed
  std::vector<nand::PageAddress> erases;
  uint64_t erased_blocks = 0;
  uint64_t start_ps = 0, read_end_ps = 0, program_end_ps = 0, ticket = 0;
  bool background = false;
  uint64_t copied = 0, chunk_end = 0;  // copies done; end of the chunk under way
  uint64_t epoch = 0;                  // the drive's activity epoch when a background job began
  uint64_t held_since_ps = 0;          // since when it holds the program lane
  FlashJobQueue::Done release;
};

void Ssd::run_gc(std::vector<ftl::FlashOp> ops, bool background) {
  auto job = std::make_shared<GcJob>();
  job->background = background;
  job->epoch = activity_epoch_;
  const ftl::Geometry& geometry = translation_->ftl().geometry();
  for (const ftl::FlashOp& op : ops) {
    if (op.kind == ftl::OpKind::kErase) {
      job->erased_blocks += op.count;
      // One erase per die and line: plane 0's block stands for the die's multi-plane erase.
      const nand::PageAddress block = geometry.block_address(op.first);
      if (block.plane == 0) job->erases.push_back(block);
      continue;
    }
    (op.kind == ftl::OpKind::kRead ? job->reads : job->programs).add(op.first, op.count);
  }
  if (job->reads.size() != job->programs.size()) throw std::logic_error("ssd: a GC job reads and programs unequally");
  jobs_.push("program", [this, job](FlashJobQueue::Done release) {
    ++gc_jobs_open_;
    job->start_ps = now_ps();
    job->ticket = hold_energy(job->start_ps);
    gc_hold(job, std::move(release));
  });
}

void Ssd::gc_hold(const std::shared_ptr<GcJob>& job, FlashJobQueue::Done release) {
  job->release = std::move(release);
  job->held_since_ps = now_ps();
  gc_read(job);
}

// The next chunk's reads: all the copies at once, or a background job's one page per plane.
void Ssd::gc_read(const std::shared_ptr<GcJob>& job) {
  const uint64_t chunk = job->background ? translation_->ftl().geometry().units() : job->reads.size();
  job->chunk_end = std::min(job->reads.size(), job->copied + chunk);
  gc_signal_.set(kGcRead);
  if (job->copied == job->chunk_end) return gc_program(job);
  gc_reader_.start(job->reads.take(job->chunk_end - job->copied, *translation_), [](uint32_t) {},
                   [this, job] { gc_program(job); }, "ssd gc");
}

void Ssd::gc_program(const std::shared_ptr<GcJob>& job) {
  job->read_end_ps = now_ps();
  gc_signal_.set(kGcProgram);
  if (job->copied == job->chunk_end) return gc_copied(job);
  program_batch_done_ = [this, job] { gc_copied(job); };
  appender_.start(job->programs.take(job->chunk_end - job->copied, *translation_), "ssd gc",
                  /*garbage_collection=*/true);
}

// A chunk is copied: erase when all are; else the next chunk, after the
// programs queued behind a background job if there are any.
void Ssd::gc_copied(const std::shared_ptr<GcJob>& job) {
  job->program_end_ps = now_ps();
  job->copied = job->chunk_end;
  if (job->copied == job->reads.size()) return gc_erase(job);
  if (!jobs_.waiting("program")) return gc_read(job);
  ++gc_yields_;
  gc_ps_ += now_ps() - job->held_since_ps;
  gc_signal_.set(kGcIdle);
  Done release = std::move(job->release);
  jobs_.push("program", [this, job](FlashJobQueue::Done again) { gc_hold(job, std::move(again)); });
  release();
}

void Ssd::gc_erase(const std::shared_ptr<GcJob>& job) {
  gc_signal_.set(kGcErase);
  erase_batch_done_ = [this, job] { gc_done(*job); };
  eraser_.start(job->erases, sc_core::sc_time(translation_->ftl().config().t_bers_us, sc_core::SC_US), "ssd gc");
}

void Ssd::gc_done(const GcJob& job) {
  const uint64_t page_bytes = flash_.config().page_bytes, end = now_ps();
  const uint64_t reads = job.reads.size(), programs = job.programs.size();
  gc_pages_read_ += reads;
  gc_pages_programmed_ += programs;
  gc_block_erases_ += job.erased_blocks;
  if (job.background) ++gc_background_lines_;
  gc_ps_ += end - job.held_since_ps;
  const double erase_j = double(job.erased_blocks) * translation_->ftl().config().erase_energy_j;
  gc_joules_ += erase_j + nand_energy_.read_joules(reads) + nand_energy_.program_joules(programs) +
                nand_energy_.transfer_joules((reads + programs) * page_bytes);
  record_nand(reads, programs, (reads + programs) * page_bytes, job.start_ps);
  record(kNand, erase_j, job.start_ps);
  if (timeline_) record_gc_spans(job, end);
  gc_signal_.set(kGcIdle);
  --gc_jobs_open_;
  release_energy(job.ticket);
  job.release();
  // A background job goes on with the next line while the drive stayed idle.
  if (job.background && job.epoch == activity_epoch_) start_background_gc();
  await_idle_gc();
}

// Its reads, programs (a background job's chunks as one copy span, yields
// included) and erases on the timeline.
void Ssd::record_gc_spans(const GcJob& job, uint64_t end) {
  const uint64_t page_bytes = flash_.config().page_bytes;
  const int64_t read_bytes = int64_t(job.reads.size() * page_bytes);
  const int64_t program_bytes = int64_t(job.programs.size() * page_bytes);
  if (job.background) {
    timeline_->span("ssd gc", "background gc copy", "gc", job.start_ps, job.program_end_ps,
                    {-1, -1, read_bytes + program_bytes});
  } else {
    timeline_->span("ssd gc", "gc read", "gc", job.start_ps, job.read_end_ps, {-1, -1, read_bytes});
    timeline_->span("ssd gc", "gc program", "gc", job.read_end_ps, job.program_end_ps, {-1, -1, program_bytes});
  }
  timeline_->span("ssd gc", "gc erase", "gc", job.program_end_ps, end);
}

void Ssd::await_idle_gc() {
  // Only while the run has work to come: the drive cannot tell, the simulation can.
  if (!idle() || idle_gc_epoch_ == activity_epoch_ || !sc_core::sc_pending_activity_at_future_time()) return;
  const ftl::FtlConfig& ftl = translation_->ftl().config();
  if (translation_->ftl().free_lines() >= ftl.background_free_lines()) return;
  idle_gc_epoch_ = activity_epoch_;
  const uint64_t idle_ps = uint64_t(std::llround(ftl.gc_idle_us * 1e6));
  at(now_ps() + idle_ps, [this, epoch = activity_epoch_] {
    idle_gc_epoch_ = UINT64_MAX;
    if (epoch == activity_epoch_) start_background_gc();
  });
}

void Ssd::start_background_gc() {
  if (!idle() || !sc_core::sc_pending_activity_at_future_time()) return;
  const uint64_t hits_before = mapping_hits();
  std::vector<ftl::FlashOp> ops = translation_->background_gc();
  if (ops.empty()) return;
  run_mapping_updates(ops, mapping_hits() - hits_before);  // a cached mapping's reads before the copies
  run_gc(std::move(ops), /*background=*/true);
}

const vcd::Encoding& Ssd::gc_encoding() {
  static const vcd::Encoding encoding{
      "gc_state", {{kGcIdle, "idle"}, {kGcRead, "gc_read"}, {kGcProgram, "gc_program"}, {kGcErase, "gc_erase"}}};
  return encoding;
}

void Ssd::on_erase_batch_done() {
  if (!erase_batch_done_) return;
  Done finished = std::move(erase_batch_done_);
  erase_batch_done_ = nullptr;
  finished();
}

void Ssd::on_program_batch_done() {
  if (!program_batch_done_) return;
  Done finished = std::move(program_batch_done_);
  program_batch_done_ = nullptr;
  finished();
}

void Ssd::attention(const isp::AttentionWork& work, Done done) {
  if (!computational_) throw std::logic_error(std::string(name()) + ": attention on a conventional SSD");
  isp::CheckedAttention op = engine_->check(work);  // BadInput before anything is queued; checked once
  ++attention_ops_;
  if (prefetch_ && !prefetch_->commanded) {  // its lookups were queued with the prefetch
    std::shared_ptr<Prefetch> p = prefetch_;
    p->commanded = true;
    p->op = std::move(op);
    p->done = std::move(done);
    if (p->started) {
      prefetch_.reset();
      run_attention(std::move(p->op), p->release, std::move(p->done));
    }
    return;
  }
  begin_call();
  look_up_mappings(attention_ranges(op));
  jobs_.push("attention", [this, op = std::move(op), done = std::move(done)](FlashJobQueue::Done release) mutable {
    run_attention(std::move(op), std::move(release), std::move(done));
  });
}

void Ssd::prefetch_attention(const isp::AttentionWork& work) {
  if (!computational_) throw std::logic_error(std::string(name()) + ": prefetch on a conventional SSD");
  if (prefetch_) throw std::logic_error(std::string(name()) + ": a second prefetch before the first one's command");
  auto p = std::make_shared<Prefetch>(engine_->check(work));
  ++prefetches_;
  begin_call();
  prefetch_ = p;
  look_up_mappings(attention_ranges(p->op));
  jobs_.push("attention", [this, p](FlashJobQueue::Done release) {
    p->started = true;
    p->release = std::move(release);
    if (p->commanded) {  // the command came while the job was queued
      prefetch_.reset();
      run_attention(std::move(p->op), p->release, std::move(p->done));
    } else {
      engine_->prefetch(p->op);
    }
  });
}

void Ssd::run_attention(isp::CheckedAttention op, FlashJobQueue::Done release, Done done) {
  const uint64_t start = now_ps();
  const uint64_t ticket = hold_energy(start);
  engine_->run(std::move(op), [this, start, ticket, release = std::move(release),
                               done = std::move(done)](const isp::AttentionTraffic& traffic) {
    // The op's own bytes, counted by the engine where they moved.
    record_nand(traffic.pages_read, 0, traffic.pages_read * flash_.config().page_bytes, start);
    record(kDram, double(traffic.dram_bytes) * config_.dram_joules_per_byte, start);
    record(kBus, double(traffic.bus_bytes) * config_.bus_joules_per_byte, start);
    release_energy(ticket);
    release();
    end_call(done);
  });
}

void Ssd::gemv_in_flash(uint64_t weight_bytes, uint64_t weight_elements, uint64_t rows, uint64_t input_bytes,
                        uint64_t output_bytes, Done done) {
  const InFlashGemvCost cost = gemv_->cost(weight_bytes, weight_elements, rows, input_bytes, output_bytes);
  ++gemv_ops_;
  begin_call();
  jobs_.push("gemv", [this, cost, done = std::move(done)](FlashJobQueue::Done release) mutable {
    const uint64_t start = now_ps();
    const uint64_t ticket = hold_energy(start);
    in_flash_.submit(cost.time, 0, [this, cost, start, ticket, release, done = std::move(done)] {
      gemv_pages_ += cost.pages;
      gemv_ps_ += cost.time.value();
      gemv_joules_ += cost.nand_joules + cost.pe_joules;
      record(kNand, cost.nand_joules, start);
      if (ledger_) ledger_->add(std::string(name()) + ".in_flash_pe", cost.pe_joules, start, now_ps());
      release_energy(ticket);
      release();
      end_call(done);
    });
  });
}

void Ssd::drain(Done done) {
  drain_waiters_.push_back(std::move(done));
  drain_check_.notify(sc_core::SC_ZERO_TIME);
}

void Ssd::trace(vcd::Writer& writer) {
  flash_.trace(writer);
  writer.add(std::string(name()) + ".gc", 2, gc_signal_, {vcd::Role::kController, -1, &gc_encoding()});
  dram_.trace(writer, {vcd::Role::kController});
  bus_.trace(writer, {vcd::Role::kController});
  firmware_.trace(writer, {vcd::Role::kController});
  engine_->trace(writer);
}

}  // namespace ispsim::ssd
