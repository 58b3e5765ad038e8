// Wear: static wear levelling, the endurance limit, lifetime and the erase
// parameters in closed form; the parameters' documentation and checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "common/error.h"
#include "models/ssd/ftl/ftl.h"
#include "models/ssd/ftl/wear.h"
#include "schema/parameter_doc.h"
#include "tests/models/ssd/ftl_test_support.h"

namespace ispsim::ftl {
namespace {

using testing::SmallDrive;

// Most minus least erases over the lines in use.
uint32_t erase_spread(const Ftl& ftl) {
  uint32_t most = 0, least = UINT32_MAX;
  for (uint64_t line = 0; line < ftl.geometry().lines(); ++line) {
    const uint32_t e = ftl.erase_count(line * ftl.geometry().units());
    most = std::max(most, e), least = std::min(least, e);
  }
  return most - least;
}

// A full drive whose first tenth is rewritten over and over: without static
// wear levelling the lines of cold data are never erased.
Ftl hot_and_cold(uint32_t threshold) {
  SmallDrive d;
  d.wear_threshold = threshold;
  Ftl ftl(testing::config(d));
  const uint64_t u = ftl.logical_pages();
  ftl.write(0, u);
  std::mt19937_64 rng(2);
  for (uint64_t i = 0; i < 40 * u; ++i) ftl.write(rng() % (u / 10), 1);
  return ftl;
}

TEST(FtlWear, StaticWearLevellingBoundsTheEraseSpread) {
  const Ftl levelled = hot_and_cold(10);
  EXPECT_GT(levelled.counters().wl_lines, 0u);
  EXPECT_LE(erase_spread(levelled), 11u);
  const Ftl unlevelled = hot_and_cold(1000000);
  EXPECT_EQ(unlevelled.counters().wl_lines, 0u);
  EXPECT_GT(erase_spread(unlevelled), 100u);
}

TEST(FtlWear, LinesAtTheEnduranceLimitRetireUntilTheDriveWearsOut) {
  SmallDrive d;
  d.endurance = 20;
  Ftl ftl(testing::config(d));
  const uint64_t u = ftl.logical_pages();
  std::mt19937_64 rng(4);
  // At most endurance x physical pages host writes fit (WAF >= 1).
  const uint64_t most = 20 * ftl.geometry().physical_pages();
  EXPECT_THROW(
      for (uint64_t i = 0; i <= most; ++i) ftl.write(rng() % u, 1), WornOut);
  EXPECT_GT(ftl.retired_lines(), 0u);
  for (uint64_t block = 0; block < ftl.geometry().blocks(); ++block) {
    EXPECT_LE(ftl.erase_count(block), 20u);
    const bool retired = ftl.line_state(block / ftl.geometry().units()) == Ftl::LineState::kRetired;
    EXPECT_EQ(retired, ftl.erase_count(block) == 20u) << "block " << block;
  }
}

// Defaults: tBERS 15 ms; erase energy = 3.3 V x 20 mA x 15 ms = 0.99 mJ.
// Lifetime of the default 512 GiB drive at WAF 2 and one drive write a day:
// 3000 P/E x 512 GiB / (2 x 512 GiB per day) = 1500 days.
TEST(FtlWear, EraseParametersAndLifetimeInClosedForm) {
  const FtlConfig c = FtlConfig::from_params(schema::resolved(schema::NandParams(), "nand"),
                                             schema::resolved(schema::FtlParams(), "ftl"));
  EXPECT_EQ(c.t_bers_us, 15000.0);
  EXPECT_NEAR(c.erase_energy_j, 0.99e-3, 1e-15);
  const double drive_bytes = double(c.geometry.physical_pages()) * c.geometry.page_bytes;
  EXPECT_EQ(drive_bytes, double(uint64_t{512} << 30));
  EXPECT_DOUBLE_EQ(lifetime_days(c, 2.0, drive_bytes), 1500.0);
  EXPECT_EQ(c.logical_pages(), uint64_t(double(c.geometry.physical_pages()) * 0.93));
  EXPECT_EQ(c.foreground_free_lines(), 6u);   // ceil(0.005 x 1024)
  EXPECT_EQ(c.background_free_lines(), 52u);  // ceil(0.05 x 1024)
}

TEST(FtlWear, TooLittleSpareIsRefusedWithOneLine) {
  SmallDrive d;
  d.spare_factor = 0.01;  // 64 lines of 64 pages: 41 spare pages, GC needs 2 lines
  try {
    testing::config(d);
    FAIL() << "no error";
  } catch (const BadInput& e) {
    EXPECT_EQ(std::string(e.what()),
              "ftl: spare_factor = 0.01 leaves 41 spare pages; GC needs 2 lines of 64 pages (a line is one "
              "block of every plane)");
  }
}

TEST(FtlWear, EveryParameterHasUnitDefaultSourceAndRange) {
  const google::protobuf::Descriptor* d = schema::FtlParams::descriptor();
  for (int i = 0; i < d->field_count(); ++i) {
    const google::protobuf::FieldDescriptor& f = *d->field(i);
    const schema::ParameterDoc doc = schema::parameter_doc(f);
    SCOPED_TRACE(f.name());
    EXPECT_FALSE(doc.doc.empty());
    EXPECT_FALSE(doc.unit.empty());
    EXPECT_FALSE(doc.source.empty());
    EXPECT_TRUE(doc.has_default);
    EXPECT_TRUE(f.has_presence());
    if (f.cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_ENUM &&
        f.cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_BOOL) {
      EXPECT_TRUE(doc.min && doc.max);
    }
  }
}

}  // namespace
}  // namespace ispsim::ftl
