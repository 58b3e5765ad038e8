// The extent map: merging, splitting, unmapping, and its size after a
// sequential fill of a 1 TB drive.
#include <gtest/gtest.h>

#include "models/ssd/ftl/ftl.h"
#include "models/ssd/ftl/mapping.h"
#include "tests/models/ssd/ftl_test_support.h"

namespace ispsim::ftl {
namespace {

std::vector<PageRun> runs(const MappingTable& m) {
  std::vector<PageRun> out;
  m.for_each([&](const PageRun& r) { out.push_back(r); });
  return out;
}

bool same(const std::vector<PageRun>& a, const std::vector<PageRun>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].lpn != b[i].lpn || a[i].ppn != b[i].ppn || a[i].count != b[i].count) return false;
  return true;
}

TEST(FtlExtentMap, ContiguousRunsMergeIntoOneExtent) {
  ExtentMap m;
  std::vector<PageRun> replaced;
  m.map({0, 100, 10}, replaced);
  m.map({10, 110, 5}, replaced);  // continues both the logical and the physical run
  m.map({20, 115, 5}, replaced);  // physically next, logically not: a new extent
  EXPECT_TRUE(replaced.empty());
  EXPECT_TRUE(same(runs(m), {{0, 100, 15}, {20, 115, 5}}));
  EXPECT_EQ(m.mapped_pages(), 20u);
  EXPECT_EQ(m.entries(), 2u);
}

TEST(FtlExtentMap, OverwriteSplitsAndReportsWhatItReplaced) {
  ExtentMap m;
  std::vector<PageRun> replaced;
  m.map({0, 100, 10}, replaced);
  m.map({4, 500, 2}, replaced);
  EXPECT_TRUE(same(replaced, {{4, 104, 2}}));
  EXPECT_TRUE(same(runs(m), {{0, 100, 4}, {4, 500, 2}, {6, 106, 4}}));
  EXPECT_EQ(m.mapped_pages(), 10u);
  // Writing the old pages back makes the three extents one again.
  replaced.clear();
  m.map({4, 104, 2}, replaced);
  EXPECT_TRUE(same(runs(m), {{0, 100, 10}}));
}

TEST(FtlExtentMap, UnmapLeavesAGapThatSegmentReports) {
  ExtentMap m;
  std::vector<PageRun> removed;
  m.map({0, 0, 10}, removed);
  m.unmap(3, 4, removed);
  EXPECT_TRUE(same(removed, {{3, 3, 4}}));
  const Segment gap = m.segment(3);
  EXPECT_FALSE(gap.mapped);
  EXPECT_EQ(gap.run.count, 4u);  // pages 3..6 up to the extent at 7
  const Segment after = m.segment(8);
  EXPECT_TRUE(after.mapped);
  EXPECT_EQ(after.run.lpn, 7u);
  EXPECT_EQ(after.run.ppn, 7u);
  EXPECT_EQ(m.segment(10).run.count, UINT64_MAX - 10);  // nothing follows
  EXPECT_EQ(m.mapped_pages(), 6u);
}

// segment() finds its extent from the last one's when the pages go on in
// order: every lookup, in order, backwards and by jumps, between random changes,
// equals one found from the listing of the extents.
TEST(FtlExtentMap, SegmentsFoundFromTheLastOneEqualTheListing) {
  ExtentMap m;
  std::vector<PageRun> scratch;
  auto expected = [&](uint64_t lpn) {
    const std::vector<PageRun> all = runs(m);
    for (size_t i = 0; i < all.size(); ++i) {
      if (lpn < all[i].lpn) return Segment{false, PageRun{lpn, 0, all[i].lpn - lpn}};
      if (lpn < all[i].lpn + all[i].count) return Segment{true, all[i]};
    }
    return Segment{false, PageRun{lpn, 0, UINT64_MAX - lpn}};
  };
  uint64_t state = 7;
  auto next = [&] { return (state = state * 6364136223846793005u + 1442695040888963407u) >> 33; };
  for (int change = 0; change < 200; ++change) {
    const uint64_t lpn = next() % 200, count = 1 + next() % 12;
    if (change % 3 == 2) {
      m.unmap(lpn, count, scratch);
    } else {
      m.map({lpn, 1000 + next() % 500, count}, scratch);
    }
    std::vector<uint64_t> order;
    for (uint64_t x = 0; x < 220; ++x) order.push_back(x);       // in order
    for (uint64_t x = 220; x-- > 0;) order.push_back(x);         // backwards
    for (int k = 0; k < 50; ++k) order.push_back(next() % 220);  // jumps
    for (uint64_t x : order) {
      const Segment got = m.segment(x), want = expected(x);
      ASSERT_EQ(got.mapped, want.mapped) << x;
      ASSERT_EQ(got.run.lpn, want.run.lpn) << x;
      ASSERT_EQ(got.run.ppn, want.run.ppn) << x;
      ASSERT_EQ(got.run.count, want.run.count) << x;
    }
  }
}

// A sequential fill of a 1 TB drive (the default NAND geometry with 2048
// blocks per plane: 64 planes x 2048 blocks x 512 pages x 16 KiB = 1 TiB) is
// one extent: the memory of the mapping grows with the runs written, not with
// the 62 M logical pages. The device's page-level table is still reported at
// its full size (4 bytes per logical page).
TEST(FtlExtentMap, SequentialFillOfOneTerabyteIsOneExtent) {
  schema::NandParams nand;
  nand.set_blocks_per_plane(2048);
  const FtlConfig config =
      FtlConfig::from_params(schema::resolved(nand, "nand"), schema::resolved(schema::FtlParams(), "ftl"));
  ASSERT_EQ(config.geometry.physical_pages() * config.geometry.page_bytes, uint64_t{1} << 40);
  Ftl ftl(config);
  ftl.write(0, ftl.logical_pages());
  EXPECT_EQ(ftl.mapping().mapped_pages(), ftl.logical_pages());
  EXPECT_EQ(ftl.mapping().entries(), 1u);
  EXPECT_LT(ftl.mapping().memory_bytes(), 1024u);
  EXPECT_EQ(ftl.mapping_table_bytes(), ftl.logical_pages() * 4);
  EXPECT_EQ(ftl.counters().block_erases, 0u);
}

}  // namespace
}  // namespace ispsim::ftl
