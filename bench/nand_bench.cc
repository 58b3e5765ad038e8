// Simulated NAND page reads per wall-clock second, page-accurate mode, on the
// default flash (NandParams defaults) in SEQUENTIAL and PIPELINED modes; the
// aggregated streaming mode's event-free schedule of the same PIPELINED stream
// (nand::PipelineSchedule, ssd.stream_model = AGGREGATED); plus the bare
// SystemC kernel's timed SC_METHOD events per second on this machine as the
// ceiling to compare against.
//
//   ispsim_bench_nand [pages per mode, default 2000000] [kernel|sequential|pipelined|aggregated|all] [data-only]
// (the optional second argument runs only that part, e.g. for profiling;
// data-only sets every command, address and status cycle and turnaround time
// of the bus to 0, so that a transfer is its data alone)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <cstdlib>
#include <string>
#include <systemc>
#include <vector>

#include "models/nand/bus_protocol.h"
#include "models/nand/flash_array.h"
#include "models/nand/layout.h"
#include "models/nand/pipeline_schedule.h"
#include "models/nand/stream_reader.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// CPU time of this (single-threaded) process: the figure that does not depend on
// how many other jobs share the machine.
double cpu_seconds_since(std::clock_t c0) { return double(std::clock() - c0) / CLOCKS_PER_SEC; }

// One SC_METHOD that re-notifies itself `remaining` times, 1 ns apart.
struct Ticker : sc_core::sc_module {
  uint64_t remaining = 0;
  sc_core::sc_event tick;
  SC_HAS_PROCESS(Ticker);
  explicit Ticker(sc_core::sc_module_name name) : sc_core::sc_module(name) {
    SC_METHOD(on_tick);
    sensitive << tick;
    dont_initialize();
  }
  void on_tick() {
    if (remaining > 0) {
      --remaining;
      tick.notify(1, sc_core::SC_NS);
    }
  }
};

bool g_data_only = false;  // the bus carries the data alone (every bus-protocol time 0)

ispsim::schema::NandParams flash_params() {
  const ispsim::schema::NandParams defaults;
  return ispsim::schema::resolved(g_data_only ? ispsim::nand::data_only_bus(defaults) : defaults, "nand");
}

struct Mode {
  const char* label;
  ispsim::nand::FlashArray flash;
  ispsim::nand::StreamReader reader;
  Mode(const char* name, ispsim::schema::NandStreamParams::ReadMode mode)
      : label(name),
        flash((std::string(name) + "_nand").c_str(),
              ispsim::nand::FlashConfig::from_params(flash_params())),
        reader((std::string(name) + "_reader").c_str(), flash, make_stream(mode)) {}
  static ispsim::nand::StreamConfig make_stream(ispsim::schema::NandStreamParams::ReadMode mode) {
    ispsim::schema::NandStreamParams s;
    s.set_read_mode(mode);
    return ispsim::nand::StreamConfig::from_params(ispsim::schema::resolved(s, "stream"));
  }
};

}  // namespace

int sc_main(int argc, char** argv) {
  const uint64_t pages = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 2000000;
  if (pages == 0) {
    std::fprintf(stderr, "usage: ispsim_bench_nand [pages per mode > 0]\n");
    return 2;
  }
  const std::string part = argc > 2 ? argv[2] : "";
  const std::string only = part == "all" ? "" : part;
  g_data_only = argc > 3 && std::string(argv[3]) == "data-only";
  Ticker ticker("ticker");
  Mode sequential("sequential", ispsim::schema::NandStreamParams::SEQUENTIAL);
  Mode pipelined("pipelined", ispsim::schema::NandStreamParams::PIPELINED);

  // Kernel ceiling: timed SC_METHOD activations per wall second.
  const uint64_t ticks = only.empty() || only == "kernel" ? 10000000 : 0;
  ticker.remaining = ticks;
  ticker.tick.notify(sc_core::SC_ZERO_TIME);
  auto t0 = Clock::now();
  std::clock_t c0 = std::clock();
  sc_core::sc_start();
  const double kernel_wall = seconds_since(t0), kernel_cpu = cpu_seconds_since(c0);
  std::printf("empty kernel: %llu timed SC_METHOD events: %.3f s CPU = %.2f M events per CPU-second "
              "(%.3f s wall = %.2f M events/s wall)\n",
              (unsigned long long)ticks, kernel_cpu, ticks / kernel_cpu / 1e6, kernel_wall,
              ticks / kernel_wall / 1e6);

  for (Mode* mode : {&sequential, &pipelined}) {
    if (!only.empty() && only != mode->label) continue;
    const ispsim::nand::Layout layout(mode->flash.config());
    std::vector<ispsim::nand::PageAddress> list;
    list.reserve(pages);
    for (uint64_t i = 0; i < pages; ++i) list.push_back(layout.address(i % layout.capacity_pages()));
    const sc_core::sc_time sim_start = sc_core::sc_time_stamp();
    t0 = Clock::now();
    c0 = std::clock();
    mode->reader.start(std::move(list));
    sc_core::sc_start();
    const double wall = seconds_since(t0), cpu = cpu_seconds_since(c0);
    const double sim_s = (sc_core::sc_time_stamp() - sim_start).to_seconds();
    const double bytes = double(pages) * mode->flash.config().page_bytes;
    std::printf("%-10s: %llu pages (%.3f GB) in %.3f ms simulated = %.2f GB/s simulated bandwidth; "
                "%.3f s CPU = %.2f M pages per CPU-second (%.3f s wall = %.2f M pages/s wall)\n",
                mode->label, (unsigned long long)pages, bytes / 1e9, sim_s * 1e3, bytes / sim_s / 1e9,
                cpu, pages / cpu / 1e6, wall, pages / wall / 1e6);
  }
  if (only.empty() || only == "aggregated") {
    // The same PIPELINED stream, scheduled channel by channel without events
    // (2 buffers and the default consumer time per page, as the stream reader).
    const ispsim::nand::FlashConfig config =
        ispsim::nand::FlashConfig::from_params(flash_params());
    const ispsim::nand::StreamConfig stream = Mode::make_stream(ispsim::schema::NandStreamParams::PIPELINED);
    const ispsim::nand::Layout layout(config);
    std::vector<ispsim::nand::PageAddress> list;
    list.reserve(pages);
    for (uint64_t i = 0; i < pages; ++i) list.push_back(layout.address(i % layout.capacity_pages()));
    ispsim::nand::PipelineSchedule schedule(config);
    const uint64_t consume_ps = stream.consume_per_page.value();
    const std::vector<uint64_t> page_ps(list.size(), consume_ps);
    t0 = Clock::now();
    c0 = std::clock();
    uint64_t end_ps = 0;
    schedule.assign(list);
    for (unsigned c = 0; c < config.channels; ++c) {
      schedule.run(c, 0, stream.buffers_per_channel, page_ps.data());
      if (!schedule.pages_in_arrival_order().empty())
        end_ps = std::max(end_ps, schedule.pages_in_arrival_order().back().done_ps);
    }
    const double wall = seconds_since(t0), cpu = cpu_seconds_since(c0);
    const double sim_s = end_ps * 1e-12;
    const double bytes = double(pages) * config.page_bytes;
    std::printf("%-10s: %llu pages (%.3f GB) in %.3f ms simulated = %.2f GB/s simulated bandwidth; "
                "%.3f s CPU = %.2f M pages per CPU-second (%.3f s wall = %.2f M pages/s wall)\n",
                "aggregated", (unsigned long long)pages, bytes / 1e9, sim_s * 1e3, bytes / sim_s / 1e9, cpu,
                pages / cpu / 1e6, wall, pages / wall / 1e6);
  }
  return 0;
}
