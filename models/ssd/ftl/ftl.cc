#include "models/ssd/ftl/ftl.h"

#include <algorithm>
#include <string>

#include "common/error.h"

namespace ispsim::ftl {

namespace {

void check_range(uint64_t lpn, uint64_t count, uint64_t capacity, const char* what) {
  if (count > capacity || lpn > capacity - count)
    throw BadInput("ftl", std::string(what) + " of logical pages [" + std::to_string(lpn) + ", " +
                              std::to_string(lpn + count) + ") is past the logical capacity of " +
                              std::to_string(capacity) + " pages");
}

}  // namespace

Ftl::Ftl(const FtlConfig& config)
    : config_(config),
      logical_pages_(config.logical_pages()),
      mapping_(new ExtentMap),
      lines_(config.geometry.lines()),
      erases_(config.geometry.blocks(), 0),
      block_valid_(config.geometry.blocks(), 0),
      fill_(config.geometry.units(), 0) {
  register_all();
  policy_ = gc_policies().create(to_string(config.gc_policy));
  residency_ = mapping_residencies().create(to_string(config.mapping), config_);
  for (uint64_t line = 0; line < lines_.size(); ++line) free_.emplace(0, line);
}

void Ftl::write(uint64_t lpn, uint64_t count, std::vector<FlashOp>* ops) {
  check_range(lpn, count, logical_pages_, "write");
  program(lpn, count, OpCause::kHost, ops);
}

void Ftl::trim(uint64_t lpn, uint64_t count) {
  check_range(lpn, count, logical_pages_, "TRIM");
  scratch_.clear();
  mapping_->unmap(lpn, count, scratch_);
  for (const PageRun& r : scratch_) counters_.trimmed_pages += r.count;
  invalidate(scratch_);
}

std::optional<uint64_t> Ftl::lookup(uint64_t lpn) const {
  const Segment s = mapping_->segment(lpn);
  if (!s.mapped) return std::nullopt;
  return s.run.ppn + (lpn - s.run.lpn);
}

bool Ftl::background_gc(std::vector<FlashOp>* ops) {
  if (free_.size() >= config_.background_free_lines()) return false;
  return collect_victim(ops);
}

double Ftl::waf() const {
  return counters_.host_pages == 0 ? 1.0 : double(counters_.programs()) / double(counters_.host_pages);
}

std::array<uint64_t, Ftl::kEraseBuckets> Ftl::erase_histogram() const {
  std::array<uint64_t, kEraseBuckets> buckets{};
  for (uint32_t e : erases_) {
    size_t b = 0;
    for (uint64_t bound = 1; b + 1 < kEraseBuckets && e >= bound; bound *= 10) ++b;
    ++buckets[b];
  }
  return buckets;
}

uint64_t Ftl::retired_lines() const {
  return uint64_t(std::count_if(lines_.begin(), lines_.end(),
                                [](const Line& l) { return l.state == LineState::kRetired; }));
}

void Ftl::program(uint64_t lpn, uint64_t count, OpCause cause, std::vector<FlashOp>* ops) {
  while (count > 0) {
    uint64_t n = cause == OpCause::kHost ? home_run(lpn, count) : 0;
    uint64_t ppn = lpn, at = 0;
    if (n > 0) {
      at = place_home(lpn, n);
    } else {
      if (!open_ || used_ == geometry().line_pages()) open_line(ops);
      ppn = place(lpn, count, n);
      at = *open_;
    }
    scratch_.clear();
    mapping_->map(PageRun{lpn, ppn, n}, scratch_);
    invalidate(scratch_);
    add_valid(ppn, n, +1);
    Line& line = lines_[at];
    if (!line.written.empty() && line.written.back().lpn + line.written.back().count == lpn &&
        line.written.back().ppn + line.written.back().count == ppn)
      line.written.back().count += n;
    else
      line.written.push_back(PageRun{lpn, ppn, n});
    if (ops) ops->push_back(FlashOp{OpKind::kProgram, cause, ppn, n});
    residency_->access(lpn, n, /*update=*/true, ops);  // the entries now point at ppn
    if (cause == OpCause::kHost) counters_.host_pages += n, clock_ += n;
    if (cause == OpCause::kGc) counters_.gc_pages += n;
    if (cause == OpCause::kWearLeveling) counters_.wl_pages += n;
    line.last_write = clock_;
    lpn += n;
    count -= n;
  }
}

uint64_t Ftl::home_run(uint64_t lpn, uint64_t count) const {
  const uint64_t line_pages = geometry().line_pages(), line = lpn / line_pages, slot = lpn % line_pages;
  const uint64_t room = std::min(count, line_pages - slot);
  const Line& l = lines_[line];
  if (l.state == LineState::kFree)  // a line never written (an erased one has erases)
    return line_erases(line) == 0 && free_.size() > config_.foreground_free_lines() ? room : 0;
  if (l.home.empty()) return 0;
  uint64_t n = 0;
  while (n < room && !home_programmed(l, slot + n)) ++n;
  return n;
}

uint64_t Ftl::place_home(uint64_t lpn, uint64_t n) {
  const uint64_t line_pages = geometry().line_pages(), line = lpn / line_pages, slot = lpn % line_pages;
  Line& l = lines_[line];
  if (l.state == LineState::kFree) {
    free_.erase({line_erases(line), line});
    l.state = LineState::kClosed;
    if (n == line_pages) return line;  // the whole line at once: full
    l.home.assign((line_pages + 63) / 64, 0);
  }
  for (uint64_t s = slot; s < slot + n; ++s) l.home[s / 64] |= uint64_t{1} << (s % 64);
  l.home_pages += n;
  if (l.home_pages == line_pages) {  // full: nothing more goes home here
    l.home.clear();
    l.home.shrink_to_fit();
    l.home_pages = 0;
  }
  return line;
}

uint64_t Ftl::place(uint64_t lpn, uint64_t count, uint64_t& n) {
  const uint64_t units = geometry().units(), line_pages = geometry().line_pages();
  const uint64_t base = *open_ * line_pages;
  if (lockstep_ && lpn % units == used_ % units) {  // the frontier's next slot is the page's home unit
    n = std::min(count, line_pages - used_);
    const uint64_t ppn = base + used_;
    set_lockstep_fill(used_ + n);
    return ppn;
  }
  lockstep_ = false;
  // Each page at the next free page of its home unit, or, when that block is
  // full, of the unit with the most room; as long as they follow each other physically.
  uint64_t ppn = 0;
  for (n = 0; n < count && used_ < line_pages; ++n) {
    uint64_t unit = (lpn + n) % units;
    if (fill_[unit] == geometry().pages_per_block)
      unit = uint64_t(std::min_element(fill_.begin(), fill_.end()) - fill_.begin());
    const uint64_t at = base + uint64_t(fill_[unit]) * units + unit;
    if (n == 0) ppn = at;
    else if (at != ppn + n) break;
    ++fill_[unit];
    ++used_;
  }
  return ppn;
}

void Ftl::set_lockstep_fill(uint64_t used) {
  const uint64_t units = geometry().units();
  used_ = used;
  for (uint64_t u = 0; u < units; ++u) fill_[u] = uint32_t(used / units + (u < used % units ? 1 : 0));
}

bool Ftl::programmed_in_open_line(uint64_t ppn, uint64_t count) const {
  const uint64_t units = geometry().units(), line_pages = geometry().line_pages();
  for (uint64_t p = ppn; p < ppn + count; ++p)
    if (p % line_pages / units >= fill_[p % units]) return false;
  return true;
}

void Ftl::open_line(std::vector<FlashOp>* ops) {
  if (open_) lines_[*open_].state = LineState::kClosed;
  open_.reset();
  if (free_.empty())
    throw WornOut("ftl: the drive is worn out: " + std::to_string(retired_lines()) + " of " +
                  std::to_string(lines_.size()) + " lines retired at " +
                  std::to_string(config_.endurance_pe_cycles) + " P/E cycles, no free line left to write");
  const uint64_t line = free_.begin()->second;
  free_.erase(free_.begin());
  lines_[line].state = LineState::kOpen;
  open_ = line;
  lockstep_ = true;
  set_lockstep_fill(0);
  if (collecting_) return;  // GC's own copies never start another GC
  run_foreground_gc(ops);
  level_wear(ops);
}

void Ftl::run_foreground_gc(std::vector<FlashOp>* ops) {
  while (free_.size() < config_.foreground_free_lines())
    if (!collect_victim(ops))
      throw WornOut("ftl: the drive is worn out: no line can be reclaimed (" + std::to_string(retired_lines()) +
                    " of " + std::to_string(lines_.size()) + " lines retired)");
}

bool Ftl::collect_victim(std::vector<FlashOp>* ops) {
  std::vector<LineInfo> closed;
  for (uint64_t line = 0; line < lines_.size(); ++line)
    if (lines_[line].state == LineState::kClosed)
      closed.push_back(LineInfo{line, lines_[line].valid, lines_[line].last_write});
  if (closed.empty()) return false;
  const uint64_t victim = policy_->select(closed, geometry().line_pages(), clock_);
  if (lines_[victim].valid >= geometry().line_pages()) return false;  // nothing to gain
  reclaim(victim, OpCause::kGc, ops);
  ++counters_.gc_lines;
  return true;
}

void Ftl::level_wear(std::vector<FlashOp>* ops) {
  uint32_t most = 0, least = UINT32_MAX;
  uint64_t coldest = 0;
  for (uint64_t line = 0; line < lines_.size(); ++line) {
    if (lines_[line].state == LineState::kRetired) continue;
    most = std::max(most, line_erases(line));
    if (lines_[line].state == LineState::kClosed && line_erases(line) < least)
      least = line_erases(line), coldest = line;
  }
  if (least == UINT32_MAX || most - least <= config_.static_wear_leveling_threshold) return;
  reclaim(coldest, OpCause::kWearLeveling, ops);
  ++counters_.wl_lines;
}

void Ftl::reclaim(uint64_t line, OpCause cause, std::vector<FlashOp>* ops) {
  const bool was_collecting = collecting_;
  collecting_ = true;
  // A written run's pages are still valid where the mapping sends the same
  // logical pages to the same physical pages (the same lpn-to-ppn offset).
  // Copied in physical order, runs that continue each other joined: pages
  // reach their home units out of write order, and a loaded drive state keeps
  // the runs of the mapping, so this way both copy alike.
  for (const PageRun& r : physical_runs(lines_[line].written)) {
    for (uint64_t x = r.lpn; x < r.lpn + r.count;) {
      const Segment s = mapping_->segment(x);
      const uint64_t stop = std::min(r.lpn + r.count, s.mapped ? s.run.lpn + s.run.count : x + s.run.count);
      if (s.mapped && s.run.ppn + r.lpn == r.ppn + s.run.lpn)
        relocate(x, r.ppn + (x - r.lpn), stop - x, cause, ops);
      x = stop;
    }
  }
  collecting_ = was_collecting;
  if (lines_[line].valid != 0)
    throw std::logic_error("ftl: line " + std::to_string(line) + " keeps " + std::to_string(lines_[line].valid) +
                           " valid pages after its copies");
  erase(line, cause, ops);
}

std::vector<PageRun> Ftl::physical_runs(std::vector<PageRun> runs) {
  std::sort(runs.begin(), runs.end(), [](const PageRun& a, const PageRun& b) { return a.ppn < b.ppn; });
  std::vector<PageRun> joined;
  for (const PageRun& r : runs) {
    if (!joined.empty() && joined.back().ppn + joined.back().count == r.ppn &&
        joined.back().lpn + joined.back().count == r.lpn)
      joined.back().count += r.count;
    else
      joined.push_back(r);
  }
  return joined;
}

void Ftl::relocate(uint64_t lpn, uint64_t ppn, uint64_t count, OpCause cause, std::vector<FlashOp>* ops) {
  if (ops) ops->push_back(FlashOp{OpKind::kRead, cause, ppn, count});
  program(lpn, count, cause, ops);
}

void Ftl::erase(uint64_t line, OpCause cause, std::vector<FlashOp>* ops) {
  Line& l = lines_[line];
  l.written.clear();
  l.written.shrink_to_fit();
  l.home.clear();
  l.home.shrink_to_fit();
  l.home_pages = 0;
  const uint64_t units = geometry().units();
  for (uint64_t block = line * units; block < (line + 1) * units; ++block) {
    ++erases_[block];
    if (ops) ops->push_back(FlashOp{OpKind::kErase, cause, block, 1});
  }
  counters_.block_erases += units;
  if (line_erases(line) >= config_.endurance_pe_cycles)
    l.state = LineState::kRetired;
  else
    free_line(line);
}

void Ftl::free_line(uint64_t line) {
  lines_[line].state = LineState::kFree;
  free_.emplace(line_erases(line), line);
}

void Ftl::add_valid(uint64_t ppn, uint64_t count, int delta) {
  const uint64_t line_pages = geometry().line_pages(), units = geometry().units();
  while (count > 0) {
    const uint64_t line = ppn / line_pages, first = ppn % line_pages;
    const uint64_t n = std::min(count, line_pages - first);
    // Slots first .. first + n - 1 hit unit u n / units times, once more for
    // the first n mod units units after `first`'s.
    for (uint64_t u = 0; u < units; ++u) {
      const uint64_t k0 = (u + units - first % units) % units;
      const uint64_t pages = n / units + (k0 < n % units ? 1 : 0);
      block_valid_[line * units + u] += uint32_t(delta * int64_t(pages));
    }
    lines_[line].valid += uint64_t(delta * int64_t(n));
    ppn += n;
    count -= n;
  }
}

void Ftl::invalidate(const std::vector<PageRun>& runs) {
  for (const PageRun& r : runs) add_valid(r.ppn, r.count, -1);
}

const char* to_string(OpKind kind) {
  switch (kind) {
    case OpKind::kRead: return "read";
    case OpKind::kProgram: return "program";
    case OpKind::kErase: return "erase";
  }
  return "?";
}

const char* to_string(OpCause cause) {
  switch (cause) {
    case OpCause::kHost: return "host";
    case OpCause::kGc: return "gc";
    case OpCause::kWearLeveling: return "wear_leveling";
    case OpCause::kMapping: return "mapping";
  }
  return "?";
}

}  // namespace ispsim::ftl
