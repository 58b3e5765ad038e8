#include "models/ssd/ftl/drive_state.h"

#include <algorithm>
#include <cstring>

#include "common/atomic_file.h"
#include "common/crc32c.h"
#include "common/error.h"
#include "common/input_file.h"

namespace ispsim::ftl {

namespace {

constexpr char kMagic[8] = {'I', 'S', 'P', 'F', 'T', 'L', '\r', '\n'};
constexpr uint64_t kNone = UINT64_MAX;

template <class T>
void put(std::string& out, T value) {
  char bytes[sizeof(T)];
  for (size_t i = 0; i < sizeof(T); ++i) bytes[i] = char(uint64_t(value) >> (8 * i));
  out.append(bytes, sizeof(T));
}

}  // namespace

class StateReader {
 public:
  StateReader(const std::string& data, const std::string& path) : data_(data), path_(path) {}
  template <class T>
  T get() {
    if (data_.size() - pos_ < sizeof(T)) throw BadInput(path_, "truncated drive state");
    uint64_t v = 0;
    for (size_t i = 0; i < sizeof(T); ++i) v |= uint64_t(uint8_t(data_[pos_ + i])) << (8 * i);
    pos_ += sizeof(T);
    return T(v);
  }
  bool at_end() const { return pos_ == data_.size(); }

 private:
  const std::string& data_;
  const std::string& path_;
  size_t pos_ = 0;
};

namespace {

std::vector<uint64_t*> counter_fields(FtlCounters& c) {
  return {&c.host_pages, &c.gc_pages,      &c.wl_pages, &c.trimmed_pages,
          &c.block_erases, &c.gc_lines, &c.wl_lines};
}

void put_geometry(std::string& out, const Geometry& g, uint64_t logical_pages) {
  for (uint32_t v : {g.channels, g.dies_per_channel, g.planes_per_die, g.blocks_per_plane, g.pages_per_block,
                     g.page_bytes})
    put<uint32_t>(out, v);
  put<uint64_t>(out, logical_pages);
}

// The file's bytes after the magic, version and checksum were checked.
std::string checked_body(const std::string& path) {
  std::string data = read_input_file(path, uint64_t{1} << 40);
  if (data.size() < sizeof(kMagic) + 12 || std::memcmp(data.data(), kMagic, sizeof(kMagic)) != 0)
    throw BadInput(path, "not an ispsim drive state (no ISPFTL header)");
  StateReader header(data, path);
  for (size_t i = 0; i < sizeof(kMagic); ++i) header.get<uint8_t>();
  const uint32_t version = header.get<uint32_t>();
  if (version != DriveState::kVersion)
    throw BadInput(path, "drive state version " + std::to_string(version) + ", this build reads version " +
                             std::to_string(DriveState::kVersion));
  const std::string checksum = data.substr(data.size() - 4);
  const uint32_t stored = StateReader(checksum, path).get<uint32_t>();
  data.resize(data.size() - 4);
  if (crc32c(data.data(), data.size()) != stored) throw BadInput(path, "drive state checksum mismatch (corrupt file)");
  return data.substr(sizeof(kMagic) + 8);
}

}  // namespace

void DriveState::save(const Ftl& ftl, const std::string& path) {
  const std::string out = serialize(ftl);
  AtomicFile file(path, true);
  file.stream().write(out.data(), std::streamsize(out.size()));
  file.commit();
}

std::string DriveState::serialize(const Ftl& ftl) {
  std::string out(kMagic, sizeof(kMagic));
  put<uint32_t>(out, kVersion);
  put<uint32_t>(out, 0);
  put_geometry(out, ftl.geometry(), ftl.logical_pages());
  FtlCounters counters = ftl.counters_;
  for (uint64_t* v : counter_fields(counters)) put<uint64_t>(out, *v);
  put<uint64_t>(out, ftl.clock_);
  put<uint64_t>(out, ftl.open_ ? *ftl.open_ : kNone);
  for (uint32_t f : ftl.fill_) put<uint32_t>(out, f);
  for (const Ftl::Line& l : ftl.lines_) {
    put<uint8_t>(out, uint8_t(l.state));
    put<uint64_t>(out, l.last_write);
    put<uint8_t>(out, l.home.empty() ? 0 : 1);
    for (uint64_t word : l.home) put<uint64_t>(out, word);
  }
  for (uint32_t e : ftl.erases_) put<uint32_t>(out, e);
  put<uint64_t>(out, ftl.mapping_->entries());
  ftl.mapping_->for_each([&](const PageRun& r) {
    put<uint64_t>(out, r.lpn);
    put<uint64_t>(out, r.ppn);
    put<uint64_t>(out, r.count);
  });
  put<uint32_t>(out, crc32c(out.data(), out.size()));
  return out;
}

namespace {

void check_geometry(StateReader& r, const Ftl& ftl, const std::string& path) {
  Geometry g;
  for (uint32_t* v : {&g.channels, &g.dies_per_channel, &g.planes_per_die, &g.blocks_per_plane,
                      &g.pages_per_block, &g.page_bytes})
    *v = r.get<uint32_t>();
  const uint64_t logical = r.get<uint64_t>();
  if (!(g == ftl.geometry()) || logical != ftl.logical_pages())
    throw BadInput(path, "drive state of another drive: " + std::to_string(g.physical_pages()) + " physical / " +
                             std::to_string(logical) + " logical pages of " + std::to_string(g.page_bytes) +
                             " bytes, the configured drive has " + std::to_string(ftl.geometry().physical_pages()) +
                             " / " + std::to_string(ftl.logical_pages()) + " of " +
                             std::to_string(ftl.geometry().page_bytes) + " (same geometry and spare factor needed)");
}

}  // namespace

void DriveState::check_open_line(const Ftl& s, const std::string& path) {
  const auto open_lines = std::count_if(s.lines_.begin(), s.lines_.end(),
                                        [](const Ftl::Line& l) { return l.state == Ftl::LineState::kOpen; });
  const bool ok = s.open_ ? *s.open_ < s.lines_.size() && s.lines_[*s.open_].state == Ftl::LineState::kOpen &&
                                open_lines == 1
                          : open_lines == 0;
  if (!ok) throw BadInput(path, "inconsistent drive state: the open line does not match the line states");
}

void DriveState::restore_line(Ftl& s, uint64_t line, StateReader& r, const std::string& path) {
  const std::string where = "line " + std::to_string(line);
  const uint8_t state = r.get<uint8_t>();
  if (state > uint8_t(Ftl::LineState::kRetired)) throw BadInput(path, where + ": bad state");
  Ftl::Line& l = s.lines_[line];
  l.state = Ftl::LineState(state);
  l.last_write = r.get<uint64_t>();
  const uint8_t home = r.get<uint8_t>();
  if (home > 1) throw BadInput(path, where + ": bad home flag");
  if (home == 0) return;
  const uint64_t line_pages = s.geometry().line_pages();
  l.home.resize((line_pages + 63) / 64);
  for (uint64_t& word : l.home) {
    word = r.get<uint64_t>();
    l.home_pages += uint64_t(__builtin_popcountll(word));
  }
  const bool past_end = line_pages % 64 != 0 && (l.home.back() >> (line_pages % 64)) != 0;
  if (l.state != Ftl::LineState::kClosed || l.home_pages == 0 || l.home_pages >= line_pages || past_end)
    throw BadInput(path, "inconsistent drive state: " + where + " is not a closed home line with free pages");
}

void DriveState::restore_fill(Ftl& s, const std::vector<uint32_t>& fill, const std::string& path) {
  uint64_t used = 0;
  for (uint32_t f : fill) {
    if (f > s.geometry().pages_per_block)
      throw BadInput(path, "inconsistent drive state: an open block written past its last page");
    used += f;
  }
  s.set_lockstep_fill(used);
  s.lockstep_ = s.fill_ == fill;
  s.fill_ = fill;
}

void DriveState::restore_extent(Ftl& s, const PageRun& run, const std::string& path) {
  const uint64_t line_pages = s.geometry().line_pages();
  const std::string where = "extent of logical pages " + std::to_string(run.lpn) + "+" + std::to_string(run.count);
  if (run.count == 0 || run.count > s.logical_pages() || run.lpn > s.logical_pages() - run.count ||
      run.count > s.geometry().physical_pages() || run.ppn > s.geometry().physical_pages() - run.count)
    throw BadInput(path, where + ": outside the drive");
  s.scratch_.clear();
  s.mapping_->map(run, s.scratch_);
  if (!s.scratch_.empty()) throw BadInput(path, where + ": overlaps another extent");
  for (uint64_t done = 0; done < run.count;) {
    const uint64_t ppn = run.ppn + done, line = ppn / line_pages;
    const uint64_t n = std::min(run.count - done, line_pages - ppn % line_pages);
    const Ftl::Line& l = s.lines_[line];
    bool written = l.state == Ftl::LineState::kClosed || (l.state == Ftl::LineState::kOpen && s.programmed_in_open_line(ppn, n));
    for (uint64_t slot = ppn % line_pages; written && !l.home.empty() && slot < ppn % line_pages + n; ++slot)
      written = Ftl::home_programmed(l, slot);
    if (!written) throw BadInput(path, where + ": maps to pages of line " + std::to_string(line) + " not written");
    s.add_valid(ppn, n, +1);
    s.lines_[line].written.push_back(PageRun{run.lpn + done, ppn, n});
    done += n;
  }
}

void DriveState::check_physical_overlap(Ftl& s, const std::string& path) {
  for (uint64_t line = 0; line < s.lines_.size(); ++line) {
    std::vector<PageRun>& w = s.lines_[line].written;
    std::sort(w.begin(), w.end(), [](const PageRun& a, const PageRun& b) { return a.ppn < b.ppn; });
    for (size_t i = 1; i < w.size(); ++i)
      if (w[i - 1].ppn + w[i - 1].count > w[i].ppn)
        throw BadInput(path, "inconsistent drive state: physical page " + std::to_string(w[i].ppn) +
                                 " is mapped twice");
  }
}

void DriveState::load(Ftl& ftl, const std::string& path) {
  const std::string body = checked_body(path);
  StateReader r(body, path);
  check_geometry(r, ftl, path);
  Ftl s(ftl.config());
  for (uint64_t* v : counter_fields(s.counters_)) *v = r.get<uint64_t>();
  s.clock_ = r.get<uint64_t>();
  const uint64_t open = r.get<uint64_t>();
  std::vector<uint32_t> fill(s.fill_.size());
  for (uint32_t& f : fill) f = r.get<uint32_t>();
  restore_fill(s, fill, path);
  s.free_.clear();
  for (uint64_t line = 0; line < s.lines_.size(); ++line) restore_line(s, line, r, path);
  for (uint32_t& e : s.erases_) e = r.get<uint32_t>();
  for (uint64_t line = 0; line < s.lines_.size(); ++line)
    if (s.lines_[line].state == Ftl::LineState::kFree) s.free_line(line);
  if (open != kNone) s.open_ = open;
  check_open_line(s, path);
  const uint64_t extents = r.get<uint64_t>();
  for (uint64_t i = 0; i < extents; ++i) {
    const PageRun run{r.get<uint64_t>(), r.get<uint64_t>(), r.get<uint64_t>()};
    restore_extent(s, run, path);
  }
  if (!r.at_end()) throw BadInput(path, "trailing bytes after the drive state");
  check_physical_overlap(s, path);
  ftl = std::move(s);
}

}  // namespace ispsim::ftl
