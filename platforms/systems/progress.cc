#include "platforms/systems/progress.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <new>
#include <stdexcept>

namespace ispsim::systems {
namespace {

constexpr auto kFirstDraw = std::chrono::seconds(2);
constexpr auto kRedraw = std::chrono::milliseconds(500);

std::string duration_text(double seconds) {
  const long s = static_cast<long>(seconds + 0.5);
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", s / 3600, (s / 60) % 60);
  else if (s >= 60)
    std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%lds", s);
  return buf;
}

// ", ETA ..." for `done` of 1 after `elapsed_s`, when 0 < done < 1.
std::string eta_text(double done, double elapsed_s) {
  if (done <= 0 || done >= 1) return "";
  return ", ETA " + duration_text(elapsed_s * (1 - done) / done);
}

}  // namespace

// --- TerminalLine ---------------------------------------------------------------

TerminalLine::TerminalLine(bool enabled)
    : enabled_(enabled && isatty(STDERR_FILENO) == 1), next_draw_(started_ + kFirstDraw) {}

TerminalLine::~TerminalLine() {
  if (drawn_) std::fputs("\r\033[K", stderr);
}

bool TerminalLine::due() {
  if (!enabled_) return false;
  const Clock::time_point now = Clock::now();
  if (now < next_draw_) return false;
  next_draw_ = now + kRedraw;
  return true;
}

void TerminalLine::draw(const std::string& text) {
  std::fprintf(stderr, "\r\033[K%s", text.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

double TerminalLine::elapsed_s() const { return std::chrono::duration<double>(Clock::now() - started_).count(); }

// --- Progress -------------------------------------------------------------------

uint64_t op_work(const trace::Op& op, uint64_t kv_bytes_per_token, uint64_t page_bytes, uint64_t kv_passes) {
  if (page_bytes == 0) return 1;
  uint64_t bytes = 0;
  if (op.has_attention())
    for (const trace::KvSpan& span : op.attention().kv())
      bytes += (span.tokens().end() - span.tokens().begin()) * kv_bytes_per_token * kv_passes;
  if (op.has_kv_load()) bytes += op.kv_load().bytes();
  if (op.has_kv_append()) bytes += op.kv_append().bytes();
  return 1 + (bytes + page_bytes - 1) / page_bytes;
}

Progress::Progress(std::string label, std::vector<uint64_t> work, bool enabled, ProgressSlot* slot)
    : label_(std::move(label)), work_(std::move(work)), slot_(slot), terminal_(enabled) {
  figures_.total_ops = work_.size();
  for (uint64_t w : work_) figures_.total_work += w;
  if (slot_) slot_->total_work.store(figures_.total_work, std::memory_order_relaxed);
}

std::string Progress::line(const std::string& label, const Figures& f, const std::string& phase, double elapsed_s) {
  const double share =
      f.total_work ? static_cast<double>(f.done_work) / static_cast<double>(f.total_work) : 1.0;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s: %zu of %zu ops, %.1f %% of the work, simulated %.3f s%s%s", label.c_str(),
                f.done_ops, f.total_ops, 100 * share, static_cast<double>(f.simulated_ps) * 1e-12,
                phase.empty() ? "" : ", ", phase.c_str());
  return buf + eta_text(share, elapsed_s);
}

void Progress::completed(size_t index, uint64_t simulated_ps) {
  ++figures_.done_ops;
  figures_.done_work += work_[index];
  figures_.simulated_ps = simulated_ps;
  if (slot_) slot_->done_work.store(figures_.done_work, std::memory_order_relaxed);
  if (terminal_.due()) terminal_.draw(line(label_, figures_, phase_, terminal_.elapsed_s()));
}

// --- SharedProgress -------------------------------------------------------------

SharedProgress::SharedProgress(size_t slots) : size_(slots) {
  void* p = mmap(nullptr, sizeof(ProgressSlot) * (slots ? slots : 1), PROT_READ | PROT_WRITE,
                 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::runtime_error("cannot map shared memory for progress");
  slots_ = static_cast<ProgressSlot*>(p);
  for (size_t i = 0; i < slots; ++i) new (&slots_[i]) ProgressSlot();
}

SharedProgress::~SharedProgress() { munmap(slots_, sizeof(ProgressSlot) * (size_ ? size_ : 1)); }

// --- CompareProgress ------------------------------------------------------------

CompareProgress::CompareProgress(std::vector<std::string> names, SharedProgress& slots)
    : names_(std::move(names)), slots_(slots), finished_(names_.size(), 0), terminal_(true) {}

void CompareProgress::tick() {
  if (!terminal_.due()) return;
  std::vector<double> shares(names_.size(), -1.0);
  for (size_t i = 0; i < names_.size(); ++i) {
    const uint64_t total = slots_[i].total_work.load(std::memory_order_relaxed);
    if (finished_[i])
      shares[i] = 1.0;
    else if (total > 0)  // cannot reach 1 before the child has finished
      shares[i] = std::min(0.999, static_cast<double>(slots_[i].done_work.load(std::memory_order_relaxed)) /
                                      static_cast<double>(total));
  }
  terminal_.draw(line(names_, shares, terminal_.elapsed_s()));
}

std::string CompareProgress::line(const std::vector<std::string>& names, const std::vector<double>& shares,
                                  double elapsed_s) {
  size_t finished = 0;
  double sum = 0;
  std::string running;
  for (size_t i = 0; i < names.size(); ++i) {
    if (shares[i] >= 1.0) ++finished;
    if (shares[i] > 0) sum += shares[i];
    if (shares[i] < 0 || shares[i] >= 1.0) continue;
    char buf[32];
    std::snprintf(buf, sizeof buf, " %.1f %%", 100 * shares[i]);
    running += (running.empty() ? "; " : ", ") + names[i] + buf;
  }
  const double mean = names.empty() ? 1.0 : sum / static_cast<double>(names.size());
  return "compare: " + std::to_string(finished) + " of " + std::to_string(names.size()) + " platforms done" +
         running + eta_text(mean, elapsed_s);
}

}  // namespace ispsim::systems
