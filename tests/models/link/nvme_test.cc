// Nvme: the fused-attention command and conventional commands on an idle
// link, against their closed forms and against a hand-written sum.
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <systemc>
#include <vector>

#include "models/core/server.h"
#include "models/link/link_config.h"
#include "models/link/nvme.h"
#include "models/link/pcie_link.h"

namespace ispsim::link {
namespace {

using sc_core::sc_time;
using sc_core::SC_NS;
using sc_core::SC_US;

LinkConfig config_from_text(const std::string& text) {
  schema::LinkParams params;
  if (!google::protobuf::TextFormat::ParseFromString(text, &params)) throw std::runtime_error("bad text: " + text);
  return LinkConfig::from_params(schema::resolved(params, "test.link"), "test.link");
}

// A device that takes a fixed time per command and records when it started.
struct FixedBackend {
  explicit FixedBackend(const sc_time& time) : delay("backend", 0.0, time) {}
  Nvme::Backend backend() {
    return [this](Nvme::Done on_done) {
      starts.push_back(sc_core::sc_time_stamp());
      delay.submit(sc_core::SC_ZERO_TIME, 0, std::move(on_done));
    };
  }
  core::Server delay;
  std::vector<sc_time> starts;
};

TEST(Nvme, FusedAttentionMatchesClosedFormAndHandSum) {
  // Round numbers: 8 GB/s payload rate (Gen4 x4 raw 7.877 GB/s would not be).
  // Gen5 x4 raw = 32*4*128/130/8 = 15.754 GB/s; efficiency 0.5078125 -> exactly 8 B/ns.
  const LinkConfig c = config_from_text(
      "pcie_generation: 5 lanes: 4 protocol_efficiency: 0.5078125 latency_ns: 500 interrupt_and_completion_ns: 2000");
  ASSERT_DOUBLE_EQ(c.effective_bytes_per_ns(), 8.0);
  PcieLink link("pcie", c);
  Nvme nvme("nvme", link);
  FixedBackend device(sc_time(10, SC_US));
  FusedAttentionCommand cmd;
  cmd.mask_bytes = 128;     // 1024 mask bits
  cmd.q_bytes = 8192;       // 1 row x 32 heads x 128 dims x 2 B
  cmd.kv_bytes = 65536;     // host-recomputed K and V
  cmd.output_bytes = 8192;  // O rows
  sc_time done_at;
  nvme.fused_attention(cmd, device.backend(), [&] { done_at = sc_core::sc_time_stamp(); });
  sc_core::sc_start();

  // doorbell 4 B: 0.5 + 500; SQE fetch: 500 + 8 + 500; operands: 500 + (128 + 8192 + 65536)/8 + 500;
  // backend 10000; O + CQE: (8192 + 16)/8 + 500; host completion 2000 (ns).
  const double backend_start_ns = 0.5 + 500 + 500 + 8 + 500 + 500 + 16 + 1024 + 8192 + 500;
  const double expected_ns = backend_start_ns + 10000 + 1024 + 2 + 500 + 2000;
  ASSERT_EQ(device.starts.size(), 1u);
  EXPECT_EQ(device.starts[0], sc_time(backend_start_ns, SC_NS));
  EXPECT_EQ(done_at, sc_time(expected_ns, SC_NS));
  EXPECT_EQ(done_at, nvme.fused_attention_time(cmd, sc_time(10, SC_US)));

  // Bytes by purpose.
  EXPECT_EQ(link.bytes(Direction::HOST_TO_DEVICE, Purpose::NVME_COMMAND), Nvme::kDoorbellBytes + Nvme::kSqeBytes);
  EXPECT_EQ(link.bytes(Direction::HOST_TO_DEVICE, Purpose::MASK), 128u);
  EXPECT_EQ(link.bytes(Direction::HOST_TO_DEVICE, Purpose::Q_FUSED), 8192u);
  EXPECT_EQ(link.bytes(Direction::HOST_TO_DEVICE, Purpose::KV_WRITE), 65536u);
  EXPECT_EQ(link.bytes(Direction::DEVICE_TO_HOST, Purpose::ATTENTION_OUTPUT), 8192u);
  EXPECT_EQ(link.bytes(Direction::DEVICE_TO_HOST, Purpose::NVME_COMPLETION), Nvme::kCqeBytes);
  EXPECT_EQ(link.total_bytes(), 4u + 64 + 128 + 8192 + 65536 + 8192 + 16);
  EXPECT_EQ(nvme.fused_commands(), 1u);
}

TEST(Nvme, FusedAttentionWithoutOperandsSkipsTheFetch) {
  const LinkConfig c = config_from_text("");
  PcieLink link("link", c);
  Nvme nvme("nvme", link);
  FixedBackend device(sc_time(1, SC_US));
  FusedAttentionCommand cmd;  // all zero: SQE only, nothing returned but the CQE
  sc_time done_at;
  nvme.fused_attention(cmd, device.backend(), [&] { done_at = sc_core::sc_time_stamp(); });
  sc_core::sc_start();
  const sc_time expected = c.occupancy(4) + c.latency + c.latency + c.occupancy(64) + c.latency + sc_time(1, SC_US) +
                           c.occupancy(16) + c.latency + c.interrupt_and_completion;
  EXPECT_EQ(done_at, expected);
  EXPECT_EQ(done_at, nvme.fused_attention_time(cmd, sc_time(1, SC_US)));
  EXPECT_EQ(link.total_bytes(), 4u + 64 + 16);
}

TEST(Nvme, DefaultLinkClosedFormForMemLlmSizedCommand) {
  // A Llama-3-8B-like decode step: 32 heads x 128 dims x FP16 = 8 KiB of Q and O,
  // a 4096-token mask (512 B), no shipped KV.
  const LinkConfig c = config_from_text("");
  PcieLink link("link", c);
  Nvme nvme("nvme", link);
  FixedBackend device(sc_time(123456, SC_NS));
  FusedAttentionCommand cmd{512, 8192, 0, 8192};
  sc_time done_at;
  nvme.fused_attention(cmd, device.backend(), [&] { done_at = sc_core::sc_time_stamp(); });
  sc_core::sc_start();
  EXPECT_EQ(done_at, nvme.fused_attention_time(cmd, sc_time(123456, SC_NS)));
  // Protocol cost beyond the backend: 6 one-way latencies (1.8 us), host 3 us,
  // 16,980 B of data at 7.2019 GB/s (2.358 us).
  const double overhead_ns = (done_at - sc_time(123456, SC_NS)).to_seconds() * 1e9;
  EXPECT_NEAR(overhead_ns, 6 * 300 + 3000 + (4 + 64 + 512 + 8192 + 8192 + 16) / c.effective_bytes_per_ns(), 0.005);
}

TEST(Nvme, BackToBackFusedCommandsShareTheLink) {
  // Two commands issued at once: the second one's transfers queue behind the first's.
  const LinkConfig c = config_from_text("");
  PcieLink link("link", c);
  Nvme nvme("nvme", link);
  FixedBackend device(sc_time(1, SC_US));
  FusedAttentionCommand cmd{0, 1 << 20, 0, 4096};
  std::vector<sc_time> done;
  for (int i = 0; i < 2; ++i) nvme.fused_attention(cmd, device.backend(), [&] { done.push_back(sc_core::sc_time_stamp()); });
  sc_core::sc_start();
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0], nvme.fused_attention_time(cmd, sc_time(1, SC_US)));
  // The second command's Q (1 MiB) waits for the first one's: it ends at least one Q occupancy later.
  EXPECT_GE(done[1], done[0] + c.occupancy(1 << 20) - c.occupancy(4) - c.occupancy(64));
  EXPECT_EQ(nvme.fused_commands(), 2u);
}

TEST(Nvme, ConventionalReadAndWriteClosedForms) {
  const LinkConfig c = config_from_text("");
  PcieLink link("link", c);
  Nvme nvme("nvme", link);
  FixedBackend media(sc_time(50, SC_US));
  sc_time read_done, write_done;
  nvme.io_command(Direction::DEVICE_TO_HOST, 131072, Purpose::KV_READ, media.backend(),
                  [&] { read_done = sc_core::sc_time_stamp(); });
  sc_core::sc_start();
  const sc_time expected_read = c.occupancy(4) + c.latency + c.latency + c.occupancy(64) + c.latency +
                                sc_time(50, SC_US) + c.occupancy(131072) + c.occupancy(16) + c.latency +
                                c.interrupt_and_completion;
  EXPECT_EQ(read_done, expected_read);
  EXPECT_EQ(read_done, nvme.io_command_time(Direction::DEVICE_TO_HOST, 131072, sc_time(50, SC_US)));

  const sc_time write_start = sc_core::sc_time_stamp();
  nvme.io_command(Direction::HOST_TO_DEVICE, 4096, Purpose::KV_WRITE, media.backend(),
                  [&] { write_done = sc_core::sc_time_stamp(); });
  sc_core::sc_start();
  EXPECT_EQ(write_done - write_start, nvme.io_command_time(Direction::HOST_TO_DEVICE, 4096, sc_time(50, SC_US)));
  EXPECT_EQ(link.bytes(Direction::DEVICE_TO_HOST, Purpose::KV_READ), 131072u);
  EXPECT_EQ(link.bytes(Direction::HOST_TO_DEVICE, Purpose::KV_WRITE), 4096u);
  EXPECT_EQ(link.bytes(Direction::HOST_TO_DEVICE, Purpose::NVME_COMMAND), 2 * (4u + 64));
  EXPECT_EQ(link.bytes(Direction::DEVICE_TO_HOST, Purpose::NVME_COMPLETION), 2 * 16u);
  EXPECT_EQ(nvme.io_commands(), 2u);
}

TEST(Nvme, IoCommandCountAndOverhead) {
  const LinkConfig c = config_from_text("");
  PcieLink link("link", c);
  Nvme nvme("nvme", link);
  EXPECT_EQ(nvme.io_command_count(0), 0u);
  EXPECT_EQ(nvme.io_command_count(1), 1u);
  EXPECT_EQ(nvme.io_command_count(131072), 1u);
  EXPECT_EQ(nvme.io_command_count(131073), 2u);
  EXPECT_EQ(nvme.io_command_count(1ull << 30), 8192u);
  EXPECT_EQ(nvme.io_overhead_bytes_host_to_device(1ull << 30), 8192u * 68);
  EXPECT_EQ(nvme.io_overhead_bytes_device_to_host(1ull << 30), 8192u * 16);
  FixedBackend media(sc_time(1, SC_US));
  EXPECT_THROW(nvme.io_command(Direction::DEVICE_TO_HOST, 0, Purpose::KV_READ, media.backend(), nullptr),
               std::logic_error);
  EXPECT_THROW(nvme.io_command(Direction::DEVICE_TO_HOST, 131073, Purpose::KV_READ, media.backend(), nullptr),
               std::logic_error);
}

}  // namespace
}  // namespace ispsim::link
