#include "models/core/vcd.h"

#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>
#include <systemc>
#include <vector>

#include "common/error.h"
#include "tests/support/files.h"
#include "tests/support/vcd_check.h"

namespace ispsim::vcd {
namespace {

using sc_core::sc_time;
using sc_core::SC_NS;

using ispsim::testing::file_exists;
using ispsim::testing::read_text;

std::string temp_path(const std::string& name) { return ::testing::TempDir() + "/core_vcd_" + name; }

// One scheduled assignment: at `time_ns`, signal `which` of a unit gets `value`.
struct Step {
  unsigned time_ns;
  int which;
  uint64_t value;
};

// A unit with a 1-bit, a 4-bit and an 8-bit signal, driven by an SC_METHOD
// that applies a fixed schedule (next_trigger to the next step's time).
class Unit : public sc_core::sc_module {
 public:
  Signal busy;   // 1 bit
  Signal state;  // 4 bits
  Signal count;  // 8 bits

  Unit(sc_core::sc_module_name name, std::vector<Step> schedule) : sc_module(name), schedule_(std::move(schedule)) {
    SC_HAS_PROCESS(Unit);
    SC_METHOD(apply);
  }

  // The module convention: add the traced state under the module's own name.
  void trace(Writer& w, bool with_count) {
    w.add(std::string(name()) + ".busy", 1, busy);
    w.add(std::string(name()) + ".state", 4, state);
    if (with_count) w.add(std::string(name()) + ".count", 8, count);
  }

 private:
  void apply() {
    const sc_time now = sc_core::sc_time_stamp();
    while (next_ < schedule_.size() && sc_time(schedule_[next_].time_ns, SC_NS) == now) {
      const Step& s = schedule_[next_++];
      Signal* signals[] = {&busy, &state, &count};
      signals[s.which]->set(s.value);
    }
    if (next_ < schedule_.size()) next_trigger(sc_time(schedule_[next_].time_ns, SC_NS) - now);
  }

  std::vector<Step> schedule_;
  size_t next_ = 0;
};

enum { kBusy = 0, kState = 1, kCount = 2 };

// top.a: busy and state; top.b: count (8 bits, starts at 7).
class Top : public sc_core::sc_module {
 public:
  Unit a;
  Unit b;
  explicit Top(sc_core::sc_module_name name)
      : sc_module(name),
        a("a",
          {
              {0, kBusy, 1},    // time 0: folded into the initial value
              {10, kState, 3},  //
              {25, kBusy, 0},   //
              {25, kState, 5},  // same time as the line above: one #25000 block
              {30, kState, 5},  // no change: nothing written
              {40, kBusy, 1},   // 1 then 0 within one time step: nothing written
              {40, kBusy, 0},   //
              {60, kState, 17}, // 17 does not fit in 4 bits: truncated to 1
          }),
        b("b", {
                   {10, kCount, 8},    //
                   {40, kCount, 300},  // truncated to 8 bits: 44
               }) {
    b.count.set(7);
  }
  void trace(Writer& w) {
    a.trace(w, false);
    w.add(std::string(b.name()) + ".count", 8, b.count);
  }
};

// The definitions section of a VCD of all of Top's signals.
const std::string kHeaderOfTop =
    "$version ispsim $end\n"
    "$timescale 1ps $end\n"
    "$scope module top $end\n"
    "$scope module a $end\n"
    "$var wire 1 ! busy $end\n"
    "$var wire 4 \" state $end\n"
    "$upscope $end\n"
    "$scope module b $end\n"
    "$var wire 8 # count $end\n"
    "$upscope $end\n"
    "$upscope $end\n"
    "$enddefinitions $end\n";

std::string run(Options opts, unsigned run_ns = 100) {
  Top top("top");
  Writer writer(opts);
  top.trace(writer);
  sc_core::sc_start(sc_time(run_ns, SC_NS));
  writer.close();
  return read_text(opts.path);
}

TEST(Vcd, ExactTextOfAFullRun) {
  Options opts;
  opts.path = temp_path("full.vcd");
  EXPECT_EQ(run(opts),
            kHeaderOfTop +
            "#0\n"
            "$dumpvars\n"
            "1!\n"
            "b0 \"\n"
            "b111 #\n"
            "$end\n"
            "#10000\n"
            "b11 \"\n"
            "b1000 #\n"
            "#25000\n"
            "0!\n"
            "b101 \"\n"
            "#40000\n"
            "b101100 #\n"
            "#60000\n"
            "b1 \"\n"
            "#100000\n");
  ispsim::testing::expect_vcd_valid(opts.path);
}

TEST(Vcd, FilterDropsSignals) {
  Options opts;
  opts.path = temp_path("filtered.vcd");
  opts.filters = {"top.a.*"};
  EXPECT_EQ(run(opts),
            "$version ispsim $end\n"
            "$timescale 1ps $end\n"
            "$scope module top $end\n"
            "$scope module a $end\n"
            "$var wire 1 ! busy $end\n"
            "$var wire 4 \" state $end\n"
            "$upscope $end\n"
            "$upscope $end\n"
            "$enddefinitions $end\n"
            "#0\n"
            "$dumpvars\n"
            "1!\n"
            "b0 \"\n"
            "$end\n"
            "#10000\n"
            "b11 \"\n"
            "#25000\n"
            "0!\n"
            "b101 \"\n"
            "#60000\n"
            "b1 \"\n"
            "#100000\n");
  ispsim::testing::expect_vcd_valid(opts.path);
}

TEST(Vcd, SeveralFiltersAndFilteredSignalsStayDetached) {
  Options opts;
  opts.path = temp_path("filters.vcd");
  opts.filters = {"*.count", "top.a.busy"};
  Top top("top");
  Writer writer(opts);
  top.trace(writer);
  EXPECT_EQ(writer.signal_count(), 2u);
  EXPECT_TRUE(top.a.busy.attached());
  EXPECT_FALSE(top.a.state.attached());
  EXPECT_TRUE(top.b.count.attached());
  sc_core::sc_start(sc_time(100, SC_NS));
  EXPECT_EQ(top.a.state.value(), 17u);  // the module's own value is not truncated
  writer.close();
  EXPECT_FALSE(top.b.count.attached());  // close() detaches
  const auto content = ispsim::testing::parse_vcd_file(opts.path);
  EXPECT_TRUE(content.errors.empty());
  EXPECT_EQ(content.widths, (std::map<std::string, unsigned>{{"top.a.busy", 1}, {"top.b.count", 8}}));
  ispsim::testing::expect_vcd_valid(opts.path);
}

TEST(Vcd, WindowFoldsEarlierChangesAndDropsLaterOnes) {
  Options opts;
  opts.path = temp_path("window.vcd");
  opts.window_begin_ps = 20000;
  opts.window_end_ps = 45000;
  EXPECT_EQ(run(opts),
            kHeaderOfTop +
            "#20000\n"
            "$dumpvars\n"
            "1!\n"
            "b11 \"\n"
            "b1000 #\n"
            "$end\n"
            "#25000\n"
            "0!\n"
            "b101 \"\n"
            "#40000\n"
            "b101100 #\n"
            "#45000\n");
  ispsim::testing::expect_vcd_valid(opts.path);
}

TEST(Vcd, SignalsDetachOncePastTheWindowEnd) {
  Options opts;
  opts.path = temp_path("detach.vcd");
  opts.window_end_ps = 45000;
  Top top("top");
  Writer writer(opts);
  top.trace(writer);
  sc_core::sc_start(sc_time(45, SC_NS));
  EXPECT_TRUE(top.a.state.attached());
  sc_core::sc_start(sc_time(55, SC_NS));  // the change at 60 ns is past the end
  EXPECT_FALSE(top.a.state.attached());
  EXPECT_FALSE(top.b.count.attached());
  writer.close();
  EXPECT_EQ(ispsim::testing::parse_vcd_file(opts.path).end_time, 45000u);
  ispsim::testing::expect_vcd_valid(opts.path);
}

TEST(Vcd, WindowBeginningAtAChangeFoldsIt) {
  Options opts;
  opts.path = temp_path("window_at_change.vcd");
  opts.window_begin_ps = 25000;  // the changes at exactly 25 ns are the initial values
  opts.window_end_ps = 25000;
  const std::string text = run(opts);
  EXPECT_NE(text.find("#25000\n$dumpvars\n0!\nb101 \"\nb1000 #\n$end\n"), std::string::npos) << text;
  EXPECT_EQ(text.substr(text.size() - 5), "$end\n") << "nothing after the one-instant window";
  ispsim::testing::expect_vcd_valid(opts.path);
}

TEST(Vcd, SimulationEndingBeforeTheWindowStillGivesAValidFile) {
  Options opts;
  opts.path = temp_path("before_window.vcd");
  opts.window_begin_ps = 1000000;
  const std::string text = run(opts, 50);
  EXPECT_NE(text.find("#1000000\n$dumpvars\n0!\nb101 \"\nb101100 #\n$end\n"), std::string::npos) << text;
  ispsim::testing::expect_vcd_valid(opts.path);
}

TEST(Vcd, ManySignalsGetDistinctMultiCharacterCodesAnd64BitValues) {
  Options opts;
  opts.path = temp_path("many.vcd");
  std::vector<Signal> signals(200);  // sized before attaching: addresses stay put
  Writer writer(opts);
  for (size_t i = 0; i < signals.size(); ++i) {
    ASSERT_TRUE(writer.add("sys.group" + std::to_string(i % 7) + ".s" + std::to_string(i), i == 199 ? 64 : 1 + i % 16,
                           signals[i]));
  }
  struct Driver : sc_core::sc_module {
    std::vector<Signal>& s;
    Driver(sc_core::sc_module_name n, std::vector<Signal>& signals) : sc_module(n), s(signals) {
      SC_HAS_PROCESS(Driver);
      SC_METHOD(step);
      dont_initialize();
      sensitive << tick;
      tick.notify(sc_time(1, SC_NS));
    }
    void step() {
      for (size_t i = 0; i < s.size(); ++i) s[i].set(s[i].value() + 1);
      s[199].set(~uint64_t{0});
      if (++steps < 3) tick.notify(sc_time(1, SC_NS));
    }
    sc_core::sc_event tick;
    int steps = 0;
  } driver("driver", signals);
  sc_core::sc_start(sc_time(10, SC_NS));
  writer.close();
  const std::string text = read_text(opts.path);
  EXPECT_NE(text.find("b" + std::string(64, '1') + " "), std::string::npos);
  const auto content = ispsim::testing::parse_vcd_file(opts.path);
  EXPECT_TRUE(content.errors.empty());
  EXPECT_EQ(content.widths.size(), 200u);
  EXPECT_EQ(content.values.size(), 4u);  // #0 dumpvars, #1000, #2000, #3000
  EXPECT_EQ(content.end_time, 10000u);
  ispsim::testing::expect_vcd_valid(opts.path);
}

TEST(Vcd, BadOptionsAreBadInput) {
  Options opts;
  opts.path = temp_path("bad_window.vcd");
  opts.window_begin_ps = 10;
  opts.window_end_ps = 5;
  try {
    Writer w(opts);
    FAIL() << "expected BadInput";
  } catch (const BadInput& e) {
    EXPECT_EQ(std::string(e.what()), opts.path + ": VCD window begins at 10 ps, after its end at 5 ps");
  }
  opts.window_end_ps = 50;
  opts.filters = {""};
  EXPECT_THROW(Writer w(opts), BadInput);
  opts.filters.clear();
  opts.path = temp_path("no/such/dir/x.vcd");
  EXPECT_THROW(Writer w(opts), BadInput);
  opts.path = "";
  EXPECT_THROW(Writer w(opts), BadInput);
}

TEST(Vcd, ProgrammingErrorsAreLogicErrors) {
  Options opts;
  opts.path = temp_path("logic.vcd");
  Writer w(opts);
  Signal a, b, c, d;
  ASSERT_TRUE(w.add("top.x", 1, a));
  EXPECT_THROW(w.add("top.x", 1, b), std::logic_error);      // twice
  EXPECT_THROW(w.add("top.y", 1, a), std::logic_error);      // already attached
  EXPECT_THROW(w.add("top.x.z", 1, b), std::logic_error);    // below a signal
  EXPECT_THROW(w.add("top", 1, b), std::logic_error);        // a scope
  EXPECT_THROW(w.add("top.w", 0, b), std::logic_error);      // width 0
  EXPECT_THROW(w.add("top.w", 65, b), std::logic_error);     // width 65
  EXPECT_THROW(w.add("top..w", 1, b), std::logic_error);     // malformed
  ASSERT_TRUE(w.add("top.y", 2, b));
  w.close();
  EXPECT_THROW(w.add("top.z", 1, c), std::logic_error);      // after close
  EXPECT_FALSE(a.attached());
  a.set(1);  // detached: harmless
  ispsim::testing::expect_vcd_valid(opts.path);
}

TEST(Vcd, WithoutCloseNoFileIsLeft) {
  Options opts;
  opts.path = temp_path("unclosed.vcd");
  std::remove(opts.path.c_str());
  Signal s;
  {
    Writer w(opts);
    w.add("top.s", 1, s);
    s.set(1);
  }
  EXPECT_FALSE(s.attached());
  EXPECT_FALSE(file_exists(opts.path));
}

TEST(Vcd, CopiesAreDetached) {
  Options opts;
  opts.path = temp_path("copy.vcd");
  Writer w(opts);
  Signal s;
  s.set(3);
  w.add("top.s", 2, s);
  Signal copy = s;
  EXPECT_FALSE(copy.attached());
  EXPECT_EQ(copy.value(), 3u);
  w.close();
}

TEST(Vcd, ParsesTimesExactly) {
  EXPECT_EQ(parse_time_ps("0ps", "--vcd-window"), 0u);
  EXPECT_EQ(parse_time_ps("7ps", "x"), 7u);
  EXPECT_EQ(parse_time_ps("1.5us", "x"), 1500000u);
  EXPECT_EQ(parse_time_ps("0.001ns", "x"), 1u);
  EXPECT_EQ(parse_time_ps("1.500ns", "x"), 1500u);
  EXPECT_EQ(parse_time_ps(".25ms", "x"), 250000000u);
  EXPECT_EQ(parse_time_ps("3s", "x"), 3000000000000u);
  EXPECT_EQ(parse_time_ps("18446744073709551615ps", "x"), UINT64_MAX);
  for (const char* bad : {"", "5", "ns", "5 ns", "-5ns", "5min", "1.2.3ns", "0.0001ns", "18446744073709551616ps"}) {
    EXPECT_THROW(parse_time_ps(bad, "x"), BadInput) << bad;
  }
  try {
    parse_time_ps("0.5ps", "--vcd-window");
    FAIL() << "expected BadInput";
  } catch (const BadInput& e) {
    EXPECT_EQ(std::string(e.what()), "--vcd-window: time '0.5ps' is finer than the 1 ps resolution");
  }
}

TEST(Vcd, ParsesWindows) {
  Options opts;
  parse_window("10us:20us", "w", opts);
  EXPECT_EQ(opts.window_begin_ps, 10000000u);
  EXPECT_EQ(opts.window_end_ps, 20000000u);
  parse_window("5ns:", "w", opts);
  EXPECT_EQ(opts.window_begin_ps, 5000u);
  EXPECT_EQ(opts.window_end_ps, UINT64_MAX);
  parse_window(":5ns", "w", opts);
  EXPECT_EQ(opts.window_begin_ps, 0u);
  EXPECT_EQ(opts.window_end_ps, 5000u);
  EXPECT_THROW(parse_window("5ns", "w", opts), BadInput);
  EXPECT_THROW(parse_window("5ns:1ns", "w", opts), BadInput);
  EXPECT_THROW(parse_window("1ns:2ns:3ns", "w", opts), BadInput);
}

// The checker itself must be able to fail.
TEST(VcdCheck, ParserRejectsMalformedFiles) {
  auto errors_of = [](const std::string& text) {
    std::istringstream in(text);
    return ispsim::testing::parse_vcd(in).errors;
  };
  EXPECT_FALSE(errors_of("garbage\n").empty());
  const std::string head = "$timescale 1ps $end\n$scope module t $end\n$var wire 2 ! x $end\n$upscope $end\n";
  EXPECT_TRUE(errors_of(head + "$enddefinitions $end\n#0\nb10 !\n#5\nb1 !\n").empty());
  EXPECT_FALSE(errors_of(head + "#0\nb10 !\n").empty());                            // no $enddefinitions
  EXPECT_FALSE(errors_of(head + "$enddefinitions $end\n#0\nb101 !\n").empty());     // too wide
  EXPECT_FALSE(errors_of(head + "$enddefinitions $end\n#0\nb10 %\n").empty());      // unknown code
  EXPECT_FALSE(errors_of(head + "$enddefinitions $end\n#5\nb1 !\n#4\n").empty());   // time backwards
  EXPECT_FALSE(errors_of(head + "$enddefinitions $end\nb1 !\n").empty());           // before any time
  EXPECT_FALSE(errors_of(head + "$enddefinitions $end\n#0\nb12 !\n").empty());      // not binary
}

}  // namespace
}  // namespace ispsim::vcd
