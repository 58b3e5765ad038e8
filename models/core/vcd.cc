#include "models/core/vcd.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <systemc>

#include "common/atomic_file.h"
#include "common/error.h"
#include "common/output_files.h"
#include "models/core/names.h"
#include "models/core/vcd_view.h"

namespace ispsim::vcd {

namespace {

// VCD identifier codes use the printable characters '!'..'~' (94 of them):
// 0 -> "!", 93 -> "~", 94 -> "!\"", ...
std::string identifier_code(uint32_t index) {
  std::string code;
  do {
    code += static_cast<char>('!' + index % 94);
    index /= 94;
  } while (index != 0);
  return code;
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Whether `program` is an executable file in a PATH directory.
bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) dir = ".";
    if (::access((dir + "/" + program).c_str(), X_OK) == 0) return true;
  }
  return false;
}

// Runs `argv` (searched on PATH) with its output discarded; returns whether it
// exited with status 0.
bool run_quietly(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid;
  const int spawned = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return false;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return false;
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// A file of this process's own that is removed when it goes out of scope.
class ScratchFile {
 public:
  explicit ScratchFile(std::string path) : path_(std::move(path)) {}
  ~ScratchFile() { std::remove(path_.c_str()); }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

const std::vector<RoleInfo> kRoles = {
    {Role::kHost, "host", "the host GPU's op stream"},
    {Role::kPcie, "pcie", "the PCIe link, each direction"},
    {Role::kController, "controller", "SSD controller resources: DRAM, internal bus, firmware core"},
    {Role::kCoordinator, "coordinator", "the Flash-Coordinator's LSE reduction engine"},
    {Role::kChannel, "channels", "flash channel buses: busy and which die transfers"},
    {Role::kDie, "dies", "flash die states"},
    {Role::kScratchpad, "scratchpad", "scratchpad page buffers in use, per channel"},
    {Role::kSimd, "simd", "Elastic-SIMD modes"},
};

std::string known_roles() {
  std::string list;
  for (const RoleInfo& r : kRoles) list += std::string(list.empty() ? "" : ", ") + r.name;
  return list;
}

}  // namespace

const std::vector<RoleInfo>& roles() { return kRoles; }

const RoleInfo* find_role(const std::string& name) {
  for (const RoleInfo& r : kRoles)
    if (name == r.name) return &r;
  return nullptr;
}

const char* to_string(Role role) {
  for (const RoleInfo& r : kRoles)
    if (role == r.role) return r.name;
  return "other";
}

std::string Encoding::name_of(uint64_t value) const {
  for (const auto& [v, name] : values)
    if (v == value) return name;
  return std::to_string(value);
}

void add_filter(const std::string& text, const std::string& where, Options& opts) {
  std::istringstream items(text);
  std::string item;
  bool any = false;
  while (std::getline(items, item, ',')) {
    any = true;
    if (item.empty()) throw BadInput(where, "empty item in '" + text + "'");
    if (item.find_first_of("*?[.") != std::string::npos) {
      opts.filters.push_back(item);
    } else if (const RoleInfo* role = find_role(item)) {
      opts.roles.push_back(role->role);
    } else {
      throw BadInput(where, "unknown role '" + item + "' (known roles: " + known_roles() +
                                "; or a glob such as '*.ch0.*')");
    }
  }
  if (!any || text.back() == ',') throw BadInput(where, "empty item in '" + text + "'");
}

bool matches(const std::vector<std::string>& filters, const std::string& name) {
  if (filters.empty()) return true;
  for (const std::string& pattern : filters) {
    if (::fnmatch(pattern.c_str(), name.c_str(), 0) == 0) return true;
  }
  return false;
}

uint64_t parse_time_ps(const std::string& text, const std::string& where) {
  const std::string problem = "bad time '" + text + "': expected a number and a unit (ps, ns, us, ms, s), e.g. 1.5us";
  size_t i = 0;
  std::string whole, fraction;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) whole += text[i++];
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) fraction += text[i++];
  }
  if (whole.empty() && fraction.empty()) throw BadInput(where, problem);
  const std::string unit = text.substr(i);
  int exponent;  // ps per unit = 10^exponent
  if (unit == "ps") {
    exponent = 0;
  } else if (unit == "ns") {
    exponent = 3;
  } else if (unit == "us") {
    exponent = 6;
  } else if (unit == "ms") {
    exponent = 9;
  } else if (unit == "s") {
    exponent = 12;
  } else {
    throw BadInput(where, problem);
  }
  // Trailing zeros of the fraction carry no precision ("1.500ns" is fine).
  while (!fraction.empty() && fraction.back() == '0') fraction.pop_back();
  if (static_cast<int>(fraction.size()) > exponent)
    throw BadInput(where, "time '" + text + "' is finer than the 1 ps resolution");
  // Digits of the value in ps: whole, fraction, then zeros up to the exponent.
  const std::string digits = whole + fraction + std::string(exponent - fraction.size(), '0');
  uint64_t ps = 0;
  for (char c : digits) {
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (ps > (UINT64_MAX - d) / 10) throw BadInput(where, "time '" + text + "' is too large");
    ps = ps * 10 + d;
  }
  return ps;
}

void parse_window(const std::string& text, const std::string& where, Options& opts) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos || text.find(':', colon + 1) != std::string::npos)
    throw BadInput(where, "bad time window '" + text + "': expected BEGIN:END, e.g. 10us:20us (either may be empty)");
  const std::string begin = text.substr(0, colon);
  const std::string end = text.substr(colon + 1);
  const uint64_t begin_ps = begin.empty() ? 0 : parse_time_ps(begin, where);
  const uint64_t end_ps = end.empty() ? UINT64_MAX : parse_time_ps(end, where);
  if (begin_ps > end_ps) throw BadInput(where, "time window '" + text + "' ends before it begins");
  opts.window_begin_ps = begin_ps;
  opts.window_end_ps = end_ps;
}

struct Writer::Impl {
  struct Var {
    std::string name;
    unsigned width;
    uint64_t mask;
    std::string code;
    Signal* signal;
    uint64_t value;    // latest value
    uint64_t written;  // last value in the file
    bool pending;      // changed at pending_time_ps
    Role role;
    int channel;
    std::string encoding;  // Encoding::name, empty = a number
  };

  explicit Impl(Options o) : opts(std::move(o)), fst(ends_with(opts.path, ".fst")) {
    if (fst) {
      // The VCD text goes to a scratch file that vcd2fst converts at close().
      fst_file = std::make_unique<AtomicFile>(opts.path);
      vcd_scratch.emplace(opts.path + ".vcd.tmp." + std::to_string(::getpid()));
      scratch_out.open(vcd_scratch->path(), std::ios::out | std::ios::trunc);
      if (!scratch_out) throw BadInput(opts.path, "cannot open a scratch file beside it for the VCD text");
    } else {
      vcd_file = std::make_unique<AtomicFile>(opts.path);
    }
    view_file = std::make_unique<AtomicFile>(view_path(opts.path));
  }

  std::ostream& text() { return fst ? static_cast<std::ostream&>(scratch_out) : vcd_file->stream(); }

  Options opts;
  const bool fst;
  std::unique_ptr<AtomicFile> view_file;  // X.gtkw
  std::unique_ptr<AtomicFile> vcd_file;   // X.vcd
  std::unique_ptr<AtomicFile> fst_file;   // X.fst
  std::optional<ScratchFile> vcd_scratch;
  std::ofstream scratch_out;
  std::map<std::string, Encoding> encodings;  // by name, those of attached signals
  std::vector<Var> vars;
  std::set<std::string, names::HierarchicalLess> taken;
  std::set<std::string> offered_scopes;  // the first two name parts of every signal offered, for messages
  bool header_written = false;
  bool closed = false;
  std::vector<uint32_t> pending;    // vars changed at pending_time_ps (written in declaration order)
  uint64_t pending_time_ps = 0;
  uint64_t last_written_ps = 0;     // time of the last "#t" line
  // SystemC time ticks -> ps, fixed on first use (the resolution is frozen by then).
  bool scale_known = false;
  uint64_t ps_per_tick = 1;
  uint64_t ticks_per_ps = 1;

  uint64_t now_ps() {
    if (!scale_known) {
      const double ps = sc_core::sc_get_time_resolution().to_seconds() * 1e12;
      if (ps >= 1.0) {
        ps_per_tick = static_cast<uint64_t>(std::llround(ps));
      } else {
        ticks_per_ps = static_cast<uint64_t>(std::llround(1.0 / ps));  // sub-ps resolution truncates
      }
      scale_known = true;
    }
    return sc_core::sc_time_stamp().value() * ps_per_tick / ticks_per_ps;
  }

  // Output goes through a buffer written in large blocks: one ostream call per
  // character would dominate the cost of a change.
  std::string buffer;
  void drain(bool force) {
    if (buffer.size() < (1u << 16) && !force) return;
    text().write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    buffer.clear();
  }

  void write_time(uint64_t t) {
    char text[24];
    const auto end = std::to_chars(text, text + sizeof text, t).ptr;
    buffer += '#';
    buffer.append(text, end);
    buffer += '\n';
    drain(false);
  }

  void write_value(const Var& v, uint64_t value) {
    char text[80];
    char* p = text;
    if (v.width == 1) {
      *p++ = static_cast<char>('0' + (value & 1));
    } else {
      *p++ = 'b';
      const int bits = value == 0 ? 1 : 64 - __builtin_clzll(value);
      for (int b = bits - 1; b >= 0; --b) *p++ = static_cast<char>('0' + ((value >> b) & 1));
      *p++ = ' ';
    }
    buffer.append(text, p);
    buffer += v.code;
    buffer += '\n';
  }

  void write_header() {
    std::ostringstream os;
    os << "$version ispsim $end\n$timescale 1ps $end\n";
    std::vector<uint32_t> order(vars.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [this](uint32_t a, uint32_t b) { return names::HierarchicalLess()(vars[a].name, vars[b].name); });
    std::vector<std::string> open;
    for (uint32_t i : order) {
      std::vector<std::string> parts = names::split(vars[i].name);
      const std::string leaf = parts.back();
      parts.pop_back();
      size_t common = 0;
      while (common < open.size() && common < parts.size() && open[common] == parts[common]) ++common;
      for (; open.size() > common; open.pop_back()) os << "$upscope $end\n";
      for (size_t k = common; k < parts.size(); ++k) {
        os << "$scope module " << parts[k] << " $end\n";
        open.push_back(parts[k]);
      }
      os << "$var wire " << vars[i].width << ' ' << vars[i].code << ' ' << leaf << " $end\n";
    }
    for (; !open.empty(); open.pop_back()) os << "$upscope $end\n";
    os << "$enddefinitions $end\n";
    buffer += os.str();
    write_time(opts.window_begin_ps);
    buffer += "$dumpvars\n";
    for (Var& v : vars) {
      write_value(v, v.value);
      v.written = v.value;
    }
    buffer += "$end\n";
    drain(false);
    header_written = true;
    last_written_ps = opts.window_begin_ps;
  }

  // Writes the changes of pending_time_ps whose final value differs from the file.
  void flush() {
    if (pending.empty()) return;
    std::sort(pending.begin(), pending.end());
    bool time_written = false;
    for (uint32_t id : pending) {
      Var& v = vars[id];
      v.pending = false;
      if (v.value == v.written) continue;  // e.g. 0 -> 1 -> 0 within one time step
      if (!time_written) {
        write_time(pending_time_ps);
        last_written_ps = pending_time_ps;
        time_written = true;
      }
      write_value(v, v.value);
      v.written = v.value;
    }
    pending.clear();
  }

  void record(uint32_t id, uint64_t value) {
    Var& v = vars[id];
    value &= v.mask;
    const uint64_t t = now_ps();
    if (t > opts.window_end_ps) {
      // Nothing later can be written: detach, so set() costs one branch again.
      detach_all();
      return;
    }
    if (!header_written) {
      if (t <= opts.window_begin_ps) {
        v.value = value;  // folded into the initial value
        return;
      }
      write_header();
    }
    if (t != pending_time_ps) {
      if (t < pending_time_ps) throw std::logic_error("vcd: time went backwards at signal " + v.name);
      flush();
      pending_time_ps = t;
    }
    v.value = value;
    if (!v.pending) {
      v.pending = true;
      pending.push_back(id);
    }
  }

  void detach_all() {
    for (Var& v : vars) {
      if (v.signal) v.signal->writer_ = nullptr;
      v.signal = nullptr;
    }
  }

  bool passes(const std::string& name, Role role) const {
    if (opts.filters.empty() && opts.roles.empty()) return true;
    if (std::find(opts.roles.begin(), opts.roles.end(), role) != opts.roles.end()) return true;
    return !opts.filters.empty() && matches(opts.filters, name);
  }

  void keep_encoding(const std::string& signal, const Encoding& encoding) {
    if (encoding.name.empty() || encoding.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos)
      throw std::logic_error("vcd signal " + signal + ": encoding name '" + encoding.name + "' is not [a-z0-9_]+");
    for (const auto& [value, name] : encoding.values) {
      if (name.empty() || name.find_first_of(" \t\n") != std::string::npos)
        throw std::logic_error("vcd encoding " + encoding.name + ": value name '" + name + "' is empty or has a space");
    }
    const auto [it, inserted] = encodings.emplace(encoding.name, encoding);
    if (!inserted && it->second.values != encoding.values)
      throw std::logic_error("vcd signal " + signal + ": two encodings named " + encoding.name);
  }

  View view(const std::vector<Marker>& markers, uint64_t end_ps) const {
    View v{opts.path, opts.window_begin_ps, end_ps, {}, markers};
    for (const Var& var : vars) v.signals.push_back({var.name, var.width, var.role, var.channel, var.encoding});
    return v;
  }

  // The VCD text into X.fst through vcd2fst.
  void convert_to_fst() {
    scratch_out.close();
    if (!scratch_out) throw BadInput(opts.path, "writing the VCD text for vcd2fst failed");
    const ScratchFile converted(opts.path + ".conv.tmp." + std::to_string(::getpid()));
    if (!run_quietly({"vcd2fst", vcd_scratch->path(), converted.path()}))
      throw std::runtime_error(opts.path + ": vcd2fst failed to convert the waveform");
    std::ifstream in(converted.path(), std::ios::binary);
    fst_file->stream() << in.rdbuf();
    if (!in || !fst_file->stream()) throw std::runtime_error(opts.path + ": cannot copy vcd2fst's output");
  }
};

void Signal::record(uint64_t value) { writer_->record(id_, value); }

Writer::Writer(Options opts) {
  if (opts.path.empty()) throw BadInput("vcd", "empty output file name");
  if (!ends_with(opts.path, ".vcd") && !ends_with(opts.path, ".fst"))
    throw BadInput(opts.path, "waveform file must end in .vcd or .fst");
  if (ends_with(opts.path, ".fst") && !on_path("vcd2fst"))
    throw BadInput(opts.path, "FST output needs GTKWave's vcd2fst, which is not on PATH (Debian package gtkwave); "
                              "write a .vcd instead");
  if (opts.window_begin_ps > opts.window_end_ps)
    throw BadInput(opts.path, "VCD window begins at " + std::to_string(opts.window_begin_ps) +
                                  " ps, after its end at " + std::to_string(opts.window_end_ps) + " ps");
  for (const std::string& f : opts.filters) {
    if (f.empty()) throw BadInput(opts.path, "empty VCD signal filter");
  }
  impl_ = std::make_unique<Impl>(std::move(opts));
}

Writer::~Writer() {
  if (impl_) impl_->detach_all();
}

bool Writer::add(const std::string& name, unsigned width, Signal& sig, const Kind& kind) {
  Impl& im = *impl_;
  const std::string bad_name = names::check(name);
  if (!bad_name.empty()) throw std::logic_error("vcd signal: " + bad_name);
  if (width < 1 || width > 64)
    throw std::logic_error("vcd signal " + name + ": width " + std::to_string(width) + " is not in 1..64");
  if (im.closed) throw std::logic_error("vcd signal " + name + ": writer already closed");
  im.offered_scopes.insert(name.substr(0, name.find('.', name.find('.') + 1)));
  if (!im.passes(name, kind.role)) return false;
  if (sig.writer_) throw std::logic_error("vcd signal " + name + ": signal already attached");
  if (im.header_written)
    throw std::logic_error("vcd signal " + name + ": added after the waveform started; add signals before the simulation");
  if (im.taken.count(name)) throw std::logic_error("vcd signal " + name + ": added twice");
  for (size_t dot = name.find('.'); dot != std::string::npos; dot = name.find('.', dot + 1)) {
    if (im.taken.count(name.substr(0, dot)))
      throw std::logic_error("vcd signal " + name + ": " + name.substr(0, dot) + " is a signal, not a scope");
  }
  const auto next = im.taken.upper_bound(name);
  if (next != im.taken.end() && starts_with(*next, name + "."))
    throw std::logic_error("vcd signal " + name + ": already a scope (holds " + *next + ")");

  const uint64_t mask = width == 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  const auto id = static_cast<uint32_t>(im.vars.size());
  if (kind.encoding) im.keep_encoding(name, *kind.encoding);
  im.vars.push_back({name, width, mask, identifier_code(id), &sig, sig.value() & mask, 0, false, kind.role,
                     kind.channel, kind.encoding ? kind.encoding->name : std::string()});
  im.taken.insert(name);
  sig.writer_ = this;
  sig.id_ = id;
  return true;
}

void Writer::record(uint32_t id, uint64_t value) { impl_->record(id, value); }

size_t Writer::signal_count() const { return impl_->vars.size(); }

void Writer::require_signals() const {
  const Impl& im = *impl_;
  if (!im.vars.empty()) return;
  std::string scopes;
  for (const std::string& scope : im.offered_scopes) scopes += (scopes.empty() ? "" : ", ") + scope;
  throw BadInput("--vcd-filter", "selects no signal of this platform (its signals are under " + scopes + ")");
}

void Writer::close(const std::vector<Marker>& markers) {
  OutputFiles outputs;
  close(markers, outputs);
  outputs.commit();
}

void Writer::close(const std::vector<Marker>& markers, OutputFiles& outputs) {
  Impl& im = *impl_;
  if (im.closed) return;
  im.detach_all();  // first: nothing may reach the writer while it is being finished
  im.closed = true;
  if (!im.header_written) im.write_header();
  im.flush();
  const uint64_t end = std::min(im.now_ps(), im.opts.window_end_ps);
  if (end > im.last_written_ps) im.write_time(end);
  im.drain(true);

  // Written under temporary names; `outputs` commits them with the run's other files.
  for (const auto& [name, encoding] : im.encodings)
    write_filter(outputs.open(filter_path(im.opts.path, name))->stream(), encoding);
  write_view(im.view_file->stream(), im.view(markers, end));
  if (im.fst) im.convert_to_fst();
  outputs.adopt(std::move(im.view_file));
  outputs.adopt(std::move(im.fst ? im.fst_file : im.vcd_file));
}

}  // namespace ispsim::vcd
