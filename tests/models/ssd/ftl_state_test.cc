// Preconditioning and saved drive states: a round trip restores the drive
// exactly, and a corrupt, foreign or truncated file is refused with one line
// naming it (BadInput: exit code 2 in the CLI).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "common/crc32c.h"
#include "common/error.h"
#include "models/ssd/ftl/drive_state.h"
#include "models/ssd/ftl/precondition.h"
#include "models/ssd/ftl/wear.h"
#include "tests/models/ssd/ftl_test_support.h"

namespace ispsim::ftl {
namespace {

using testing::SmallDrive;
namespace fs = std::filesystem;

class FtlState : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ispsim_ftl_state_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  static std::string read(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
  static void write(const std::string& p, const std::string& bytes) {
    std::ofstream(p, std::ios::binary) << bytes;
  }
  // The error `load` gives for `bytes`.
  std::string load_error(const std::string& bytes) {
    write(path("bad.ftl"), bytes);
    Ftl ftl(testing::config(SmallDrive{}));
    try {
      DriveState::load(ftl, path("bad.ftl"));
    } catch (const BadInput& e) {
      return e.what();
    }
    return "loaded";
  }

  fs::path dir_;
};

// A drive aged by a random mix of writes and TRIMs.
void age(Ftl& ftl, uint64_t seed, uint64_t operations, std::vector<FlashOp>* ops = nullptr) {
  std::mt19937_64 rng(seed);
  const uint64_t u = ftl.logical_pages();
  for (uint64_t i = 0; i < operations; ++i) {
    const uint64_t lpn = rng() % u, count = std::min<uint64_t>(u - lpn, 1 + rng() % 100);
    if (rng() % 4 == 0)
      ftl.trim(lpn, count);
    else
      ftl.write(lpn, count, ops);
  }
}

bool same_ops(const std::vector<FlashOp>& a, const std::vector<FlashOp>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].kind != b[i].kind || a[i].cause != b[i].cause || a[i].first != b[i].first || a[i].count != b[i].count)
      return false;
  return true;
}

TEST_F(FtlState, SaveAndLoadRestoreTheDriveExactly) {
  Ftl original(testing::config(SmallDrive{}));
  age(original, 1, 2000);
  DriveState::save(original, path("aged.ftl"));
  Ftl loaded(testing::config(SmallDrive{}));
  DriveState::load(loaded, path("aged.ftl"));
  for (uint64_t lpn = 0; lpn < original.logical_pages(); ++lpn) ASSERT_EQ(original.lookup(lpn), loaded.lookup(lpn));
  for (uint64_t block = 0; block < original.geometry().blocks(); ++block) {
    ASSERT_EQ(original.erase_count(block), loaded.erase_count(block));
    ASSERT_EQ(original.valid_pages(block), loaded.valid_pages(block));
  }
  EXPECT_EQ(original.counters().programs(), loaded.counters().programs());
  EXPECT_EQ(original.counters().block_erases, loaded.counters().block_erases);
  EXPECT_EQ(original.free_lines(), loaded.free_lines());
  EXPECT_EQ(original.mapping().entries(), loaded.mapping().entries());
  // Both drives then behave identically, operation by operation.
  std::vector<FlashOp> a, b;
  age(original, 2, 500, &a);
  age(loaded, 2, 500, &b);
  EXPECT_TRUE(same_ops(a, b));
  EXPECT_GT(original.counters().gc_lines, 0u);
  // Saving the loaded drive gives the same bytes.
  DriveState::save(original, path("a.ftl"));
  DriveState::save(loaded, path("b.ftl"));
  EXPECT_EQ(read(path("a.ftl")), read(path("b.ftl")));
}

// Lines written at home with pages still free keep them through a save and a
// load: both drives then put the same pages at home and elsewhere alike.
TEST_F(FtlState, HomeLinesKeepTheirFreePagesThroughASaveAndLoad) {
  Ftl original(testing::config(SmallDrive{}));
  original.write(0, 10);
  original.write(40, 1);
  original.write(100, 3);
  DriveState::save(original, path("home.ftl"));
  Ftl loaded(testing::config(SmallDrive{}));
  DriveState::load(loaded, path("home.ftl"));
  std::vector<FlashOp> a, b;
  for (Ftl* f : {&original, &loaded}) {
    std::vector<FlashOp>& ops = f == &original ? a : b;
    f->write(20, 5, &ops);  // at home
    f->write(5, 1, &ops);   // taken: the frontier
    f->write(90, 20, &ops);
  }
  EXPECT_TRUE(same_ops(a, b));
  EXPECT_EQ(*loaded.lookup(20), 20u);
  EXPECT_EQ(*loaded.lookup(109), 109u);
  EXPECT_NE(*loaded.lookup(5), 5u);
  DriveState::save(original, path("a.ftl"));
  DriveState::save(loaded, path("b.ftl"));
  EXPECT_EQ(read(path("a.ftl")), read(path("b.ftl")));
}

TEST_F(FtlState, CorruptForeignAndTruncatedFilesAreRefused) {
  Ftl ftl(testing::config(SmallDrive{}));
  age(ftl, 1, 300);
  DriveState::save(ftl, path("good.ftl"));
  const std::string good = read(path("good.ftl"));
  const std::string where = path("bad.ftl") + ": ";

  std::string flipped = good;
  flipped[flipped.size() / 2] ^= 0x10;
  EXPECT_EQ(load_error(flipped), where + "drive state checksum mismatch (corrupt file)");
  EXPECT_EQ(load_error(good.substr(0, good.size() - 9)), where + "drive state checksum mismatch (corrupt file)");
  EXPECT_EQ(load_error("a text file\n"), where + "not an ispsim drive state (no ISPFTL header)");
  std::string version = good;
  version[8] = 4;
  EXPECT_EQ(load_error(version), where + "drive state version 4, this build reads version 3");

  // A consistent file whose body is cut short: the checksum is right, the body is not.
  std::string cut = good.substr(0, good.size() - 4 - 24);
  const uint32_t crc = crc32c(cut.data(), cut.size());
  for (int i = 0; i < 4; ++i) cut.push_back(char(crc >> (8 * i)));
  EXPECT_EQ(load_error(cut), where + "truncated drive state");

  SmallDrive other;
  other.lines = 32;
  Ftl small(testing::config(other));
  DriveState::save(small, path("small.ftl"));
  EXPECT_EQ(load_error(read(path("small.ftl"))).rfind(where + "drive state of another drive: 2048 physical", 0), 0u);
}

TEST_F(FtlState, AFailedLoadLeavesTheDriveAsItWas) {
  Ftl ftl(testing::config(SmallDrive{}));
  age(ftl, 1, 300);
  const uint64_t programs = ftl.counters().programs();
  const std::optional<uint64_t> first = ftl.lookup(0);
  write(path("bad.ftl"), "junk");
  EXPECT_THROW(DriveState::load(ftl, path("bad.ftl")), BadInput);
  EXPECT_EQ(ftl.counters().programs(), programs);
  EXPECT_EQ(ftl.lookup(0), first);
}

TEST_F(FtlState, ASaveThatCannotBeWrittenLeavesNothing) {
  Ftl ftl(testing::config(SmallDrive{}));
  EXPECT_THROW(DriveState::save(ftl, path("missing/dir/state.ftl")), BadInput);
  EXPECT_THROW(DriveState::save(ftl, dir_.string()), BadInput);  // a directory
  EXPECT_TRUE(fs::is_empty(dir_));
}

// MQSim-style preconditioning of a full drive at spare factor 0.14: the WAF
// settles, and where it settles is the analytic steady state (within 5 %).
TEST_F(FtlState, PreconditioningReachesTheSteadyState) {
  SmallDrive d;
  d.lines = 256, d.pages_per_block = 64, d.spare_factor = 0.14;
  Ftl ftl(testing::config(d));
  const PreconditionReport report = precondition(ftl);
  EXPECT_TRUE(report.settled);
  EXPECT_EQ(report.fill_pages, ftl.logical_pages());
  EXPECT_EQ(ftl.mapping().mapped_pages(), ftl.logical_pages());
  EXPECT_NEAR(report.waf() / greedy_waf_model(0.14), 1.0, 0.05);
  EXPECT_GE(report.window_waf.size(), 3u);
  EXPECT_LT(report.window_waf.front(), report.waf());  // GC starts within the first window
}

// Overwrites in runs of 64 pages: the aged drive's mapping keeps runs, a few
// extents per overwrite at most, not one per page as single-page aging leaves.
TEST_F(FtlState, KvSizedPreconditioningKeepsExtentsLong) {
  SmallDrive d;
  d.lines = 256, d.pages_per_block = 64, d.spare_factor = 0.14;
  Ftl ftl(testing::config(d));
  const PreconditionReport report = precondition(ftl, 64);
  EXPECT_TRUE(report.settled);
  EXPECT_EQ(ftl.mapping().mapped_pages(), ftl.logical_pages());
  EXPECT_EQ(report.overwrite_pages % 64, 0u);
  EXPECT_LT(ftl.mapping().entries(), ftl.logical_pages() / 16);
  EXPECT_GT(report.waf(), 1.0);  // GC ran
}

}  // namespace
}  // namespace ispsim::ftl
