#include "models/cim/step.h"

#include <cmath>
#include <stdexcept>

#include "models/cim/cost.h"

namespace ispsim::cim {

namespace {

sc_core::sc_time ns(double value) {
  return sc_core::sc_time::from_value(static_cast<uint64_t>(std::llround(value * 1e3)));
}

}  // namespace

const char* to_string(Stage stage) {
  switch (stage) {
    case Stage::WEIGHTS: return "weights";
    case Stage::KV_WRITE: return "KV write";
    case Stage::ATTENTION: return "KV read/attention";
    case Stage::PURSUIT: return "pursuit";
    case Stage::NONLINEAR: return "nonlinear";
    case Stage::TRANSFERS: return "transfers";
  }
  return "?";
}

double Step::analytic_ns() const {
  std::vector<double> times;
  double sum = 0;
  for (const Lane& l : lanes) {
    times.push_back(l.analytic_ns());
    sum += l.analytic_ns();
  }
  const double once = chunks > 1 ? overlap_ns(times, rho) : sum;
  return once * static_cast<double>(repeat);
}

double Step::energy_pj() const {
  double e = 0;
  for (const Lane& l : lanes) e += l.energy_pj;
  return e * static_cast<double>(repeat);
}

StepRunner::StepRunner(const Step& step, Done done) : step_(step), done_(std::move(done)) {
  if (step.lanes.empty() || step.chunks == 0 || step.repeat == 0)
    throw std::logic_error("cim: a step needs lanes, chunks and repetitions");
}

void StepRunner::start() { start_repetition(); }

void StepRunner::start_repetition() {
  finished_chunks_ = 0;
  for (uint32_t c = 0; c < step_.chunks; ++c) submit(0, c);
}

void StepRunner::submit(size_t lane, uint32_t chunk) {
  const Lane& l = step_.lanes[lane];
  const double n = step_.chunks;
  const uint64_t bytes = l.bytes / step_.chunks + (chunk == 0 ? l.bytes % step_.chunks : 0);
  l.resource->submit(ns(chunk == 0 ? l.setup_ns : 0.0), ns(l.occupancy_ns / n), bytes, l.energy_pj / n,
                     [this, lane, chunk] { chunk_done(lane, chunk); });
}

void StepRunner::chunk_done(size_t lane, uint32_t chunk) {
  if (lane + 1 < step_.lanes.size()) return submit(lane + 1, chunk);
  if (++finished_chunks_ < step_.chunks) return;
  if (++repetition_ < step_.repeat) return start_repetition();
  Done done = std::move(done_);
  done();
}

}  // namespace ispsim::cim
