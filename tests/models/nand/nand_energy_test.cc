// NandEnergy: joules from the datasheet-style parameters in nand.proto, exact
// closed forms for the defaults and for overrides, and bad input.
#include "models/nand/nand_energy.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace ispsim::nand {
namespace {

void expect_close(double actual, double expected) { EXPECT_NEAR(actual, expected, 1e-12 * std::abs(expected)); }

TEST(NandEnergy, Defaults) {
  const NandEnergy e = NandEnergy::from_params(schema::resolved(schema::NandParams(), "nand"));
  // 3.3 V x 20 mA x tR 5 us = 0.33 uJ per page read (2.5 pJ per bit of a 16 KiB page).
  expect_close(e.read_j_per_page, 3.3 * 20e-3 * 5e-6);
  // 3.3 V x 20 mA x tPROG 500 us = 33 uJ per page programmed.
  expect_close(e.program_j_per_page, 3.3 * 20e-3 * 500e-6);
  // 7.5 pJ/bit x 8 bits.
  expect_close(e.io_j_per_byte, 60e-12);
  // 3.3 V x 50 uA per die, 8 channels x 4 dies.
  expect_close(e.idle_w_per_die, 165e-6);
  EXPECT_EQ(e.dies, 32u);
  expect_close(e.static_watts(), 32 * 165e-6);
}

TEST(NandEnergy, JoulesScaleWithPagesAndBytes) {
  const NandEnergy e = NandEnergy::from_params(schema::resolved(schema::NandParams(), "nand"));
  expect_close(e.read_joules(1000), 1000 * 0.33e-6);
  expect_close(e.program_joules(3), 3 * 33e-6);
  // One 16 KiB page over the channel: 16384 x 60 pJ = 0.983 uJ.
  expect_close(e.transfer_joules(16384), 16384 * 60e-12);
  EXPECT_EQ(e.read_joules(0), 0.0);
  EXPECT_EQ(e.transfer_joules(0), 0.0);
}

TEST(NandEnergy, FollowsTimingAndOverrides) {
  schema::NandParams p;
  p.set_t_read_us(50);  // a slower TLC sensing costs proportionally more
  p.set_t_prog_us(1000);
  p.set_vcc_v(2.5);
  p.set_read_current_ma(30);
  p.set_program_current_ma(40);
  p.set_standby_current_ua(10);
  p.set_io_energy_pj_per_bit(2);
  p.set_channels(4);
  p.set_dies_per_channel(2);
  const NandEnergy e = NandEnergy::from_params(schema::resolved(p, "nand"));
  expect_close(e.read_j_per_page, 2.5 * 30e-3 * 50e-6);
  expect_close(e.program_j_per_page, 2.5 * 40e-3 * 1000e-6);
  expect_close(e.io_j_per_byte, 16e-12);
  expect_close(e.static_watts(), 8 * 2.5 * 10e-6);
}

TEST(NandEnergy, ZeroCurrentsAreAllowed) {
  // An "energy-free flash" for isolating other components.
  schema::NandParams p;
  p.set_read_current_ma(0);
  p.set_program_current_ma(0);
  p.set_standby_current_ua(0);
  p.set_io_energy_pj_per_bit(0);
  const NandEnergy e = NandEnergy::from_params(schema::resolved(p, "nand"));
  EXPECT_EQ(e.read_joules(10), 0.0);
  EXPECT_EQ(e.program_joules(10), 0.0);
  EXPECT_EQ(e.transfer_joules(10), 0.0);
  EXPECT_EQ(e.static_watts(), 0.0);
}

TEST(NandEnergy, OutOfRangeIsBadInputNamingTheParameter) {
  schema::NandParams p;
  p.set_vcc_v(12);
  try {
    NandEnergy::from_params(schema::resolved(p, "platforms/x.textproto: nand"), "platforms/x.textproto: nand");
    FAIL() << "no exception";
  } catch (const BadInput& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("platforms/x.textproto: nand", 0), 0u) << what;
    EXPECT_NE(what.find("vcc_v"), std::string::npos) << what;
  }
  schema::NandParams q;
  q.set_read_current_ma(-1);
  EXPECT_THROW(NandEnergy::from_params(schema::resolved(q, "nand")), BadInput);
}

}  // namespace
}  // namespace ispsim::nand
