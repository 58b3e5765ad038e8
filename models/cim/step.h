// A step of a decode op on paper 1's platforms: the engines ("lanes") that work
// on it, and how they overlap. Two timings of the same step:
//   analytic  (paper 1 eq. 4): a pipelined step takes the eq.-(4) fold of its
//             lanes' eq.-(2)/(3) times with the platform's rho; a sequential
//             step (chunks = 1) their sum; repeated `repeat` times (pursuit
//             iterations are sequential, rho = 0 across them);
//   simulated (StepRunner): the lanes run as a pipeline of `chunks` equal
//             chunks on their SystemC resources (chunk j enters lane i+1 when
//             lane i finished it; each lane is FCFS), so an idle-system step
//             takes sum_i(o_i)/n + (n-1) max_i(o_i)/n plus set-up and latency
//             terms, and contention between steps that run at once shows up.
// Energy does not depend on the timing: each lane carries its eq.-(2)/(3) energy.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/cim/unit.h"

namespace ispsim::cim {

// The stage a step's time and energy are reported under (paper 1 Sec. 4 breakdown).
enum class Stage { WEIGHTS = 0, KV_WRITE, ATTENTION, PURSUIT, NONLINEAR, TRANSFERS };
constexpr int kStageCount = 6;
const char* to_string(Stage stage);  // "weights", "KV write", "KV read/attention", "pursuit", "nonlinear", "transfers"

struct Lane {
  Resource* resource = nullptr;
  double occupancy_ns = 0;  // per repetition, all chunks together (bytes / B or ops / P)
  double setup_ns = 0;      // t_o, paid once per repetition (first chunk)
  double latency_ns = 0;    // t_l, for the analytic time (the resource adds it in simulation)
  uint64_t bytes = 0;       // per repetition, for the statistics
  double energy_pj = 0;     // per repetition
  double analytic_ns() const { return setup_ns + latency_ns + occupancy_ns; }
};

struct Step {
  Stage stage = Stage::WEIGHTS;
  std::vector<Lane> lanes;
  uint32_t chunks = 1;  // 1: the lanes run one after another
  uint64_t repeat = 1;  // sequential repetitions (pursuit iterations)
  double rho = 0;       // eq. (4) overlap factor when chunks > 1
  double analytic_ns() const;
  double energy_pj() const;
};

// Runs one step on the resources and calls `done` when its last repetition ends.
// Owns nothing but its own progress; delete-on-finish is the caller's choice.
class StepRunner {
 public:
  StepRunner(const Step& step, Done done);
  void start();

 private:
  void start_repetition();
  void chunk_done(size_t lane, uint32_t chunk);
  void submit(size_t lane, uint32_t chunk);
  const Step& step_;
  Done done_;
  uint64_t repetition_ = 0;
  uint32_t finished_chunks_ = 0;
};

}  // namespace ispsim::cim
