// Tests of the smallest example of a role (models/core/examples; docs/adding-a-module.md, "A new role").
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <systemc>
#include <vector>

#include "common/error.h"
#include "models/core/examples/bandwidth_link.h"
#include "models/core/examples/register_all.h"
#include "models/core/examples/toy_link.h"
#include "models/core/stats.h"
#include "models/core/vcd.h"
#include "schema/defaults.h"
#include "schema/validation.h"
#include "tests/support/vcd_check.h"

namespace ispsim::examples {
namespace {

using sc_core::sc_time;
using sc_core::SC_NS;

// Parses a ToyLinkConfig the way the platform loader treats parameters:
// text, then schema defaults, then range checks.
ToyLinkConfig config_from_text(const std::string& text) {
  ToyLinkConfig config;
  if (!google::protobuf::TextFormat::ParseFromString(text, &config)) throw std::runtime_error("bad text: " + text);
  schema::apply_defaults(config);
  schema::validate_parameters(config, "test config");
  return config;
}

// Sends `sizes` back to back over `link` and records when each one arrived.
class Sender : public sc_core::sc_module {
 public:
  Sender(sc_core::sc_module_name name, ToyLink& link, std::vector<uint64_t> sizes)
      : sc_module(name), link_(link), sizes_(std::move(sizes)) {
    SC_HAS_PROCESS(Sender);
    SC_METHOD(next);
    sensitive << link_.delivered;  // also runs once at time 0 to send the first message
  }
  std::vector<sc_time> arrivals;

 private:
  void next() {
    if (sent_ > 0) arrivals.push_back(sc_core::sc_time_stamp());
    if (sent_ < sizes_.size()) link_.send(sizes_[sent_++]);
  }
  ToyLink& link_;
  std::vector<uint64_t> sizes_;
  size_t sent_ = 0;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

TEST(ToyLink, BandwidthLinkTimesAreClosedForm) {
  register_all();
  const ToyLinkConfig config = config_from_text("implementation: 'bandwidth' bandwidth { rate_gbps: 16 }");
  EXPECT_EQ(config.bandwidth().latency_ns(), 50.0);  // schema default
  auto link = toy_links().create(config.implementation(), "link", config);
  Sender sender("sender", *link, {16384, 4096, 0});
  sc_core::sc_start();

  // Each message: latency 50 ns + bytes / (16 bytes per ns), back to back.
  const sc_time t1 = sc_time(50 + 16384 / 16, SC_NS);
  const sc_time t2 = t1 + sc_time(50 + 4096 / 16, SC_NS);
  const sc_time t3 = t2 + sc_time(50, SC_NS);
  EXPECT_EQ(sender.arrivals, (std::vector<sc_time>{t1, t2, t3}));
  EXPECT_EQ(sc_core::sc_time_stamp(), t3);

  std::ostringstream csv;
  stats::Registry::global().write_csv(csv);
  EXPECT_EQ(csv.str(),
            "name,value,unit,description\n"
            "link.bandwidth,14.321678321678322,GB/s,\"bytes / busy_time while busy, GB = 1e9 B\"\n"
            "link.busy_time,1430,ns,time spent carrying messages\n"
            "link.bytes,20480,bytes,bytes of those messages\n"
            "link.messages,3,count,messages delivered or in flight\n");
  EXPECT_EQ(20480.0 / 1430.0, 14.321678321678322);
}

TEST(ToyLink, DefaultConfigGivesFixedDelayLink) {
  register_all();
  register_all();  // idempotent
  const ToyLinkConfig config = config_from_text("");
  EXPECT_EQ(config.implementation(), "fixed_delay");
  auto link = toy_links().create(config.implementation(), "link", config);
  Sender sender("sender", *link, {1, 1000000});
  sc_core::sc_start();
  EXPECT_EQ(sender.arrivals, (std::vector<sc_time>{sc_time(100, SC_NS), sc_time(200, SC_NS)}));
}

TEST(ToyLink, UnknownImplementationListsTheKnownOnes) {
  register_all();
  const ToyLinkConfig config = config_from_text("implementation: 'optical'");
  try {
    toy_links().create(config.implementation(), "link", config);
    FAIL() << "expected BadInput";
  } catch (const BadInput& e) {
    EXPECT_EQ(std::string(e.what()), "toy link: unknown implementation 'optical' (known: bandwidth, fixed_delay)");
  }
}

TEST(ToyLink, OutOfRangeParameterIsBadInput) {
  EXPECT_THROW(config_from_text("bandwidth { rate_gbps: 0 }"), BadInput);
  EXPECT_THROW(config_from_text("fixed_delay { delay_ns: -1 }"), BadInput);
}

TEST(ToyLink, SendWhileBusyIsALogicError) {
  register_all();
  const ToyLinkConfig config = config_from_text("");
  auto link = toy_links().create("fixed_delay", "link", config);
  link->send(1);
  EXPECT_TRUE(link->busy());
  EXPECT_THROW(link->send(1), std::logic_error);
}

TEST(ToyLink, WaveformShowsBusyPeriods) {
  register_all();
  const ToyLinkConfig config = config_from_text("implementation: 'bandwidth'");  // 50 ns + B / 8 GB/s
  auto link = toy_links().create(config.implementation(), "link", config);
  Sender sender("sender", *link, {800, 80});
  vcd::Options opts;
  opts.path = ::testing::TempDir() + "/core_toy_link.vcd";
  vcd::Writer writer(opts);
  link->trace(writer);
  sc_core::sc_start();
  writer.close();
  // Busy from 0 to 150 ns (50 + 800/8), then at once again until 210 ns (50 + 80/8):
  // the 0 and the 1 at 150 ns fall in one time step, so the line stays 1.
  EXPECT_EQ(read_file(opts.path),
            "$version ispsim $end\n"
            "$timescale 1ps $end\n"
            "$scope module link $end\n"
            "$var wire 1 ! busy $end\n"
            "$upscope $end\n"
            "$enddefinitions $end\n"
            "#0\n"
            "$dumpvars\n"
            "1!\n"
            "$end\n"
            "#210000\n"
            "0!\n");
  ispsim::testing::expect_vcd_valid(opts.path);
}

}  // namespace
}  // namespace ispsim::examples
