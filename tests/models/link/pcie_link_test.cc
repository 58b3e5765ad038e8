// PcieLink and LinkConfig: raw rates per generation, exact transfer times,
// pipelining, full-duplex independence, byte accounting, energy, VCD.
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <systemc>
#include <vector>

#include "common/error.h"
#include "models/core/energy_ledger.h"
#include "models/core/stats.h"
#include "models/core/vcd.h"
#include "models/link/link_config.h"
#include "models/link/pcie_link.h"
#include "tests/support/vcd_check.h"

namespace ispsim::link {
namespace {

using sc_core::sc_time;

LinkConfig config_from_text(const std::string& text) {
  schema::LinkParams params;
  if (!google::protobuf::TextFormat::ParseFromString(text, &params)) throw std::runtime_error("bad text: " + text);
  return LinkConfig::from_params(schema::resolved(params, "test.link"), "test.link");
}

sc_time ps(double value) { return sc_time::from_value(static_cast<uint64_t>(std::llround(value))); }

// Occupancy written from first principles: bytes * 8 bits / (GT/s * lanes *
// line-code efficiency * protocol efficiency), in picoseconds.
sc_time expected_occupancy(uint64_t bytes, double gts, unsigned lanes, double code, double efficiency) {
  const double bytes_per_ns = gts * lanes * code / 8.0 * efficiency;
  return ps(static_cast<double>(bytes) / bytes_per_ns * 1e3);
}

// Records the simulated time at which a callback ran.
struct Arrivals {
  std::vector<sc_time> times;
  PcieLink::Done record() {
    return [this] { times.push_back(sc_core::sc_time_stamp()); };
  }
};

TEST(LinkConfig, RawRatesPerGeneration) {
  EXPECT_DOUBLE_EQ(pcie_raw_bytes_per_ns(1, 1), 2.5 * 0.8 / 8);       // 0.25 GB/s
  EXPECT_DOUBLE_EQ(pcie_raw_bytes_per_ns(2, 1), 5.0 * 0.8 / 8);       // 0.5 GB/s
  EXPECT_DOUBLE_EQ(pcie_raw_bytes_per_ns(3, 4), 8.0 * 4 * 128 / 130 / 8);   // 3.938 GB/s
  EXPECT_DOUBLE_EQ(pcie_raw_bytes_per_ns(4, 4), 16.0 * 4 * 128 / 130 / 8);  // 7.877 GB/s
  EXPECT_NEAR(pcie_raw_bytes_per_ns(4, 4), 7.877, 0.001);
  EXPECT_DOUBLE_EQ(pcie_raw_bytes_per_ns(5, 16), 32.0 * 16 * 128 / 130 / 8);
  EXPECT_THROW(pcie_raw_bytes_per_ns(6, 4), BadInput);
  EXPECT_THROW(pcie_raw_bytes_per_ns(0, 4), BadInput);
}

TEST(LinkConfig, SchemaDefaults) {
  const LinkConfig c = config_from_text("");
  EXPECT_EQ(c.generation, 4u);
  EXPECT_EQ(c.lanes, 4u);
  EXPECT_DOUBLE_EQ(c.protocol_efficiency, 0.9143);
  EXPECT_NEAR(256.0 / (256 + 4 + 16 + 4), c.protocol_efficiency, 1e-4);  // the derivation in link.proto
  EXPECT_EQ(c.latency, sc_time(300, sc_core::SC_NS));
  EXPECT_EQ(c.interrupt_and_completion, sc_time(3, sc_core::SC_US));
  EXPECT_EQ(c.max_data_transfer_bytes, 131072u);
  EXPECT_DOUBLE_EQ(c.energy_pj_per_bit, 4.0);
  EXPECT_DOUBLE_EQ(c.static_power_w, 0.0);
  EXPECT_NEAR(c.effective_bytes_per_ns(), 7.202, 0.001);
}

TEST(LinkConfig, BadInputNamesParameter) {
  for (const char* text : {"lanes: 0", "pcie_generation: 6", "protocol_efficiency: 0", "protocol_efficiency: 1.5",
                           "latency_ns: -1", "max_data_transfer_bytes: 100"}) {
    SCOPED_TRACE(text);
    try {
      config_from_text(text);
      ADD_FAILURE() << "accepted";
    } catch (const BadInput& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("test.link"), std::string::npos) << what;
      const std::string param = std::string(text).substr(0, std::string(text).find(':'));
      EXPECT_NE(what.find(param), std::string::npos) << what;
    }
  }
}

struct GenCase {
  unsigned generation, lanes;
  double gts, code;
};

class TransferTime : public ::testing::TestWithParam<GenCase> {};

TEST_P(TransferTime, OneTransferIsOccupancyPlusLatency) {
  const GenCase g = GetParam();
  const LinkConfig c = config_from_text("pcie_generation: " + std::to_string(g.generation) +
                                        " lanes: " + std::to_string(g.lanes) +
                                        " protocol_efficiency: 0.8 latency_ns: 250");
  PcieLink link("link", c);
  Arrivals arrivals;
  const uint64_t bytes = 1 << 20;
  const sc_time returned = link.transfer(Direction::HOST_TO_DEVICE, bytes, Purpose::KV_WRITE, arrivals.record());
  sc_core::sc_start();
  const sc_time expected = expected_occupancy(bytes, g.gts, g.lanes, g.code, 0.8) + sc_time(250, sc_core::SC_NS);
  ASSERT_EQ(arrivals.times.size(), 1u);
  EXPECT_EQ(arrivals.times[0], expected);
  EXPECT_EQ(returned, expected);
  EXPECT_EQ(link.transfer_time(bytes), expected);
  EXPECT_EQ(link.busy_time(Direction::HOST_TO_DEVICE), expected - sc_time(250, sc_core::SC_NS));
}

INSTANTIATE_TEST_SUITE_P(Generations, TransferTime,
                         ::testing::Values(GenCase{1, 1, 2.5, 0.8}, GenCase{2, 8, 5.0, 0.8},
                                           GenCase{3, 4, 8.0, 128.0 / 130}, GenCase{4, 4, 16.0, 128.0 / 130},
                                           GenCase{4, 1, 16.0, 128.0 / 130}, GenCase{5, 16, 32.0, 128.0 / 130}));

TEST(PcieLink, Gen4x4OneMebibyteByHand) {
  // 1 MiB / (7.8769 GB/s x 0.9143 = 7.2019 GB/s) = 145,597.7 ns, + 300 ns latency.
  PcieLink link("link", config_from_text(""));
  Arrivals arrivals;
  link.transfer(Direction::DEVICE_TO_HOST, 1048576, Purpose::KV_READ, arrivals.record());
  sc_core::sc_start();
  ASSERT_EQ(arrivals.times.size(), 1u);
  const double ns = 1048576.0 / (16.0 * 4 * 128 / 130 / 8 * 0.9143) + 300;
  EXPECT_NEAR(arrivals.times[0].to_seconds() * 1e9, ns, 0.001);
  EXPECT_NEAR(arrivals.times[0].to_seconds() * 1e6, 145.898, 0.001);
}

TEST(PcieLink, AbsurdSizeIsBadInput) {
  PcieLink link("link", config_from_text(""));
  EXPECT_THROW(link.transfer(Direction::HOST_TO_DEVICE, UINT64_MAX, Purpose::OTHER, nullptr), BadInput);
  EXPECT_EQ(link.total_bytes(), 0u);
}

TEST(PcieLink, BackToBackTransfersPipelineTheirLatency) {
  const LinkConfig c = config_from_text("latency_ns: 1000");
  PcieLink link("link", c);
  Arrivals arrivals;
  const std::vector<uint64_t> sizes = {4096, 65536, 0, 16};
  for (uint64_t b : sizes) link.transfer(Direction::HOST_TO_DEVICE, b, Purpose::OTHER, arrivals.record());
  sc_core::sc_start();
  ASSERT_EQ(arrivals.times.size(), sizes.size());
  sc_time occupied = sc_core::SC_ZERO_TIME;
  for (size_t i = 0; i < sizes.size(); ++i) {
    occupied += c.occupancy(sizes[i]);
    EXPECT_EQ(arrivals.times[i], occupied + c.latency) << "transfer " << i;
  }
  // The latency is paid once, not per transfer.
  EXPECT_LT(arrivals.times.back(), c.transfer_time(4096) + c.transfer_time(65536) + c.transfer_time(16));
  EXPECT_EQ(link.requests(Direction::HOST_TO_DEVICE), 4u);
}

TEST(PcieLink, DirectionsAreIndependent) {
  const LinkConfig c = config_from_text("");
  PcieLink link("link", c);
  Arrivals down, up;
  link.transfer(Direction::HOST_TO_DEVICE, 1 << 20, Purpose::KV_WRITE, down.record());
  link.transfer(Direction::DEVICE_TO_HOST, 1 << 20, Purpose::KV_READ, up.record());
  link.transfer(Direction::DEVICE_TO_HOST, 512, Purpose::ATTENTION_OUTPUT, up.record());
  sc_core::sc_start();
  ASSERT_EQ(down.times.size(), 1u);
  ASSERT_EQ(up.times.size(), 2u);
  EXPECT_EQ(down.times[0], c.transfer_time(1 << 20));
  EXPECT_EQ(up.times[0], c.transfer_time(1 << 20));
  EXPECT_EQ(up.times[1], c.occupancy(1 << 20) + c.occupancy(512) + c.latency);
}

TEST(PcieLink, LaterTransferStartsWhenSubmitted) {
  // A transfer submitted after the link went idle starts at its submission time.
  const LinkConfig c = config_from_text("");
  PcieLink link("link", c);
  Arrivals arrivals;
  link.transfer(Direction::HOST_TO_DEVICE, 1000, Purpose::OTHER, [&] {
    arrivals.times.push_back(sc_core::sc_time_stamp());
    link.transfer(Direction::HOST_TO_DEVICE, 2000, Purpose::OTHER, arrivals.record());
  });
  sc_core::sc_start();
  ASSERT_EQ(arrivals.times.size(), 2u);
  EXPECT_EQ(arrivals.times[1], c.transfer_time(1000) + c.transfer_time(2000));
}

TEST(PcieLink, BytesByPurposeSumToTotals) {
  PcieLink link("pcie", config_from_text(""));
  uint64_t h2d = 0, d2h = 0;
  for (int p = 0; p < kPurposeCount; ++p) {
    const uint64_t b = 1000 * (p + 1);
    link.transfer(Direction::HOST_TO_DEVICE, b, static_cast<Purpose>(p), nullptr);
    link.transfer(Direction::DEVICE_TO_HOST, 2 * b + 1, static_cast<Purpose>(p), nullptr);
    h2d += b;
    d2h += 2 * b + 1;
  }
  sc_core::sc_start();
  uint64_t sum_h2d = 0, sum_d2h = 0, sum_both = 0;
  for (int p = 0; p < kPurposeCount; ++p) {
    sum_h2d += link.bytes(Direction::HOST_TO_DEVICE, static_cast<Purpose>(p));
    sum_d2h += link.bytes(Direction::DEVICE_TO_HOST, static_cast<Purpose>(p));
    sum_both += link.bytes(static_cast<Purpose>(p));
  }
  EXPECT_EQ(sum_h2d, h2d);
  EXPECT_EQ(sum_d2h, d2h);
  EXPECT_EQ(link.bytes(Direction::HOST_TO_DEVICE), h2d);
  EXPECT_EQ(link.bytes(Direction::DEVICE_TO_HOST), d2h);
  EXPECT_EQ(sum_both, link.total_bytes());
  EXPECT_EQ(link.bytes(Direction::HOST_TO_DEVICE, Purpose::KV_WRITE), 2000u);

  // The statistics dump carries the same numbers under the documented names.
  std::ostringstream csv;
  stats::Registry::global().write_csv(csv);
  const std::string text = csv.str();
  EXPECT_NE(text.find("pcie.host_to_device.kv_write_bytes,2000,bytes,"), std::string::npos) << text;
  EXPECT_NE(text.find("pcie.device_to_host.kv_read_bytes,2001,bytes,"), std::string::npos);
  EXPECT_NE(text.find("pcie.host_to_device.bytes," + std::to_string(h2d) + ",bytes,"), std::string::npos);
  EXPECT_NE(text.find("pcie.device_to_host.utilization,"), std::string::npos);
  EXPECT_NE(text.find("pcie.dynamic_energy,"), std::string::npos);
}

TEST(PcieLink, PurposeNames) {
  EXPECT_STREQ(to_string(Purpose::KV_READ), "kv_read");
  EXPECT_STREQ(to_string(Purpose::KV_WRITE), "kv_write");
  EXPECT_STREQ(to_string(Purpose::Q_FUSED), "q_fused");
  EXPECT_STREQ(to_string(Purpose::MASK), "mask");
  EXPECT_STREQ(to_string(Purpose::ATTENTION_OUTPUT), "attention_output");
  EXPECT_STREQ(to_string(Purpose::NVME_COMMAND), "nvme_command");
  EXPECT_STREQ(to_string(Purpose::NVME_COMPLETION), "nvme_completion");
  EXPECT_STREQ(to_string(Purpose::OTHER), "other");
  EXPECT_STREQ(to_string(Direction::HOST_TO_DEVICE), "host_to_device");
  EXPECT_STREQ(to_string(Direction::DEVICE_TO_HOST), "device_to_host");
}

TEST(PcieLink, EnergyIsLineBitsTimesEnergyPerBit) {
  core::EnergyLedger ledger;
  const LinkConfig c = config_from_text("static_power_w: 0.25");
  PcieLink link("pcie", c, &ledger);
  link.transfer(Direction::HOST_TO_DEVICE, 1 << 20, Purpose::KV_WRITE, nullptr);
  link.transfer(Direction::DEVICE_TO_HOST, 4096, Purpose::KV_READ, nullptr);
  link.transfer(Direction::DEVICE_TO_HOST, 0, Purpose::OTHER, nullptr);
  sc_core::sc_start();
  // Line bits = occupancy x 16 GT/s x 4 lanes; 4 pJ per line bit.
  const double expected_pj = (c.occupancy(1 << 20).to_seconds() + c.occupancy(4096).to_seconds()) * 1e9 * 64 * 4;
  EXPECT_NEAR(link.dynamic_energy_pj(), expected_pj, expected_pj * 1e-12);
  // Per payload byte that is 8 / (128/130 * 0.9143) line bits: 8.885 bits, 35.5 pJ.
  EXPECT_NEAR(c.energy_pj(1000000) / 1e6, 4 * 8 / (128.0 / 130 * 0.9143), 1e-3);
  EXPECT_GT(link.dynamic_energy_pj(), 0);

  const uint64_t end = sc_core::sc_time_stamp().value();
  const auto summary = ledger.summarize(end, {});
  EXPECT_NEAR(summary.dynamic_j_by_component.at("pcie"), expected_pj * 1e-12, 1e-18);
  EXPECT_NEAR(summary.static_j_by_component.at("pcie"), 0.25 * end * 1e-12, 1e-15);
  EXPECT_DOUBLE_EQ(ledger.static_power_w(), 0.25);
}

TEST(PcieLink, VcdShowsOutstandingTransfers) {
  const std::string path = ::testing::TempDir() + "pcie_link_test.vcd";
  const LinkConfig c = config_from_text("");
  PcieLink link("pcie", c);
  vcd::Writer writer(vcd::Options{path, {}, 0, UINT64_MAX, {}});
  link.trace(writer);
  EXPECT_EQ(writer.signal_count(), 2u);
  link.transfer(Direction::HOST_TO_DEVICE, 8192, Purpose::Q_FUSED, nullptr);
  link.transfer(Direction::HOST_TO_DEVICE, 8192, Purpose::Q_FUSED, nullptr);
  link.transfer(Direction::DEVICE_TO_HOST, 8192, Purpose::ATTENTION_OUTPUT, nullptr);
  sc_core::sc_start();
  writer.close();
  testing::expect_vcd_valid(path);
  std::ifstream in(path);
  const testing::VcdContent content = testing::parse_vcd(in);
  EXPECT_EQ(content.widths.count("pcie.host_to_device.outstanding"), 1u);
  EXPECT_EQ(content.widths.count("pcie.device_to_host.outstanding"), 1u);
  // Two host->device transfers outstanding at time 0, none at the end.
  EXPECT_EQ(content.values.at(0).at("pcie.host_to_device.outstanding"), "10");
  EXPECT_EQ(content.end_time, sc_core::sc_time_stamp().value());
  std::remove(path.c_str());
}

}  // namespace
}  // namespace ispsim::link
