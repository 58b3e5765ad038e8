// core_bench: what a traced signal costs on a hot path. Prints figures; asserts
// nothing (speed is measured, not tested). Run:
//   build/<dir>/tests/models/core/core_bench [activations]
// One SystemC model: an SC_METHOD woken every 1 ns sets 8 signals to new values.
// The same model runs in phases with no writer, a writer whose filter matches
// nothing, a writer with a 1 % time window, and a writer recording everything.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <systemc>
#include <vector>

#include "models/core/vcd.h"

namespace {

using ispsim::vcd::Signal;

class Toggler : public sc_core::sc_module {
 public:
  std::vector<Signal> signals{8};
  uint64_t activations = 0;

  explicit Toggler(sc_core::sc_module_name name) : sc_module(name) {
    SC_HAS_PROCESS(Toggler);
    SC_METHOD(step);
    dont_initialize();
    sensitive << tick_;
    tick_.notify(sc_core::SC_ZERO_TIME);
  }

 private:
  void step() {
    ++activations;
    for (size_t i = 0; i < signals.size(); ++i) signals[i].set(activations * (i + 1));
    tick_.notify(1, sc_core::SC_NS);
  }
  sc_core::sc_event tick_;
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int sc_main(int argc, char** argv) {
  const uint64_t activations = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 2000000;
  Toggler toggler("top");
  const std::string path = "/tmp/core_bench.vcd";

  struct Phase {
    const char* label;
    bool writer;
    std::vector<std::string> filters;
    double window_fraction;  // of the phase, from its start
  };
  const std::vector<Phase> phases = {
      {"no writer", false, {}, 1.0},
      {"writer, filter matches nothing", true, {"nothing.*"}, 1.0},
      {"writer, all signals, 1% window", true, {}, 0.01},
      {"writer, all signals, whole run", true, {}, 1.0},
  };
  std::printf("%-34s %12s %14s %14s %12s\n", "phase", "wall [s]", "sets [M/s]", "ns per set", "VCD [bytes]");
  for (const Phase& phase : phases) {
    const uint64_t start_ps = sc_core::sc_time_stamp().value();  // resolution 1 ps
    const uint64_t phase_ps = activations * 1000;
    ispsim::vcd::Options opts;
    opts.path = path;
    opts.filters = phase.filters;
    opts.window_begin_ps = start_ps;
    opts.window_end_ps = start_ps + static_cast<uint64_t>(phase_ps * phase.window_fraction);
    std::unique_ptr<ispsim::vcd::Writer> writer;
    if (phase.writer) {
      writer = std::make_unique<ispsim::vcd::Writer>(opts);
      for (size_t i = 0; i < toggler.signals.size(); ++i)
        writer->add("top.s" + std::to_string(i), 32, toggler.signals[i]);
    }
    const auto start = std::chrono::steady_clock::now();
    const uint64_t before = toggler.activations;
    sc_core::sc_start(sc_core::sc_time(static_cast<double>(activations), sc_core::SC_NS));
    if (writer) writer->close();
    const double wall = seconds_since(start);
    const double sets = static_cast<double>(toggler.activations - before) * toggler.signals.size();
    long bytes = 0;
    if (writer) {
      if (FILE* f = std::fopen(path.c_str(), "rb")) {
        std::fseek(f, 0, SEEK_END);
        bytes = std::ftell(f);
        std::fclose(f);
      }
    }
    std::printf("%-34s %12.3f %14.2f %14.1f %12ld\n", phase.label, wall, sets / wall / 1e6, wall / sets * 1e9, bytes);
  }
  std::remove(path.c_str());
  std::printf("(%llu activations of one SC_METHOD per phase, 8 signal sets each; wall time includes the kernel)\n",
              static_cast<unsigned long long>(activations));
  return 0;
}
