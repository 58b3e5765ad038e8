#include "platforms/systems/progress.h"

#include <unistd.h>

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

}  // namespace

Progress::Progress(std::string label, size_t total_ops, bool enabled)
    : label_(std::move(label)),
      total_ops_(total_ops),
      enabled_(enabled && isatty(STDERR_FILENO) == 1),
      next_draw_(started_ + kFirstDraw) {}

Progress::~Progress() {
  if (drawn_) std::fputs("\r\033[K", stderr);
}

std::string Progress::line(const std::string& label, size_t done_ops, size_t total_ops, uint64_t simulated_ps,
                           const std::string& phase, double elapsed_s) {
  const double share = total_ops ? static_cast<double>(done_ops) / static_cast<double>(total_ops) : 1.0;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s: %5.1f %% of %zu ops, simulated %.3f s%s%s", label.c_str(), 100 * share,
                total_ops, static_cast<double>(simulated_ps) * 1e-12, phase.empty() ? "" : ", ", phase.c_str());
  std::string text = buf;
  if (done_ops > 0 && done_ops < total_ops)
    text += ", ETA " + duration_text(elapsed_s * static_cast<double>(total_ops - done_ops) / static_cast<double>(done_ops));
  return text;
}

void Progress::update(size_t done_ops, uint64_t simulated_ps) {
  if (!enabled_) return;
  const Clock::time_point now = Clock::now();
  if (now < next_draw_) return;
  next_draw_ = now + kRedraw;
  const double elapsed = std::chrono::duration<double>(now - started_).count();
  std::fprintf(stderr, "\r\033[K%s", line(label_, done_ops, total_ops_, simulated_ps, phase_, elapsed).c_str());
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace ispsim::systems
